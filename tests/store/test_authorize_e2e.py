"""End to end through the files: an agent asks, a human decides, the agent may run once.

The agent side is `store.writers.agent` (what the simulator uses: it executes only through
`authorize()` / `start_approved_attempt()`); the human side is `store.writers.human` after the
checks of `store.index.approval_checks`, exactly as the HUD and `hud decide` do it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import pytest

from store.format.records import AttemptEvent
from store.index.approval_checks import refusal, review
from store.index.workspace import Workspace
from store.writers.agent import AgentWriter, authorize
from store.writers.human import AlreadyDecided, HumanWriter

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def agent(tmp_path: Path) -> AgentWriter:
    writer = AgentWriter(tmp_path, "ship", "agent/ship", clock=lambda: NOW)
    writer.write_plan(
        [
            {"id": "build", "title": "Build", "risk": "read_only"},
            {"id": "deploy", "title": "Deploy", "risk": "external_write", "needs_approval": True},
        ]
    )
    (tmp_path / "missions/ship/constraints.toml").write_text("schema = 1\n")  # required
    return writer


def ask(agent: AgentWriter, request_id: str = "r1", expires: bool = True) -> None:
    agent.request_approval(
        request_id,
        "deploy",
        1,
        "deploy",
        {"target": "prod", "version": "1.2.3"},
        "external_write",
        "ship 1.2.3",
        valid_for=timedelta(minutes=30) if expires else None,
    )


def human_decides(
    root: Path, verdict: Literal["approve", "reject"], request_id: str = "r1", reason: str = ""
) -> None:
    """What the HUD does on y / n: review, refuse or write once."""
    workspace = Workspace(root, clock=lambda: NOW)
    workspace.scan()
    checked = review(workspace.missions["ship"], request_id, NOW)
    assert refusal(checked, verdict, reason) is None
    assert checked.raw is not None
    writer = HumanWriter(root, "alice", "local /dev/pts/1", clock=lambda: NOW)
    writer.decide("ship", request_id, checked.raw, verdict, reason, checked.valid_until(NOW))


def attempts(root: Path) -> list[dict[str, object]]:
    lines = (root / "missions/ship/events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("type") == "attempt"]


def test_approved_runs_exactly_once(agent: AgentWriter) -> None:
    ask(agent)
    assert authorize(agent.root, "ship", "r1", NOW).reason == "not decided"
    human_decides(agent.root, "approve")
    first, event = agent.start_approved_attempt("r1", 1, now=NOW + timedelta(minutes=1))
    assert first.ok and isinstance(event, AttemptEvent)
    assert event.tool == "deploy" and event.args == {"target": "prod", "version": "1.2.3"}
    assert event.approval == "r1"
    again, none = agent.start_approved_attempt(
        "r1", 2, idempotency_key="another", now=NOW + timedelta(minutes=2)
    )
    assert not again.ok and none is None and "already used" in again.reason
    assert not again.resume
    resumed, none = agent.start_approved_attempt("r1", 1, now=NOW + timedelta(minutes=3))
    assert not resumed.ok and none is None and resumed.resume  # the same (default) key
    assert resumed.reason.startswith("already authorized for attempt 1 under ship/r1 at ")
    assert len(attempts(agent.root)) == 1


def test_rejected_never_runs(agent: AgentWriter) -> None:
    ask(agent)
    human_decides(agent.root, "reject", reason="wrong version")
    auth, event = agent.start_approved_attempt("r1", 1, now=NOW)
    assert not auth.ok and event is None and auth.reason == "rejected: wrong version"
    assert attempts(agent.root) == []


def test_stale_never_runs(agent: AgentWriter) -> None:
    ask(agent)
    human_decides(agent.root, "approve")
    path = agent.root / "missions/ship/approvals/r1.json"
    raw = json.loads(path.read_text())
    raw["args"]["target"] = "prod-eu"  # the agent changes the action after approval
    path.write_text(json.dumps(raw))
    auth, event = agent.start_approved_attempt("r1", 1, now=NOW)
    assert not auth.ok and event is None and auth.reason.startswith("stale")
    workspace = Workspace(agent.root, clock=lambda: NOW)
    workspace.scan()
    checked = review(workspace.missions["ship"], "r1", NOW)
    assert checked.status.value == "stale"
    assert [c.path for c in checked.changes or ()] == ["args.target"]
    assert attempts(agent.root) == []


def test_expired_request_never_runs(agent: AgentWriter) -> None:
    ask(agent)
    auth, _ = agent.start_approved_attempt("r1", 1, now=NOW + timedelta(hours=1))
    assert not auth.ok and auth.reason.startswith("expired")
    workspace = Workspace(agent.root, clock=lambda: NOW + timedelta(hours=1))
    workspace.scan()
    checked = review(workspace.missions["ship"], "r1", NOW + timedelta(hours=1))
    assert refusal(checked, "approve", "") is not None
    assert attempts(agent.root) == []


def test_expired_approval_never_runs(agent: AgentWriter) -> None:
    ask(agent, expires=False)
    (agent.root / "missions/ship/constraints.toml").write_text(
        "schema = 1\n[approval]\nvalid_for_seconds = 60\n"
    )
    human_decides(agent.root, "approve")
    auth, event = agent.start_approved_attempt("r1", 1, now=NOW + timedelta(minutes=2))
    assert not auth.ok and event is None and "approval was valid until" in auth.reason
    assert attempts(agent.root) == []


def test_second_decision_loses(agent: AgentWriter) -> None:
    ask(agent)
    human_decides(agent.root, "approve")
    raw = json.loads((agent.root / "missions/ship/approvals/r1.json").read_text())
    bob = HumanWriter(agent.root, "bob", "ssh 10.0.0.2", clock=lambda: NOW)
    with pytest.raises(AlreadyDecided) as lost:
        bob.decide("ship", "r1", raw, "reject", "no")
    assert lost.value.decision is not None and lost.value.decision.decided_by == "alice"
    assert "already decided (approve) by alice at" in str(lost.value)
