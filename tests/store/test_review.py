"""The plan review: each question and failure mode, pass, fail or unknown, from records
built for the purpose; each answer cites the records that decide it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from store.analysis.review import FAILURE_MODES, QUESTIONS, Answer, PlanReview, review
from store.index.workspace import Workspace
from tests.factory import T0, Mission, chain, line_bytes, mission, stamp

Build = Callable[[Mission], Any]
HEARTBEAT = {"type": "heartbeat", "actor": "a", "at": stamp(T0)}
EFFECTFUL = [
    {"id": "s1", "title": "deploy", "risk": "external_write", "recovery": "roll back"},
    {"id": "s2", "title": "check"},
]


def review_of(built: Mission, version: int | None = None) -> PlanReview:
    workspace = Workspace(built.root)
    workspace.scan()
    return review(workspace.missions[built.id], version)


def answer(built: Mission, key: str, version: int | None = None) -> Answer:
    return next(a for a in review_of(built, version).answers if a.key == key)


@pytest.fixture
def m(tmp_path: Path) -> Mission:
    return mission(tmp_path, "m")


def check(m: Mission, key: str, build: Build, verdict: str, says: str) -> Answer:
    build(m)
    found = answer(m, key)
    assert found.verdict == verdict, found
    assert says in found.reason + " ".join(c.note for c in found.cites), found
    return found


def planned(m: Mission, steps: list[dict[str, Any]] | None, number: int = 1, **fields: Any) -> None:
    """Plan v`number` with these steps and fields (the factory's plan takes step ids, and
    the version from its file name)."""
    m.plan(number)
    path = m.dir / f"plan/v{number}.json"
    data = {**json.loads(path.read_bytes()), **fields}
    path.write_bytes(line_bytes({**data, "steps": steps} if steps is not None else data))


def effectful(m: Mission, steps: list[dict[str, Any]] = EFFECTFUL) -> None:
    planned(m, steps)


def attempt(m: Mission, actor: str = "agent", **fields: Any) -> None:
    values = {"step": "s1", "attempt": 1, "phase": "started", "tool": "deploy"}
    values.update({"args": {"target": "prod"}, "effect_possible": True, **fields})
    m.append("events", type="attempt", actor=actor, **values)


def test_the_questions_come_in_order_then_the_failure_modes(m: Mission) -> None:
    workspace = Workspace(m.root)
    workspace.scan()
    found = review(workspace.missions["m"])
    assert [a.key for a in found.questions] == list(QUESTIONS)
    assert [a.key for a in found.failure_modes] == list(FAILURE_MODES)
    assert (found.plan_version, found.latest_version) == (1, 1)


def test_a_version_that_is_not_there(m: Mission) -> None:
    workspace = Workspace(m.root)
    workspace.scan()
    with pytest.raises(KeyError):
        review(workspace.missions["m"], 2)


# ---- 1. objective ------------------------------------------------------------------------

GOOD_INTENT = {"success_evidence": ["tests pass"], "non_goals": ["no refactor"]}


@pytest.mark.parametrize(
    ("fields", "verdict", "says"),
    [
        (GOOD_INTENT, "pass", "explicit non-goals"),
        ({**GOOD_INTENT, "non_goals": []}, "fail", "non_goals"),
        ({**GOOD_INTENT, "success_evidence": []}, "fail", "success_evidence"),
        ({**GOOD_INTENT, "objective": "do a\nand b"}, "fail", "not one statement"),
        ({**GOOD_INTENT, "objective": " "}, "fail", "no objective"),
    ],
)
def test_objective(m: Mission, fields: dict[str, Any], verdict: str, says: str) -> None:
    found = check(m, "objective", lambda m: m.intent("Work", **fields), verdict, says)
    assert all(c.path == "missions/m/intent.toml" for c in found.cites)


def test_objective_without_an_intent_is_unknown(m: Mission) -> None:
    check(m, "objective", lambda m: (m.dir / "intent.toml").unlink(), "unknown", "missing")


# ---- 2. the exact plan ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (lambda m: m.request("r1") and m.decision("r1"), "pass", "1 requests"),
        (lambda m: m.request("r1", step="zz"), "fail", "step 'zz' is not in the plan"),
        (
            lambda m: m.request("r1") and m.decision("r1", digest="sha256:" + "0" * 64),
            "fail",
            "other bytes",
        ),
        (lambda m: planned(m, None, version=2, reason="renumbered"), "fail", "says version 2"),
        (lambda m: (m.dir / "plan/v1.json").write_text("{"), "fail", "does not load"),
        (lambda m: m.request("r1") and m.plan(2), "pass", "plan v2, 0 requests"),
    ],
)
def test_exact_plan(m: Mission, build: Build, verdict: str, says: str) -> None:
    check(m, "exact-plan", build, verdict, says)


def test_exact_plan_without_a_plan_is_unknown(tmp_path: Path) -> None:
    bare = Mission(tmp_path, "m").intent()
    check(bare, "exact-plan", lambda m: None, "unknown", "no plan")


# ---- 3. risk and recovery --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "verdict", "says"),
    [
        ([{"id": "s1", "title": "read"}], "pass", "no step has effects"),
        (EFFECTFUL, "pass", "s1: roll back"),
        (
            [{"id": "s1", "title": "x", "risk": "irreversible"}],
            "fail",
            "s1 (irreversible): no recovery",
        ),
        ([{"id": "s1", "title": "x", "effect": "deletes rows"}], "fail", "an effect but no risk"),
    ],
)
def test_risk_and_recovery(m: Mission, steps: list[Any], verdict: str, says: str) -> None:
    found = check(m, "risk-recovery", lambda m: planned(m, steps), verdict, says)
    assert all(c.line == 1 for c in found.cites)  # the factory writes a plan on one line


def test_risk_and_recovery_of_an_earlier_version(m: Mission) -> None:
    effectful(m)
    planned(m, [{"id": "s1", "title": "x", "risk": "irreversible"}], 2)
    assert answer(m, "risk-recovery").verdict == "fail"
    assert answer(m, "risk-recovery", version=1).verdict == "pass"


# ---- 4. approvals bound to the action ------------------------------------------------------------


def approved(m: Mission, **decision: Any) -> None:
    effectful(m)
    m.step("s1", "running")
    m.request("r1")
    m.decision("r1", **decision)


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (lambda m: (approved(m), attempt(m, approval="r1")), "pass", "ran deploy as approved"),
        (
            lambda m: (approved(m), attempt(m, approval="r1", args={"target": "dev"})),
            "fail",
            "other arguments",
        ),
        (
            lambda m: (
                approved(m, decided_at=stamp(T0 + timedelta(hours=1))),
                attempt(m, approval="r1"),
            ),
            "fail",
            "before request r1 was decided",
        ),
        (
            lambda m: (approved(m, valid_until=stamp(T0)), attempt(m, approval="r1")),
            "fail",
            "expired",
        ),
        (
            lambda m: (approved(m, decision="reject"), attempt(m, approval="r1")),
            "fail",
            "not approved",
        ),
        (lambda m: (effectful(m), m.step("s1", "running"), attempt(m)), "fail", "no approval"),
        (
            lambda m: (
                m.constraints(approval={"auto": ["external_write"]}),
                effectful(m, steps=[{**EFFECTFUL[0], "needs_approval": False}]),
                m.step("s1", "running"),
                attempt(m),
            ),
            "unknown",
            "no approved action",
        ),
        (lambda m: effectful(m), "unknown", "no approved action"),
    ],
)
def test_bound_approvals(m: Mission, build: Build, verdict: str, says: str) -> None:
    check(m, "bound-approvals", build, verdict, says)


# ---- 5. resuming -----------------------------------------------------------------------------


def finished(m: Mission, outcome: str, **fields: Any) -> None:
    attempt(m, phase="finished", outcome=outcome, **fields)


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "unknown", idempotency_key="k1"),
            ),
            "pass",
            "outcome unknown, key 'k1'",
        ),
        (lambda m: attempt(m), "fail", "outcome not recorded, no idempotency key"),
        (lambda m: (attempt(m), finished(m, "error")), "pass", "outcome error"),
        (
            lambda m: (
                attempt(m, idempotency_key="k1"),
                attempt(m, attempt=2, idempotency_key="k2"),
            ),
            "fail",
            "may have had its effect",
        ),
        (lambda m: attempt(m, effect_possible=False), "unknown", "has run an effect"),
        (  # seed 004: completed work redone after a restart, under a new key
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "ok"),
                attempt(m, attempt=2, idempotency_key="k2"),
                finished(m, "ok", attempt=2),
            ),
            "fail",
            "attempt 2 does again what attempt 1 (line 1) did",
        ),
        (  # the same key: the tool deduplicates it
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "ok"),
                attempt(m, attempt=2, idempotency_key="k1"),
                finished(m, "ok", attempt=2),
            ),
            "pass",
            "key 'k1'",
        ),
        (  # other args: other work
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "ok"),
                attempt(m, attempt=2, idempotency_key="k2", args={"target": "dev"}),
                finished(m, "ok", attempt=2),
            ),
            "pass",
            "key 'k2'",
        ),
    ],
)
def test_safe_resume(m: Mission, build: Build, verdict: str, says: str) -> None:
    effectful(m)
    check(m, "safe-resume", build, verdict, says)


# ---- 6. independent evidence -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (
            lambda m: (m.evidence("s1", observer="ci"), m.step("s1", "succeeded")),
            "pass",
            "observed by ci",
        ),
        (
            lambda m: (
                m.evidence("s1", artifact=m.artifact("out.txt", b"ok\n")),
                m.step("s1", "succeeded"),
            ),
            "pass",
            "artifact checked",
        ),
        (lambda m: m.succeed("s1"), "fail", "the agent's own word"),
        (
            lambda m: (m.evidence("s1", observer="agent"), m.step("s1", "succeeded")),
            "fail",
            "own word",
        ),
        (lambda m: m.step("s1", "succeeded"), "fail", "succeeded without evidence"),
        (lambda m: m.step("s1", "running"), "unknown", "no step"),
    ],
)
def test_independent_evidence(m: Mission, build: Build, verdict: str, says: str) -> None:
    check(m, "independent-evidence", build, verdict, says)


def test_evidence_whose_artifact_changed_is_not_independent(m: Mission) -> None:
    m.evidence("s1", artifact=m.artifact("out.txt", b"ok\n"))
    m.step("s1", "succeeded")
    (m.dir / "artifacts/out.txt").write_bytes(b"changed\n")
    assert answer(m, "independent-evidence").verdict == "fail"


# ---- 7. no new authority ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (lambda m: None, "unknown", "nothing has run"),
        (lambda m: m.step("s1", "running"), "fail", "no handoff.json"),
        (
            lambda m: (m.step("s1", "running"), m.handoff(resume_after_seq=5)),
            "fail",
            "the log ends at 1",
        ),
        (lambda m: (m.step("s1", "running"), m.handoff(plan_version=3)), "fail", "names plan v3"),
        (
            lambda m: (m.step("s1", "running"), m.handoff(resume_after_seq=1)),
            "pass",
            "actors: agent",
        ),
        (
            lambda m: (
                effectful(m),
                m.step("s1", "running"),
                m.handoff(resume_after_seq=1),
                attempt(m, actor="other"),
            ),
            "fail",
            "other ran deploy on s1 with no approval",
        ),
        (
            lambda m: (
                approved(m),
                m.handoff(),
                attempt(m, approval="r1"),
                attempt(m, "b", approval="r1"),
            ),
            "fail",
            "approval r1 used before",
        ),
    ],
)
def test_no_new_authority(m: Mission, build: Build, verdict: str, says: str) -> None:
    check(m, "no-new-authority", build, verdict, says)


# ---- failure modes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (lambda m: (m.succeed("s1"), m.succeed("s1")), "fail", "succeeded again under plan v1"),
        (
            lambda m: (m.succeed("s1"), m.plan(2), m.evidence("s1"), m.step("s1", "succeeded", 2)),
            "pass",
            "no step succeeded twice",
        ),
    ],
)
def test_repeated_work(m: Mission, build: Build, verdict: str, says: str) -> None:
    check(m, "repeated-work", build, verdict, says)


def test_an_effect_redone_under_a_new_key_is_repeated_work(m: Mission) -> None:
    effectful(m)
    attempt(m, idempotency_key="k1")
    finished(m, "ok")
    attempt(m, attempt=2, idempotency_key="k2")
    found = answer(m, "repeated-work")
    assert found.verdict == "fail"
    assert [(c.line, c.note.split(":")[0]) for c in found.cites] == [(3, "s1")]


def test_an_answer_cites_only_attempts_of_the_version_under_review(m: Mission) -> None:
    """`hud review --version 1` cited an attempt that ran under v2."""
    effectful(m)
    planned(m, EFFECTFUL, 2, reason="again")
    m.step("s1", "running", 1)
    attempt(m, idempotency_key="k1")  # line 2: under v1, never finished
    m.step("s1", "running", 2)
    attempt(m, attempt=2, idempotency_key="k2")  # line 4: under v2, another key
    v1 = {a.key: a for a in review_of(m, 1).answers}
    v2 = {a.key: a for a in review_of(m, 2).answers}
    assert v1["safe-resume"].verdict == "pass"
    assert [c.line for c in v1["safe-resume"].cites] == [2]
    assert v2["safe-resume"].verdict == "fail"
    assert {c.line for c in v2["safe-resume"].cites} == {4}
    assert v1["runaway-loop"].verdict == "unknown"  # the mission's: judged for the latest


def test_an_effect_done_again_under_a_new_plan_is_not_redone_work(m: Mission) -> None:
    effectful(m)
    planned(m, EFFECTFUL, 2, reason="deploy again, with the fix")
    m.step("s1", "running", 1)
    attempt(m, idempotency_key="k1")
    finished(m, "ok")
    m.step("s1", "running", 2)
    attempt(m, attempt=2, idempotency_key="k2")  # the new plan says why
    assert answer(m, "repeated-work").verdict == "pass"
    assert answer(m, "safe-resume").verdict == "pass"


@pytest.mark.parametrize(
    ("limit", "attempts", "succeeded", "verdict", "says"),
    [
        (None, 4, False, "pass", "within 5 attempts (the default"),
        (None, 9, False, "fail", "s1: 9 attempts, past the 5 allowed (the default"),
        ({"steps": 20}, 9, False, "pass", "within 10 attempts ([budget] steps 20 over 2"),
        ({"steps": 20}, 10, False, "fail", "all of the 10 allowed ([budget] steps 20"),
        (3, 2, False, "pass", "within 3 attempts"),
        (3, 3, True, "pass", "within 3 attempts"),
        (3, 3, False, "fail", "s1: 3 attempts, all of the 3 allowed"),
        (3, 4, True, "fail", "s1: 4 attempts, past the 3 allowed"),
    ],
)
def test_runaway_loop(
    m: Mission,
    limit: int | dict[str, int] | None,
    attempts: int,
    succeeded: bool,
    verdict: str,
    says: str,
) -> None:
    def build(m: Mission) -> None:
        budget = (
            limit if isinstance(limit, dict) else {"max_attempts_per_step": limit} if limit else {}
        )
        m.constraints(budget=budget)
        for number in range(1, attempts + 1):
            attempt(m, attempt=number, effect_possible=False)
        if succeeded:
            m.succeed("s1")

    check(m, "runaway-loop", build, verdict, says)


def test_runaway_loop_cites_the_attempt_that_crossed_the_limit(m: Mission) -> None:
    m.constraints(budget={"max_attempts_per_step": 3})
    for number in range(1, 6):
        attempt(m, attempt=number, effect_possible=False)  # lines 1 to 5
    m.step("s1", "failed")  # line 6
    (cite,) = answer(m, "runaway-loop").cites
    assert cite.line == 4  # the 4th attempt went past the 3 allowed


def test_runaway_loop_sees_a_budget_spent_five_times_over(m: Mission) -> None:
    m.constraints(budget={"usd": 10.0})
    m.step("s1", "running")
    m.usage(5.0, 10, 1)
    m.usage(50.0, 100, 2)  # line 3
    found = answer(m, "runaway-loop")
    assert found.verdict == "fail"
    assert [(c.line, c.note) for c in found.cites] == [
        (3, "usage past the budget: usd 50 of 10 (5.0x)")
    ]


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (  # the same effect (key k1) reports another id on resume
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "ok", external_ref="vm-7"),
                attempt(m, attempt=2, idempotency_key="k1", external_ref="vm-9"),
            ),
            "fail",
            "external_ref 'vm-9' contradicts 'vm-7' (line 2)",
        ),
        (  # ... or none
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "ok", external_ref="vm-7"),
                attempt(m, attempt=2, idempotency_key="k1"),
                finished(m, "ok", attempt=2),
            ),
            "fail",
            "attempt 2 finished with no external_ref; 'vm-7' was recorded",
        ),
        (
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "ok", external_ref="vm-7"),
                attempt(m, attempt=2, idempotency_key="k1", external_ref="vm-7"),
                finished(m, "ok", attempt=2, external_ref="vm-7"),
            ),
            "pass",
            "no attempt contradicted",
        ),
        (  # an attempt that failed made nothing: its id is not kept
            lambda m: (
                attempt(m, idempotency_key="k1"),
                finished(m, "error", external_ref="vm-7"),
                attempt(m, attempt=2, idempotency_key="k1", external_ref="vm-8"),
            ),
            "pass",
            "no attempt contradicted",
        ),
    ],
)
def test_forgotten_id(m: Mission, build: Build, verdict: str, says: str) -> None:
    effectful(m)
    check(m, "forgotten-id", build, verdict, says)


def test_stale_instructions(m: Mission) -> None:
    edited = stamp(T0 + timedelta(minutes=10))
    m.intent("Work", objective="never push to main", revision=2, edited_at=edited)
    m.constraints(tools={"deny": ["force_push"]}, revision=2, edited_at=edited)
    m.clock = T0 + timedelta(minutes=5)
    m.step("s1", "running")  # line 1: before the edits
    assert answer(m, "stale-instructions").verdict == "pass"
    m.clock = T0 + timedelta(minutes=20)
    m.step("s1", "running")  # line 2: after them, under plan v1 written before
    attempt(m, tool="force_push", effect_possible=False)  # line 3: a tool now denied
    found = answer(m, "stale-instructions")
    assert found.verdict == "fail"
    assert [c.line for c in found.cites] == [2, 3]
    assert "after intent.toml (revision 2) was edited" in found.cites[0].note
    assert "force_push, which constraints.toml [tools] denies" in found.cites[1].note


def test_a_constraints_edit_alone_needs_no_new_plan(m: Mission) -> None:
    m.constraints(budget={"usd": 50.0}, revision=2, edited_at=stamp(T0 + timedelta(minutes=10)))
    m.clock = T0 + timedelta(minutes=20)
    m.step("s1", "running")  # the budget was raised: the plan still holds
    assert answer(m, "stale-instructions").verdict == "pass"


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (lambda m: m.step("s1", "running"), "pass", "every record is schema 1"),
        (lambda m: m.plan(1, schema=2), "fail", "schema 2: this reader knows schema 1 only"),
        (lambda m: m.request("r1", schema="v2"), "fail", 'schema "v2"'),
        (
            lambda m: (m.dir / "events.jsonl").write_bytes(chain([{"schema": 2, **HEARTBEAT}])),
            "fail",
            "heartbeat.schema",
        ),
    ],
)
def test_unknown_schema(m: Mission, build: Build, verdict: str, says: str) -> None:
    check(m, "unknown-schema", build, verdict, says)


@pytest.mark.parametrize(
    ("build", "verdict", "says"),
    [
        (lambda m: (attempt(m), attempt(m, attempt=2)), "fail", "attempt 2 repeats an effect"),
        (
            lambda m: (attempt(m, idempotency_key="k"), attempt(m, attempt=2, idempotency_key="k")),
            "pass",
            "carried an idempotency key",
        ),
        (lambda m: attempt(m), "pass", "carried"),
    ],
)
def test_unkeyed_repeat(m: Mission, build: Build, verdict: str, says: str) -> None:
    effectful(m)
    check(m, "unkeyed-repeat", build, verdict, says)


def test_a_review_fails_when_one_answer_fails(m: Mission) -> None:
    m.intent("Work", **GOOD_INTENT)
    workspace = Workspace(m.root)
    workspace.scan()
    assert not review(workspace.missions["m"]).failed
    m.succeed("s1")
    m.succeed("s1")
    workspace.scan()
    assert review(workspace.missions["m"]).failed
