"""Derived state: mission status by urgency, request status, budget use and burn rate."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from store.derivation.derive import RequestStatus
from store.format.row import MissionStatus
from store.index.workspace import Workspace
from tests.factory import T0, Mission, mission, stamp

Open = Callable[[Path], Workspace]
HOUR = timedelta(hours=1)


@pytest.fixture
def m(tmp_path: Path) -> Mission:
    return mission(tmp_path, "m")


def status(built: Mission, now: datetime) -> MissionStatus:
    workspace = Workspace(built.root, clock=lambda: now)
    workspace.scan()
    return workspace.status(built.id)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# ---- mission status --------------------------------------------------------------------


def test_urgency_order_is_the_declared_order() -> None:
    assert [s.value for s in sorted(MissionStatus, key=lambda s: s.urgency)] == [
        "needs_you",
        "failed",
        "blocked",
        "stale",
        "running",
        "idle",
        "done",
    ]


def test_idle_without_events(m: Mission) -> None:
    assert status(m, at(10)) is MissionStatus.IDLE


def test_idle_when_nothing_is_active(m: Mission) -> None:
    m.succeed("s1")  # s2 never started
    assert status(m, at(10)) is MissionStatus.IDLE


@pytest.mark.parametrize("state", ["ready", "running", "verifying", "waiting_for_approval"])
def test_running(m: Mission, state: str) -> None:
    m.step("s1", state)
    assert status(m, at(10)) is MissionStatus.RUNNING


def test_stale_after_the_workspace_limit(m: Mission) -> None:
    m.step("s1", "running")  # at T0 + 1 s
    (m.root / "hud.toml").write_text("schema = 1\nstale_after_seconds = 60\n")
    assert status(m, at(61)) is MissionStatus.RUNNING
    assert status(m, at(62)) is MissionStatus.STALE


def test_stale_uses_the_default_limit_without_settings(m: Mission) -> None:
    m.step("s1", "running")
    assert status(m, at(1 + 600)) is MissionStatus.RUNNING
    assert status(m, at(1 + 601)) is MissionStatus.STALE


def test_heartbeat_keeps_a_mission_fresh(m: Mission) -> None:
    m.step("s1", "running")
    m.event("heartbeat", at=at(3000))
    assert status(m, at(3100)) is MissionStatus.RUNNING


def test_blocked_step(m: Mission) -> None:
    m.step("s1", "blocked", reason="waiting on a credential")
    assert status(m, at(10)) is MissionStatus.BLOCKED
    assert status(m, at(100_000)) is MissionStatus.BLOCKED  # blocked beats stale


def test_halt_blocks_until_the_next_step_event(m: Mission) -> None:
    m.step("s1", "running")
    m.event("halt", reason="out of memory")
    assert status(m, at(10)) is MissionStatus.BLOCKED
    m.step("s1", "running")
    assert status(m, at(10)) is MissionStatus.RUNNING


def test_failed(m: Mission) -> None:
    m.step("s1", "failed", reason="tests fail")
    m.step("s2", "blocked")
    assert status(m, at(10)) is MissionStatus.FAILED  # failed beats blocked


def test_failed_step_that_was_retried_is_not_failed(m: Mission) -> None:
    m.step("s1", "failed")
    m.step("s1", "running")
    assert status(m, at(10)) is MissionStatus.RUNNING


def test_needs_you_for_a_pending_request(m: Mission) -> None:
    m.step("s1", "failed")
    m.request("r1")
    assert status(m, at(10)) is MissionStatus.NEEDS_YOU  # beats failed


def test_needs_you_for_outcome_unknown(m: Mission) -> None:
    m.step("s1", "outcome_unknown", reason="timeout after the call was sent")
    assert status(m, at(10)) is MissionStatus.NEEDS_YOU


@pytest.mark.parametrize(
    ("limit", "attempts", "last", "expected"),
    [
        (None, 4, "failed", MissionStatus.FAILED),  # within the default 5: the agent may go on
        (None, 5, "failed", MissionStatus.NEEDS_YOU),  # no limit set: the default is 5
        ({"steps": 20}, 9, "failed", MissionStatus.FAILED),  # 20 steps over 2 plan steps: 10
        ({"steps": 20}, 10, "running", MissionStatus.NEEDS_YOU),
        ({"steps": 2}, 3, "running", MissionStatus.NEEDS_YOU),  # at least 3
        ({"steps": 2}, 2, "running", MissionStatus.RUNNING),
        (3, 2, "failed", MissionStatus.FAILED),
        (3, 3, "failed", MissionStatus.NEEDS_YOU),  # all used, not succeeded: beats failed
        (3, 3, "running", MissionStatus.NEEDS_YOU),
        (3, 4, "running", MissionStatus.NEEDS_YOU),
        (3, 3, None, MissionStatus.NEEDS_YOU),
        (3, 3, "succeeded", MissionStatus.IDLE),  # s2 never started
    ],
)
def test_needs_you_when_a_step_used_all_its_attempts(
    m: Mission,
    limit: int | dict[str, int] | None,
    attempts: int,
    last: str | None,
    expected: MissionStatus,
) -> None:
    budget: dict[str, Any] = {"usd": 10.0}
    budget.update(
        limit if isinstance(limit, dict) else {"max_attempts_per_step": limit} if limit else {}
    )
    m.constraints(budget=budget)
    for number in range(1, attempts + 1):
        m.event("attempt", step="s1", attempt=number, phase="started", tool="t")
    if last == "succeeded":
        m.succeed("s1")
    elif last is not None:
        m.step("s1", last)
    assert status(m, at(60)) is expected


@pytest.mark.parametrize(
    ("usd", "halted", "expected"),
    [
        (9.0, False, MissionStatus.RUNNING),
        (50.0, False, MissionStatus.NEEDS_YOU),  # five times over and still going: a runaway
        (50.0, True, MissionStatus.BLOCKED),  # the runtime stopped itself
    ],
)
def test_needs_you_when_the_usage_went_past_the_budget(
    m: Mission, usd: float, halted: bool, expected: MissionStatus
) -> None:
    m.constraints(budget={"usd": 10.0})
    m.step("s1", "running")
    m.usage(usd, 100, 1)
    if halted:
        m.event("halt", reason="budget spent")
    assert status(m, at(60)) is expected


def test_needs_you_for_invalid_state(m: Mission) -> None:
    m.step("s1", "running")
    (m.dir / "plan" / "v1.json").write_text("{")
    assert status(m, at(10)) is MissionStatus.NEEDS_YOU


def test_warnings_alone_do_not_need_you(m: Mission) -> None:
    m.step("s1", "running")
    (m.dir / "intent.toml").unlink()  # missing intent is a warning
    (m.dir / "notes.txt").write_text("x")
    assert status(m, at(10)) is MissionStatus.RUNNING


def test_done_when_every_step_of_the_latest_plan_succeeded(m: Mission) -> None:
    m.succeed("s1")
    assert status(m, at(10)) is not MissionStatus.DONE
    m.succeed("s2")
    assert status(m, at(10)) is MissionStatus.DONE
    assert status(m, at(100_000)) is MissionStatus.DONE  # a finished mission is not stale
    m.plan(2, steps=["s1", "s2", "s3"])
    assert status(m, at(10)) is MissionStatus.IDLE


def test_success_without_evidence_is_invalid(m: Mission) -> None:
    m.step("s1", "succeeded")
    m.evidence("s2")
    m.step("s2", "succeeded")
    assert status(m, at(10)) is MissionStatus.NEEDS_YOU


# ---- request status --------------------------------------------------------------------


def request_status(built: Mission, now: datetime, request_id: str = "r1") -> RequestStatus:
    workspace = Workspace(built.root, clock=lambda: now)
    workspace.scan()
    return workspace.request_status(built.id, request_id)


def test_request_pending(m: Mission) -> None:
    m.request("r1")
    assert request_status(m, at(10)) is RequestStatus.PENDING


def test_request_approved(m: Mission) -> None:
    m.request("r1")
    m.decision("r1", "approve")
    assert request_status(m, at(10)) is RequestStatus.APPROVED


def test_request_rejected(m: Mission) -> None:
    m.request("r1")
    m.decision("r1", "reject", reason="not on a Friday")
    assert request_status(m, at(10)) is RequestStatus.REJECTED


def test_request_stale_when_changed_after_the_decision(m: Mission) -> None:
    m.request("r1")
    m.decision("r1", "approve")
    m.request("r1", args={"target": "staging"})
    assert request_status(m, at(10)) is RequestStatus.STALE


def test_request_expired_without_a_decision(m: Mission) -> None:
    m.request("r1", expires_at=stamp(at(60)))
    assert request_status(m, at(60)) is RequestStatus.PENDING
    assert request_status(m, at(61)) is RequestStatus.EXPIRED


def test_approval_expires_with_valid_until(m: Mission) -> None:
    m.request("r1")
    m.decision("r1", "approve", valid_until=stamp(at(3600)))
    assert request_status(m, at(3600)) is RequestStatus.APPROVED
    assert request_status(m, at(3601)) is RequestStatus.EXPIRED


def test_approval_expires_with_the_request(m: Mission) -> None:
    m.request("r1", expires_at=stamp(at(60)))
    m.decision("r1", "approve")
    assert request_status(m, at(61)) is RequestStatus.EXPIRED


def test_rejection_does_not_expire(m: Mission) -> None:
    m.request("r1", expires_at=stamp(at(60)))
    m.decision("r1", "reject", reason="no", valid_until=stamp(at(60)))
    assert request_status(m, at(1000)) is RequestStatus.REJECTED


def test_expired_request_no_longer_needs_you(m: Mission) -> None:
    m.step("s1", "waiting_for_approval")
    m.request("r1", expires_at=stamp(at(60)))
    assert status(m, at(30)) is MissionStatus.NEEDS_YOU
    assert status(m, at(90)) is MissionStatus.RUNNING


# ---- budget ----------------------------------------------------------------------------


def budget(built: Mission, now: datetime) -> dict[str, object]:
    workspace = Workspace(built.root, clock=lambda: now)
    workspace.scan()
    use = workspace.budget(built.id)
    return {limit.name: limit for limit in use.limits} | {"_budget": use}


def test_budget_fractions_burn_rate_and_projection(m: Mission) -> None:
    m.usage(1.0, 10_000, 2, at=at(0))
    m.usage(3.0, 30_000, 6, at=at(3600))  # +2 USD, +20,000 tokens, +4 steps in an hour
    now = at(3600)
    found = budget(m, now)
    usd, tokens, steps = found["usd"], found["tokens"], found["steps"]
    assert (usd.used, usd.limit, usd.fraction) == (3.0, 10.0, pytest.approx(0.3))
    assert usd.per_hour == pytest.approx(2.0)
    assert usd.exhausted_at == now + timedelta(hours=3.5)
    assert tokens.fraction == pytest.approx(0.3) and tokens.per_hour == pytest.approx(20_000)
    assert tokens.exhausted_at == now + timedelta(hours=3.5)
    assert steps.fraction == pytest.approx(0.3) and steps.exhausted_at == now + 3.5 * HOUR
    assert found["_budget"].worst.name in {"usd", "tokens", "steps"}


def test_budget_worst_limit(m: Mission) -> None:
    m.usage(9.0, 1_000, 1, at=at(0))
    assert budget(m, at(10))["_budget"].worst.name == "usd"


def test_budget_over_the_limit(m: Mission) -> None:
    m.usage(12.5, 1_000, 1, at=at(0))
    usd = budget(m, at(10))["usd"]
    assert usd.fraction == pytest.approx(1.25)
    assert usd.per_hour is None and usd.exhausted_at is None  # one point: no rate yet


def test_budget_without_usage(m: Mission) -> None:
    found = budget(m, at(10))
    assert found["usd"].used == 0.0 and found["usd"].per_hour is None


def test_budget_without_constraints(m: Mission) -> None:
    (m.dir / "constraints.toml").unlink()
    assert budget(m, at(10))["_budget"].limits == ()


def test_budget_only_the_limits_that_are_set(m: Mission) -> None:
    m.constraints(budget={"tokens": 500})
    m.usage(1.0, 100, 1, at=at(0))
    assert [k for k in budget(m, at(10)) if not k.startswith("_")] == ["tokens"]


def test_wall_clock_budget(m: Mission) -> None:
    m.constraints(budget={"wall_seconds": 7200})
    m.step("s1", "running", at=at(0))
    time = budget(m, at(1800))["time"]
    assert (time.used, time.fraction) == (1800.0, pytest.approx(0.25))
    assert time.exhausted_at == at(7200)


def test_wall_clock_stops_at_a_halt(m: Mission) -> None:
    m.constraints(budget={"wall_seconds": 7200})
    m.step("s1", "running", at=at(0))
    m.event("halt", reason="done for today", at=at(600))
    time = budget(m, at(5000))["time"]
    assert time.used == 600.0
    assert time.exhausted_at is None  # the clock stopped: it does not run out


def test_a_wall_clock_budget_shorter_than_the_deadline_is_not_a_projection(m: Mission) -> None:
    """2h of wall clock from 12:00 ends at 14:00, before a 18:00 deadline: that is the
    mission's cap, not a projection from a burn rate; $1 of $10 at $1/h lasts until 22:00."""
    m.constraints(budget={"wall_seconds": 7200, "usd": 10.0, "deadline": stamp(at(6 * 3600))})
    m.usage(0.0, 0, 0, at=at(0))
    m.usage(1.0, 0, 0, at=at(3600))
    use = budget(m, at(3600))
    assert use["time"].exhausted_at == at(7200)
    assert use["usd"].exhausted_at == at(10 * 3600)
    assert not use["_budget"].exhausted_before_deadline
    assert use["_budget"].first_out is None


def test_projected_exhaustion_before_the_deadline(m: Mission) -> None:
    m.constraints(budget={"usd": 10.0, "deadline": stamp(at(3 * 3600))})
    m.usage(0.0, 0, 0, at=at(0))
    m.usage(4.0, 0, 0, at=at(3600))  # 4 USD an hour: out 1.5 h from now
    use = budget(m, at(3600))["_budget"]
    assert use.deadline == at(3 * 3600)
    assert use.exhausted_before_deadline
    m.constraints(budget={"usd": 10.0, "deadline": stamp(at(2 * 3600))})
    assert not budget(m, at(3600))["_budget"].exhausted_before_deadline
