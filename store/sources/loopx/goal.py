"""One loopx goal as read: its registry entry, state file, rollout log, leases and runs,
and what the HUD derives from them (gate, todos by status, quota, handoffs)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from store.format.problems import Problem
from store.sources.loopx.records import (
    Lease,
    Quota,
    RegistryGoal,
    RolloutEvent,
    RunEntry,
    RunRecord,
)
from store.sources.loopx.state import GoalState, Todo

ID_PREFIX = "loopx:"


def when(text: str | None) -> datetime | None:
    """A loopx timestamp (ISO 8601, `Z` or an offset), None if it is not one."""
    if not text:
        return None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


@dataclass(frozen=True, slots=True)
class Handoff:
    """A todo that moved between agents: `todo_claim` events by different agents."""

    todo_id: str
    from_agent: str
    to_agent: str
    at: str


@dataclass(frozen=True, slots=True)
class Run:
    entry: RunEntry
    line: int
    record: RunRecord | None


@dataclass(slots=True)
class Goal:
    """Everything read about one goal of the registry."""

    entry: RegistryGoal
    state_path: str
    """Where its state file is, as shown (relative to the state directory when inside)."""
    runtime_path: str
    """Its runtime folder `<runtime>/goals/<goal>`, as shown."""
    state: GoalState = field(default_factory=GoalState)
    events: list[RolloutEvent] = field(default_factory=list)
    leases: dict[str, Lease] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def id(self) -> str:
        return ID_PREFIX + self.entry.id

    @property
    def title(self) -> str:
        objective = self.state.front.get("objective")
        return self.entry.display_name or (objective if isinstance(objective, str) else "")

    def gates(self) -> list[Todo]:
        """Open user gates: the goal waits for a human."""
        return [todo for todo in self.state.todos if todo.is_gate]

    def by_status(self, role: str = "") -> Counter[str]:
        """How many todos (of `role`: "user", "agent"; all when empty) are in each status."""
        return Counter(t.status for t in self.state.todos if t.role == role or not role)

    def current(self) -> Todo | None:
        """The open agent todo being worked on (claimed), else the first open one."""
        open_ = [t for t in self.state.todos if t.role == "agent" and t.is_open]
        return next((t for t in open_ if t.claimed_by), open_[0] if open_ else None)

    def quota(self) -> Quota | None:
        """Slots spent of those allowed, after the latest quota run."""
        for run in reversed(self.runs):
            found = run.record.quota("after") if run.record is not None else None
            if found is not None:
                return found
        return None

    def holders(self) -> dict[str, str]:
        """Who holds which todo: active leases, else open todos' claims."""
        held = {t.todo_id: t.claimed_by for t in self.state.todos if t.is_open and t.claimed_by}
        held.update({todo: lease.owner for todo, lease in self.leases.items() if lease.active})
        return held

    def handoffs(self) -> list[Handoff]:
        """Todos claimed by one agent, then by another (the rollout log, in order)."""
        claimed: dict[str, str] = {}
        moves = []
        for event in self.events:
            if event.event_kind != "todo_claim" or not event.todo_id or not event.agent_id:
                continue
            before = claimed.get(event.todo_id)
            if before and before != event.agent_id:
                moves.append(Handoff(event.todo_id, before, event.agent_id, event.recorded_at))
            claimed[event.todo_id] = event.agent_id
        return moves

    def last_activity(self) -> datetime | None:
        times = [when(event.recorded_at) for event in self.events[-1:]]
        updated = self.state.front.get("updated_at")
        times.append(when(updated) if isinstance(updated, str) else None)
        return max((t for t in times if t is not None), default=None)
