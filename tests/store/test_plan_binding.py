"""Approvals bind to the plan version (`store.derivation.plan_binding`), everywhere it matters.

One table of plan changes, checked through each user of the rule: the pure function,
the derived request status (and the pending count), the review behind the HUD's request
screen and `hud decide`, and `authorize()` at commit time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from store.derivation.derive import RequestStatus, request_binding, request_status
from store.derivation.plan_binding import STALE_RULES, plan_binding
from store.format.records import Plan, validate
from store.format.row import MissionStatus
from store.index.approval_checks import approval_queue, refusal, review
from store.index.workspace import Workspace
from store.writers.agent import AgentWriter, authorize
from tests.factory import T0, Mission, line_bytes, mission, stamp

NOW = T0 + timedelta(minutes=1)

FETCH: dict[str, Any] = {"id": "fetch", "title": "Fetch logs", "risk": "read_only"}
METRICS: dict[str, Any] = {"id": "metrics", "title": "Query metrics", "effect": "reads prometheus"}
DEPLOY: dict[str, Any] = {
    "id": "deploy",
    "title": "Deploy",
    "risk": "external_write",
    "needs_approval": True,
    "effect": "ships to prod",
    "recovery": "roll back",
}
V1: list[dict[str, Any]] = [FETCH, METRICS, DEPLOY]
LINT: dict[str, Any] = {"id": "lint", "title": "Lint the config"}
DROP: dict[str, Any] = {"id": "drop", "title": "Drop the old table", "risk": "irreversible"}


def edit(step: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**step, **fields}


def without(steps: list[dict[str, Any]], step_id: str) -> list[dict[str, Any]]:
    return [s for s in steps if s["id"] != step_id]


def replace(steps: list[dict[str, Any]], new: dict[str, Any]) -> list[dict[str, Any]]:
    return [new if s["id"] == new["id"] else s for s in steps]


GARBAGE = None
"""In `later`, a version whose file holds bytes that do not load."""


@dataclass(frozen=True)
class Case:
    name: str
    later: list[list[dict[str, Any]] | None]
    """Plan versions 2, 3, ... (v1 is V1); None: that version's file does not load."""
    rule: str | None
    says: tuple[str, ...] = ()
    """Words the sentence must hold (step, fields, versions)."""
    step: str = "metrics"
    own_version: str = "ok"
    """`ok`, `missing` (no plan/v1.json) or `garbage` (v1 does not load)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        return self.rule in STALE_RULES


CASES = [
    Case(
        "step-removed",
        [without(V1, "metrics")],
        "step-removed",
        ("'metrics'", "plan v1", "plan v2"),
    ),
    Case(
        "tool-changed (the step's effect)",
        [replace(V1, edit(METRICS, effect="reads prometheus and writes grafana"))],
        "step-changed",
        ("'metrics'", "effect", "v1", "v2"),
    ),
    Case(
        "risk-changed",
        [replace(V1, edit(METRICS, risk="external_write"))],
        "step-changed",
        ("'metrics'", "risk read_only -> external_write", "v2"),
    ),
    Case(
        "needs_approval-changed",
        [replace(V1, edit(METRICS, needs_approval=True))],
        "step-changed",
        ("needs_approval false -> true",),
    ),
    Case(
        "title-changed",
        [replace(V1, edit(METRICS, title="Query metrics in every region"))],
        "step-changed",
        ("'metrics'", "title"),
    ),
    Case(
        "effectful-step-added",
        [[*V1, DROP]],
        "effectful-step-added",
        ("plan v2 adds step 'drop' (irreversible)", "plan v1"),
    ),
    Case(
        "effectful-step-changed elsewhere",
        [replace(V1, edit(DEPLOY, recovery="none"))],
        "effectful-step-changed",
        ("plan v2 changes step 'deploy' (external_write) (recovery)",),
    ),
    Case(
        "effectful-step-removed elsewhere",
        [without(V1, "deploy")],
        "effectful-step-removed",
        ("plan v2 drops step 'deploy' (external_write)",),
    ),
    Case(
        "an effectful request step changed in a field that does not bind",
        [replace(V1, edit(DEPLOY, recovery="restore the snapshot"))],
        "effectful-step-changed",
        ("'deploy'", "recovery"),
        step="deploy",
    ),
    Case(
        "read-only step added only",
        [[*V1, LINT]],
        "read-only-change",
        ("v2 adds 'lint' (read_only)", "plan v1 is not the latest (v2)"),
    ),
    Case(
        "read-only step changed only",
        [replace(V1, edit(FETCH, title="Fetch every log"))],
        "read-only-change",
        ("v2 changes 'fetch' (title)",),
    ),
    Case(
        "read-only step removed only",
        [without(V1, "fetch")],
        "read-only-change",
        ("v2 drops 'fetch' (read_only)",),
    ),
    Case(
        "the request's read-only step, in a field that does not bind",
        [replace(V1, edit(METRICS, verification="numbers match the dashboard"))],
        "read-only-change",
        ("v2 changes 'metrics' (verification)",),
    ),
    Case(
        "several versions: an effectful step added in between, dropped again",
        [[*V1, LINT], [*V1, LINT, DROP], [*V1, LINT]],
        "effectful-step-added",
        ("plan v3 adds step 'drop'", "plan v4"),
    ),
    Case(
        "several versions: the step removed in the latest",
        [[*V1, LINT], without([*V1, LINT], "metrics")],
        "step-removed",
        ("'metrics'", "plan v3, the latest"),
    ),
    Case(
        "several versions, read-only changes only",
        [[*V1, LINT], replace([*V1, LINT], edit(FETCH, title="Fetch all")), [*V1, LINT]],
        "read-only-change",
        ("v2 adds 'lint'", "v3 changes 'fetch' (title)", "(v4)"),
    ),
    Case(
        "the request's own version missing",
        [V1],
        "plan-missing",
        ("plan v1", "is missing"),
        own_version="missing",
    ),
    Case(
        "the request's own version does not load",
        [V1],
        "plan-missing",
        ("plan v1", "does not load"),
        own_version="garbage",
    ),
    Case(
        "a version in between does not load",
        [GARBAGE, [*V1, LINT]],
        "plan-unreadable",
        ("plan v2 does not load",),
    ),
    Case("no newer version", [], None),
    Case("a newer version that changes no step", [V1], None, ("no step changed since",)),
]
IDS = [case.name for case in CASES]


def plan_bytes(version: int, steps: list[dict[str, Any]]) -> bytes:
    data: dict[str, Any] = {
        "schema": 1,
        "version": version,
        "created_at": stamp(T0),
        "author": "agent",
        "steps": steps,
        "assumptions": [f"assumption of v{version}"],
    }
    if version > 1:
        data["reason"] = f"re-plan {version}"
    return line_bytes(data)


def write_plan(built: Mission, version: int, steps: list[dict[str, Any]] | None) -> None:
    path = built.dir / "plan" / f"v{version}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b'{"schema": 1, "version": ' if steps is None else plan_bytes(version, steps))


def build(root: Path, case: Case, *, decide_first: bool = False) -> Mission:
    """Mission `m` with plan v1, request r1 for the case's step, then the later versions.

    With `decide_first`, r1 is approved before the plan changes."""
    built = mission(root, "m")
    write_plan(built, 1, V1)
    built.request("r1", step=case.step, tool="promql", args={"q": "up"}, risk="read_only")
    if decide_first:
        built.decision("r1", "approve", valid_until=stamp(T0 + timedelta(hours=1)))
    for version, steps in enumerate(case.later, start=2):
        write_plan(built, version, steps)
    if case.own_version == "missing":
        (built.dir / "plan" / "v1.json").unlink()
    elif case.own_version == "garbage":
        write_plan(built, 1, None)
    return built


def scan(root: Path) -> Workspace:
    workspace = Workspace(root, clock=lambda: NOW)
    workspace.scan()
    return workspace


def records(case: Case) -> dict[int, Plan | None]:
    plans: dict[int, Plan | None] = {}
    if case.own_version == "ok":
        plans[1] = validate(Plan, json.loads(plan_bytes(1, V1)))
    elif case.own_version == "garbage":
        plans[1] = None
    for version, steps in enumerate(case.later, start=2):
        plans[version] = (
            None if steps is None else validate(Plan, json.loads(plan_bytes(version, steps)))
        )
    return plans


# ---- the pure function -------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_rule(case: Case) -> None:
    binding = plan_binding(records(case), 1, case.step)
    assert binding.rule == case.rule
    assert binding.stale is case.stale
    assert binding.notice is (case.rule == "read-only-change")
    for words in case.says:
        assert words in binding.message
    if case.stale:
        assert binding.reason.startswith(f"stale ({case.rule}): ")
    assert (binding.plan_version, binding.latest_version) == (1, 1 + len(case.later))


def test_only_versions_after_the_request_count() -> None:
    """A request on v2 is not stale for what v2 changed against v1."""
    plans = {
        1: validate(Plan, json.loads(plan_bytes(1, V1))),
        2: validate(Plan, json.loads(plan_bytes(2, without(V1, "metrics")))),
        3: validate(Plan, json.loads(plan_bytes(3, without(V1, "metrics")))),
    }
    binding = plan_binding(plans, 2, "fetch")
    assert binding.rule is None and not binding.stale
    assert plan_binding(plans, 3, "fetch").message == ""


def test_agent_text_in_step_ids_is_quoted() -> None:
    """Step ids are agent text: the sentence shows them as Python literals, escaped."""
    hostile = edit(METRICS, id="m\u202ex")
    plans = {
        1: validate(Plan, json.loads(plan_bytes(1, [FETCH, hostile]))),
        2: validate(Plan, json.loads(plan_bytes(2, [FETCH]))),
    }
    binding = plan_binding(plans, 1, "m\u202ex")
    assert binding.rule == "step-removed"
    assert "\u202e" not in binding.message and "'m\\u202ex'" in binding.message


# ---- derived status and counts --------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_request_status(tmp_path: Path, case: Case) -> None:
    build(tmp_path, case)
    workspace = scan(tmp_path)
    state = workspace.missions["m"]
    assert request_binding(state, "r1").rule == case.rule
    expected = RequestStatus.STALE if case.stale else RequestStatus.PENDING
    assert request_status(state, "r1", NOW) is expected
    # a stale request is not pending: not in the header's count, not in the queue
    assert workspace.pending_requests() == ([] if case.stale else [("m", "r1")])
    queue = approval_queue(workspace, NOW)
    assert [item.request_id for item in queue] == ([] if case.stale else ["r1"])
    everything = approval_queue(workspace, NOW, everything=True)
    assert [(i.status, i.binding.rule) for i in everything] == [(expected, case.rule)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_approval_given_before_the_plan_changed(tmp_path: Path, case: Case) -> None:
    build(tmp_path, case, decide_first=True)
    state = scan(tmp_path).missions["m"]
    expected = RequestStatus.STALE if case.stale else RequestStatus.APPROVED
    assert request_status(state, "r1", NOW) is expected


def test_a_stale_request_alone_does_not_make_the_mission_need_you(tmp_path: Path) -> None:
    case = CASES[0]
    built = build(tmp_path, case)
    built.step("fetch", "running", plan_version=2)
    workspace = scan(tmp_path)
    assert workspace.status("m") is MissionStatus.RUNNING  # not needs_you
    assert workspace.pending_requests() == []


# ---- review: the HUD's request screen and `hud decide` -------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_review(tmp_path: Path, case: Case) -> None:
    build(tmp_path, case)
    checked = review(scan(tmp_path).missions["m"], "r1", NOW)
    assert checked.binding.rule == case.rule
    if case.stale:
        assert not checked.can_approve and not checked.can_reject
        assert checked.plan_stale and not checked.digest_changed
        blocker = next(b for b in checked.blockers if b.startswith("stale ("))
        assert blocker.startswith(f"stale ({case.rule}): ")
        for words in case.says:
            assert words in blocker
        problem = refusal(checked, "approve", "")
        assert problem is not None and f"stale ({case.rule})" in problem
        assert checked.changes is None  # no field-level diff: the request did not change
        return
    assert checked.status is RequestStatus.PENDING and not checked.plan_stale
    if case.own_version == "ok":
        assert checked.can_approve, checked.blockers
        assert refusal(checked, "approve", "") is None
    if case.rule == "read-only-change":
        notice = next(w for w in checked.warnings if w.startswith("notice (read-only-change): "))
        for words in case.says:
            assert words in notice
    elif case.says:
        assert any(all(w in warning for w in case.says) for warning in checked.warnings)
    else:
        assert not any("latest" in w for w in checked.warnings)


def test_review_of_a_decided_request_names_the_rule(tmp_path: Path) -> None:
    build(tmp_path, CASES[0], decide_first=True)
    checked = review(scan(tmp_path).missions["m"], "r1", NOW)
    assert checked.status is RequestStatus.STALE and checked.plan_stale
    assert checked.blockers[0].startswith("stale (step-removed): step 'metrics'")
    assert checked.changes is None and checked.previous is None


def test_a_changed_request_stays_digest_stale(tmp_path: Path) -> None:
    """The request changed after its decision: the digest rule still speaks first."""
    built = build(tmp_path, CASES[0], decide_first=True)
    built.request("r1", step="metrics", tool="promql", args={"q": "down"}, risk="read_only")
    checked = review(scan(tmp_path).missions["m"], "r1", NOW)
    assert checked.status is RequestStatus.STALE and checked.digest_changed
    assert not checked.plan_stale
    assert checked.blockers[0].startswith("stale: changed since it was decided")
    assert any(b.startswith("stale (step-removed)") for b in checked.blockers)


# ---- authorize: the agent, at commit time -----------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_authorize_refuses_an_approval_whose_plan_no_longer_holds(
    tmp_path: Path, case: Case
) -> None:
    build(tmp_path, case, decide_first=True)
    auth = authorize(tmp_path, "m", "r1", now=NOW)
    if case.stale:
        assert not auth.ok
        assert auth.reason.startswith(f"stale ({case.rule}): ")
        for words in case.says:
            assert words in auth.reason
    else:
        assert auth.ok, auth.reason


@pytest.mark.parametrize("case", [c for c in CASES if c.stale], ids=lambda c: c.name)
def test_authorize_and_review_agree(tmp_path: Path, case: Case) -> None:
    """One rule: the agent's refusal is the sentence the approver reads."""
    build(tmp_path, case)
    checked = review(scan(tmp_path).missions["m"], "r1", NOW)
    auth = authorize(tmp_path, "m", "r1", now=NOW)
    assert not auth.ok and auth.reason in checked.blockers


def test_authorize_an_undecided_stale_request(tmp_path: Path) -> None:
    """The agent learns its request can no longer be decided (not just "not decided")."""
    build(tmp_path, CASES[0])
    assert authorize(tmp_path, "m", "r1", now=NOW).reason.startswith("stale (step-removed)")


def test_start_approved_attempt_refuses_and_records_nothing(tmp_path: Path) -> None:
    build(tmp_path, CASES[0], decide_first=True)
    writer = AgentWriter(tmp_path, "m", "agent", clock=lambda: NOW)
    auth, event = writer.start_approved_attempt("r1", 1, now=NOW)
    assert not auth.ok and event is None
    events = tmp_path / "missions/m/events.jsonl"
    assert not events.exists() or events.read_bytes() == b""


def test_an_approval_already_used_stays_approved(tmp_path: Path) -> None:
    """It ran under the plan that held then; a later plan does not rewrite that."""
    built = mission(tmp_path, "m")
    write_plan(built, 1, V1)
    built.request("r1", step="metrics", tool="promql", args={"q": "up"}, risk="read_only")
    built.decision("r1", "approve", valid_until=stamp(T0 + timedelta(hours=1)))
    writer = AgentWriter(tmp_path, "m", "agent", clock=lambda: NOW)
    auth, event = writer.start_approved_attempt("r1", 1, now=NOW)
    assert auth.ok and event is not None
    write_plan(built, 2, without(V1, "metrics"))
    state = scan(tmp_path).missions["m"]
    assert request_status(state, "r1", NOW) is RequestStatus.APPROVED
    assert authorize(tmp_path, "m", "r1", now=NOW).reason.startswith("already used")


def test_authorize_refuses_when_the_plan_folder_is_a_symlink(tmp_path: Path) -> None:
    build(tmp_path, CASES[-1], decide_first=True)  # a newer version that changes no step
    plan = tmp_path / "missions/m/plan"
    elsewhere = tmp_path / "elsewhere"
    plan.rename(elsewhere)
    plan.symlink_to(elsewhere)
    auth = authorize(tmp_path, "m", "r1", now=NOW)
    assert not auth.ok and auth.reason.startswith("cannot tell whether the plan changed")
