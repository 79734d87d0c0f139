"""The decision checks shared by the HUD and `hud decide`: fail closed, warnings, queue."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest

from store.derivation.derive import RequestStatus
from store.format.records import Decision, request_digest, request_snapshot, snapshot_of, validate
from store.format.text import _TOKEN, hazardous
from store.index.approval_checks import (
    PendingIndex,
    Review,
    SeenRequests,
    approval_queue,
    field_diff,
    hazards,
    refusal,
    review,
)
from store.index.workspace import Workspace
from store.writers.human import HumanWriter
from tests.factory import T0, Mission, mission, stamp

NOW = T0 + timedelta(minutes=1)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


@pytest.fixture
def beta(root: Path) -> Mission:
    built = mission(root, "beta", "Deploy the service")
    built.plan(1, steps=["s1", "s2"])
    return built


def scan(root: Path) -> Workspace:
    workspace = Workspace(root, clock=lambda: NOW)
    workspace.scan()
    return workspace


def review_of(root: Path, request_id: str = "r1", mission_id: str = "beta") -> Review:
    workspace = scan(root)
    return review(workspace.missions[mission_id], request_id, NOW)


# ---- hazardous characters ---------------------------------------------------------------------


def test_every_character_the_display_marks_is_hazardous() -> None:
    """The fail-closed check covers at least what safe() would have to make visible."""
    everything = "".join(chr(c) for c in range(0x110000) if c != 0x0A)
    marked = {m.group() for m in _TOKEN[False].finditer(everything) if len(m.group()) == 1}
    assert marked, "the display marks something"
    assert not [hex(ord(c)) for c in marked if not hazardous(c)]


@pytest.mark.parametrize(
    "char", ["\x1b", "\x07", "\x00", "\x7f", "\x85", "\u202e", "\u2066", "\u200b", "\ufeff"]
)
def test_controls_and_bidi_are_hazardous(char: str) -> None:
    assert hazardous(char)


@pytest.mark.parametrize("char", ["a", " ", "é", "中", "😀", "→"])
def test_ordinary_text_is_not(char: str) -> None:
    assert not hazardous(char)


def test_hazards_found_in_keys_and_values_at_any_depth() -> None:
    args = {"ok": "fine", "a": {"b": [1, "x\u202ey"]}, "k\u200b": 1, "c": "\x1b]52;c;SGk=\x07"}
    found = {str(h) for h in hazards(args, ("args",))}
    assert found == {
        "args.a.b[1]: U+202E RIGHT-TO-LEFT OVERRIDE",
        "a key in args: U+200B ZERO WIDTH SPACE",
        "args.c: U+001B",
    }


# ---- fail closed -------------------------------------------------------------------------------


def test_clean_pending_request_can_be_approved(root: Path, beta: Mission) -> None:
    beta.request("r1", risk="read_only", args={"path": "/tmp"})
    checked = review_of(root)
    assert checked.status is RequestStatus.PENDING
    assert checked.can_approve and checked.can_reject
    assert checked.blockers == () and checked.confirmation == "none"
    assert refusal(checked, "approve", "") is None
    assert refusal(checked, "reject", "") == "a rejection needs a reason"
    assert refusal(checked, "reject", "no") is None
    assert checked.digest == request_digest(checked.raw or {})


@pytest.mark.parametrize(
    "args",
    [
        {"cmd": "ls \u202e"},
        {"cmd": "\x1b]52;c;SGVsbG8=\x07"},
        {"deep": [{"x": ["ok", "tab\there"]}]},
        {"ke\u2066y": "v"},
    ],
)
def test_hostile_args_cannot_be_approved_but_can_be_rejected(
    root: Path, beta: Mission, args: dict[str, object]
) -> None:
    beta.request("r1", args=args)
    checked = review_of(root)
    assert not checked.can_approve
    assert "control or invisible characters" in " ".join(checked.blockers)
    assert checked.can_reject
    assert refusal(checked, "approve", "")
    assert refusal(checked, "reject", "hostile") is None


@pytest.mark.parametrize(
    "args",
    [
        {"file_path": "/a.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 3\n"},
        {"command": "cat <<EOF > a.txt\nhi\nEOF", "description": "Write a.txt"},
        {"edits": [{"old_string": "a\nb", "new_string": "c"}]},
    ],
)
def test_a_line_break_in_an_argument_value_is_approvable(
    root: Path, beta: Mission, args: dict[str, object]
) -> None:
    """An edit or a script of several lines: the line break shows (`\\n` in the args, a
    line in the preview), so it is no hazard; in a key or the tool it still is."""
    beta.request("r1", args=args)
    assert review_of(root).can_approve
    assert [str(h) for h in hazards({"a\nb": 1}, ("args",), lines=True)] == [
        "a key in args: U+000A"
    ]
    assert [str(h) for h in hazards("Ba\nsh", ("tool",))] == ["tool: U+000A"]


def test_args_not_an_object(root: Path, beta: Mission) -> None:
    beta.request("r1", args=["rm", "-rf", "/"])
    checked = review_of(root)
    assert checked.request is None and checked.raw is not None
    assert any("args is not a JSON object (it is an array)" in b for b in checked.blockers)
    assert checked.can_reject  # a digest exists: it can still be turned down


def test_step_not_in_plan_version(root: Path, beta: Mission) -> None:
    beta.request("r1", step="s9")
    checked = review_of(root)
    assert "step 's9' is not in plan v1" in checked.blockers


def test_plan_version_missing(root: Path, beta: Mission) -> None:
    beta.request("r1", plan_version=4)
    assert "plan v4, which the request names, does not exist" in review_of(root).blockers


def test_tools_allow_and_deny(root: Path, beta: Mission) -> None:
    beta.request("r1", tool="deploy")
    beta.constraints(tools={"deny": ["deploy"]})
    assert "constraints [tools] deny 'deploy'" in review_of(root).blockers
    beta.constraints(tools={"allow": ["ls"]})
    assert "constraints [tools] allow does not list 'deploy'" in review_of(root).blockers
    beta.constraints(tools={"allow": ["ls", "deploy"]})
    assert review_of(root).can_approve


def test_unreadable_constraints_fail_closed(root: Path, beta: Mission) -> None:
    beta.request("r1")
    (beta.dir / "constraints.toml").write_text("schema = 1\n[approval\n")
    assert any("constraints.toml does not load" in b for b in review_of(root).blockers)


def test_id_not_file_name(root: Path, beta: Mission) -> None:
    beta.request("r1")
    data = json.loads((beta.dir / "approvals/r1.json").read_text())
    data["id"] = "r2"
    (beta.dir / "approvals/r1.json").write_text(json.dumps(data))
    checked = review_of(root)
    assert not checked.can_approve and not checked.can_reject


def test_unparsable_request_cannot_be_decided(root: Path, beta: Mission) -> None:
    (beta.dir / "approvals").mkdir(exist_ok=True)
    (beta.dir / "approvals/r1.json").write_text('{"schema": 1, "id": ')
    checked = review_of(root)
    assert checked.raw is None and checked.digest is None
    assert not checked.can_approve and not checked.can_reject


# ---- warnings -----------------------------------------------------------------------------------


def test_warnings(root: Path, beta: Mission) -> None:
    beta.plan(2, steps=["s1"])
    beta.constraints(approval={"auto": ["external_write"]})
    beta.request("r1", risk="external_write")
    checked = review_of(root)
    assert checked.can_approve  # warnings never block
    text = " | ".join(checked.warnings)
    assert "risk external_write is higher than plan v1 declares for step s1 (read_only)" in text
    assert "plan v1 is not the latest (v2)" in text
    assert "[approval] auto includes external_write" in text
    assert checked.confirmation == "confirm"


def test_irreversible_needs_the_tool_typed(root: Path, beta: Mission) -> None:
    beta.request("r1", risk="irreversible")
    assert review_of(root).confirmation == "type_tool"


def test_valid_until_from_constraints(root: Path, beta: Mission) -> None:
    beta.constraints(approval={"valid_for_seconds": 120})
    beta.request("r1")
    assert review_of(root).valid_until(NOW) == NOW + timedelta(seconds=120)


def test_earlier_decisions_listed_newest_first(root: Path, beta: Mission) -> None:
    beta.request("r0")
    beta.decision("r0", "reject", reason="no")
    beta.request("r9")
    beta.decision("r9", "approve", decided_at=stamp(T0 + timedelta(seconds=5)))
    beta.request("r1")
    checked = review_of(root)
    assert [e.request_id for e in checked.earlier] == ["r9", "r0"]
    assert checked.earlier[1].decision.reason == "no"


# ---- decided, stale, expired --------------------------------------------------------------


def test_decided_requests_are_not_decided_again(root: Path, beta: Mission) -> None:
    beta.request("r1")
    beta.decision("r1", "approve")
    checked = review_of(root)
    assert checked.status is RequestStatus.APPROVED
    assert not checked.can_approve and not checked.can_reject
    assert any("already approved by alice" in b for b in checked.blockers)


def test_expired_undecided(root: Path, beta: Mission) -> None:
    beta.request("r1", expires_at=stamp(T0 + timedelta(seconds=30)))
    checked = review_of(root)
    assert checked.status is RequestStatus.EXPIRED
    assert not checked.can_approve and not checked.can_reject
    assert "expired" in checked.blockers[0]


def test_stale_with_snapshot_shows_field_diff(root: Path, beta: Mission) -> None:
    raw = beta.request("r1", args={"target": "staging", "n": 1})
    writer = HumanWriter(root, "alice", "local")
    writer.decide("beta", "r1", raw, "approve", "ok")
    beta.request("r1", args={"target": "prod", "extra": True})
    checked = review_of(root)
    assert checked.status is RequestStatus.STALE
    assert "stale: changed since it was decided" in checked.blockers[0]
    assert checked.changes is not None
    assert [(c.path, c.kind, c.before, c.after) for c in checked.changes] == [
        ("args.extra", "added", None, True),
        ("args.n", "removed", 1, None),
        ("args.target", "changed", "staging", "prod"),
    ]


def test_stale_without_snapshot_uses_what_was_seen(root: Path, beta: Mission) -> None:
    beta.request("r1", args={"target": "staging"})
    beta.decision("r1", "approve")  # written by hand: no request_json
    workspace = scan(root)
    seen = SeenRequests()
    seen.observe(workspace.missions["beta"])
    beta.request("r1", args={"target": "prod"})
    workspace.apply(["missions/beta/approvals/r1.json"])
    unknown = review(workspace.missions["beta"], "r1", NOW)
    assert unknown.status is RequestStatus.STALE and unknown.changes is None
    known = review(workspace.missions["beta"], "r1", NOW, seen)
    assert [c.path for c in known.changes or ()] == ["args.target"]


def test_snapshot_is_ascii_and_verified(root: Path, beta: Mission) -> None:
    raw = beta.request("r1", args={"note": "caf\u00e9 \u202e"})
    snapshot = request_snapshot(raw)
    assert snapshot is not None and snapshot.isascii()
    decision = validate(
        Decision,
        {
            "schema": 1,
            "request": "r1",
            "digest": request_digest(raw),
            "decision": "approve",
            "decided_by": "a",
            "decided_at": NOW,
            "request_json": snapshot,
        },
    )
    assert snapshot_of(decision) == raw
    forged = decision.model_copy(update={"request_json": snapshot.replace("caf", "cat")})
    assert snapshot_of(forged) is None


def test_field_diff_lists_and_types() -> None:
    changes = field_diff({"a": [1, 2, 3], "b": 1}, {"a": [1, 5], "b": 1.0, "c d": None})
    assert [(c.path, c.kind) for c in changes] == [
        ("a[1]", "changed"),
        ("a[2]", "removed"),
        ("b", "changed"),
        ('["c d"]', "added"),
    ]


def test_refusal_when_the_request_changed_under_the_approver(root: Path, beta: Mission) -> None:
    beta.request("r1", args={"n": 1})
    seen = review_of(root).digest
    beta.request("r1", args={"n": 2})
    assert "changed while you were looking" in (refusal(review_of(root), "approve", "", seen) or "")


# ---- queue -------------------------------------------------------------------------------------


def test_queue_sorted_by_expiry_then_risk(root: Path, beta: Mission) -> None:
    soon = stamp(T0 + timedelta(minutes=5))
    later = stamp(T0 + timedelta(minutes=50))
    beta.request("a-none-irrev", risk="irreversible")
    beta.request("b-later-read", risk="read_only", expires_at=later)
    beta.request("c-soon-read", risk="read_only", expires_at=soon)
    beta.request("d-soon-irrev", risk="irreversible", expires_at=soon)
    beta.request("e-gone", expires_at=stamp(T0))
    gamma = mission(root, "gamma")
    gamma.request("f-soon-ext", risk="external_write", expires_at=soon)
    keys = [item.key for item in approval_queue(scan(root), NOW)]
    assert keys == [
        "beta/d-soon-irrev",
        "gamma/f-soon-ext",
        "beta/c-soon-read",
        "beta/b-later-read",
        "beta/a-none-irrev",
    ]
    everything = approval_queue(scan(root), NOW, everything=True)
    assert "beta/e-gone" in [i.key for i in everything]


def test_pending_index_reports_only_new(root: Path, beta: Mission) -> None:
    beta.request("r1")
    workspace = scan(root)
    index = PendingIndex()
    assert index.update(workspace, None, NOW) == []  # seeding announces nothing
    beta.request("r2")
    touched = workspace.apply(["missions/beta/approvals/r2.json"])
    assert index.update(workspace, touched, NOW) == [("beta", "r2")]
    assert index.update(workspace, touched, NOW) == []
    assert index.count == 2


def test_decision_keeps_request_json(root: Path, beta: Mission) -> None:
    raw = beta.request("r1", args={"x": "\u202e"})
    writer = HumanWriter(root, "alice", "ssh 10.0.0.1")
    decision = writer.decide("beta", "r1", raw, "reject", "hostile")
    text = (beta.dir / "approvals/r1.toml").read_text()
    assert "\u202e" not in text and re.search(r"request_json = ", text)
    assert decision.request_json is not None and snapshot_of(decision) == raw
