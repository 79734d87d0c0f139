"""One overview row per mission, as plain data: what the HUD's mission table shows."""

from __future__ import annotations

from datetime import datetime

from store.derivation.derive import budget_use, mission_status, pending_count
from store.derivation.mission import MissionState
from store.format.records import Settings
from store.format.row import MissionSummary


def current_step(mission: MissionState) -> tuple[str | None, str | None]:
    """The step of the most recent `step` event, and its state."""
    newest = max(mission.step_latest.items(), key=lambda item: item[1].line, default=None)
    if newest is None:
        return None, None
    step, latest = newest
    return step, latest.state


def summarize(mission: MissionState, now: datetime, settings: Settings) -> MissionSummary:
    step, state = current_step(mission)
    worst = budget_use(mission, now).worst
    plan = mission.latest_plan
    return MissionSummary(
        id=mission.id,
        status=mission_status(mission, now, settings),
        title=mission.title,
        current_step=step,
        step_state=state,
        plan_version=plan.version if plan else None,
        pending=pending_count(mission, now),
        budget_fraction=worst.fraction if worst else None,
        last_activity=mission.last_event_at,
        problems=len(mission.problems()),
    )
