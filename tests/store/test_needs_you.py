"""Why a mission needs you (`needs_you_reasons`): the reasons `mission_status` counts,
each with a stable key (what `hud notify` sends once) and words."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from store.derivation.derive import needs_you_reasons
from store.format.row import MissionStatus
from store.index.workspace import Workspace
from tests.factory import T0, Mission, mission


@pytest.fixture
def m(tmp_path: Path) -> Mission:
    return mission(tmp_path, "m")


def reasons(built: Mission) -> list[tuple[str, str]]:
    workspace = Workspace(built.root, clock=lambda: T0 + timedelta(minutes=1))
    workspace.scan()
    found = [(r.key, r.why) for r in needs_you_reasons(workspace.missions[built.id])]
    needs_you = workspace.status(built.id) is MissionStatus.NEEDS_YOU
    assert needs_you == bool(found or workspace.pending_requests())  # the same rule
    return found


def test_a_pending_request_alone_is_no_other_reason(m: Mission) -> None:
    m.step("s1", "waiting_for_approval")
    m.request("r1")
    assert reasons(m) == []


def test_each_reason_has_a_key_and_words(m: Mission) -> None:
    m.constraints(budget={"usd": 10.0, "max_attempts_per_step": 2})
    m.step("s1", "outcome_unknown")
    for number in (1, 2):
        m.event("attempt", step="s2", attempt=number, phase="started", tool="t")
    m.usage(25.0, 100, 1)
    (m.dir / "plan" / "v2.json").write_text("{")
    assert reasons(m) == [
        ("outcome_unknown:s1", "step s1: outcome unknown"),
        (
            "problem:missions/m/plan/v2.json:1:bad-json",
            "missions/m/plan/v2.json:1: invalid JSON: EOF while parsing an object at line 1 "
            "column 1",
        ),
        ("retries:s2", "step s2: out of attempts"),
        ("over_budget:usd", "usage past the budget: usd 25 of 10 (2.5x)"),
    ]


def test_a_halted_run_over_its_budget_waits_for_no_one(m: Mission) -> None:
    m.constraints(budget={"usd": 10.0})
    m.usage(25.0, 100, 1)
    m.event("halt", reason="budget spent")
    assert reasons(m) == []
