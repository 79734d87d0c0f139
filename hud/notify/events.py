"""What is worth a notification now: derived from the workspace, as the HUD derives it.

Events are a function of the workspace and the clock: a request in the approval queue
(`store.index.approval_checks.approval_queue`, the HUD's queue, loopexec and loopx asks
included) is `pending`, and `expiring` once its time left is under the lead; a mission
the derivation says needs you for another reason (`needs_you_reasons`) gives one
`needs_you` event per reason; a request whose waiter withdrew it (or is gone) is
`withdrawn`, and one that expired without a decision `expired`. Each has a key that stays
the same while it holds, so a target is sent it once (`hud.notify.sent`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from store.derivation.derive import RequestStatus, needs_you_reasons
from store.index.approval_checks import QueueItem, approval_queue

if TYPE_CHECKING:
    from store.format.problems import Problem
    from store.format.records import NotifySeverity
    from store.index.workspace import Workspace

Kind = Literal["pending", "expiring", "needs_you", "withdrawn", "expired"]
SEVERITY: dict[Kind, NotifySeverity] = {
    "pending": "warning",
    "expiring": "critical",
    "needs_you": "critical",
    "withdrawn": "info",
    "expired": "info",
}
FOLLOW_UPS: frozenset[Kind] = frozenset({"withdrawn", "expired"})
"""Events sent to a target only if it was told the request was pending: news of an
ending is for those who heard of the beginning."""


@dataclass(frozen=True)
class Lead:
    """How long before a pending request expires to warn: `seconds`, or `fraction` of
    its lifetime (requested to expires) when that is shorter."""

    seconds: float = 300.0
    fraction: float = 0.25

    def of(self, requested_at: datetime | None, expires_at: datetime) -> timedelta:
        lead = self.seconds
        if requested_at is not None:
            lifetime = (expires_at - requested_at).total_seconds()
            lead = min(lead, max(0.0, lifetime) * self.fraction)
        return timedelta(seconds=lead)


@dataclass(frozen=True)
class Event:
    """One thing a human may need to act on (or be told has ended)."""

    kind: Kind
    row: str
    """The mission (or other row: a SMALL workspace, a loopexec run) it is about."""
    request_id: str | None = None
    risk: str | None = None
    tool: str = ""
    summary: str = ""
    plan_version: int | None = None
    expires_at: datetime | None = None
    requested_at: datetime | None = None
    why: str = ""
    """For `needs_you`: the reason, in words."""
    reason: str = field(default="", compare=False)
    """For `needs_you`: the reason's stable key."""

    @property
    def key(self) -> str:
        """The same while the event holds: what the sent record remembers."""
        subject = f"{self.row}/{self.request_id}" if self.request_id else self.row
        return f"{self.kind}:{subject}" + (f":{self.reason}" if self.reason else "")

    @property
    def severity(self) -> NotifySeverity:
        return SEVERITY[self.kind]

    def turns(self, lead: Lead) -> list[datetime]:
        """When a pending request's events change by the clock alone: it becomes
        `expiring`, then `expired`."""
        if self.kind != "pending" or self.expires_at is None:
            return []
        return [self.expires_at - lead.of(self.requested_at, self.expires_at), self.expires_at]

    @property
    def told_pending(self) -> str:
        """The key of the `pending` event of the same request (for a follow-up)."""
        return f"pending:{self.row}/{self.request_id}"


def derive_events(workspace: Workspace, now: datetime, lead: Lead) -> list[Event]:
    """Every event that holds now, requests first (soonest expiry first), then missions."""
    found: list[Event] = []
    for item in approval_queue(workspace, now, everything=True):
        found.extend(_request_events(workspace, item, now, lead))
    for mission_id, mission in sorted(workspace.missions.items()):
        found.extend(
            Event("needs_you", mission_id, why=reason.why, reason=reason.key)
            for reason in needs_you_reasons(mission)
        )
    rows = [row for _, row in sorted(workspace.external_summaries().items())]
    needing = [row.id for row in rows if row.status == "needs_you"]
    by_row = workspace.problems_by_row() if needing else {}
    for row_id in needing:
        found.extend(
            Event("needs_you", row_id, why=f"{p.where}: {p.message}", reason=_problem_key(p))
            for p in by_row.get(row_id, [])
            if p.severity == "error"
        )
    return found


def _problem_key(problem: Problem) -> str:
    """As `needs_you_reasons` names a mission's problem."""
    return f"problem:{problem.where}:{problem.code}"


def _request_events(
    workspace: Workspace, item: QueueItem, now: datetime, lead: Lead
) -> list[Event]:
    def event(kind: Kind, why: str = "") -> Event:
        return Event(
            kind,
            item.mission,
            item.request_id,
            item.risk,
            item.tool,
            item.summary,
            item.plan_version,
            item.expires_at,
            item.requested_at,
            why,
        )

    if item.status is RequestStatus.PENDING:
        if item.nobody_waiting is not None:
            return [event("withdrawn", item.nobody_waiting)]
        found = [event("pending")]
        expires_at = item.expires_at
        if expires_at is not None and expires_at - now <= lead.of(item.requested_at, expires_at):
            found.append(event("expiring"))
        return found
    mission = workspace.missions.get(item.mission)
    undecided = mission is not None and item.request_id not in mission.decisions
    if item.status is RequestStatus.EXPIRED and undecided:
        return [event("expired")]
    return []
