"""A loopx goal's overview row: status and summary, derived one way for the HUD and
`hud check`."""

from __future__ import annotations

from datetime import datetime

from store.format.records import Settings
from store.format.row import MissionStatus, MissionSummary
from store.sources.loopx.goal import Goal
from store.sources.loopx.policy import policy

DONE = frozenset({"done", "completed", "complete", "achieved", "archived"})
PAUSED = frozenset({"paused", "stopped", "inactive", "disconnected"})


def goal_status(goal: Goal, now: datetime, settings: Settings) -> MissionStatus:
    """needs_you (an error, an open user gate) > registry status (done, blocked, paused)
    > stale (no activity for stale_after_seconds) > running."""
    if goal.gates() or any(p.severity == "error" for p in goal.problems):
        return MissionStatus.NEEDS_YOU
    status = goal.entry.status
    if status in DONE:
        return MissionStatus.DONE
    if status == "blocked":
        return MissionStatus.BLOCKED
    if status in PAUSED:
        return MissionStatus.IDLE
    last = goal.last_activity()
    if last is not None and (now - last).total_seconds() > settings.stale_after_seconds:
        return MissionStatus.STALE
    return MissionStatus.RUNNING


def goal_summary(goal: Goal, now: datetime, settings: Settings) -> MissionSummary:
    gates = goal.gates()
    current = goal.current()
    if gates:
        step, state = f"gate: {gates[0].text}", "pending"
    elif current is not None:
        step, state = current.text, "running" if current.claimed_by else "ready"
    else:
        step, state = None, None
    quota = policy(goal)
    return MissionSummary(
        id=goal.id,
        status=goal_status(goal, now, settings),
        title=f"loopx: {goal.title or goal.entry.id}",
        current_step=step,
        step_state=state,
        plan_version=None,
        pending=len(gates),
        budget_fraction=quota.spent_slots / quota.allowed_slots if quota.allowed_slots else None,
        last_activity=goal.last_activity(),
        problems=len(goal.problems),
    )
