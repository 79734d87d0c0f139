"""An overview row: a mission's status and summary, as plain data.

Nothing here imports pydantic or the loaders, so a row can be shown (and unpickled)
before the rest of the store is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class MissionStatus(StrEnum):
    """Mission status, declared from most to least urgent."""

    NEEDS_YOU = "needs_you"
    FAILED = "failed"
    BLOCKED = "blocked"
    STALE = "stale"
    RUNNING = "running"
    IDLE = "idle"
    DONE = "done"

    @property
    def urgency(self) -> int:
        """0 is the most urgent."""
        return _URGENCY[self]


_URGENCY = {status: rank for rank, status in enumerate(MissionStatus)}


@dataclass(frozen=True, slots=True)
class MissionSummary:
    id: str
    status: MissionStatus
    title: str
    current_step: str | None
    step_state: str | None
    plan_version: int | None
    pending: int
    budget_fraction: float | None
    last_activity: datetime | None
    problems: int

    def sort_key(self) -> tuple[int, int, str]:
        """Most urgent first, then most recently active by the minute, then by id.

        Recency counts in whole minutes so that rows do not jump at every event.
        """
        minute = -int(self.last_activity.timestamp() // 60) if self.last_activity else 0
        return (self.status.urgency, minute, self.id)
