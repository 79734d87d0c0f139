"""Coordination metrics over a time window, per mission and across a state directory.

Counted from what the fold noted (`MissionState.ledger`: handoffs, step states, tool
calls, findings), the approval requests and decisions, and the human history of intent
and constraints. docs/metrics.md defines each: what counts, from which records.
`mission_metrics` is pure; `directory_metrics` also reads each mission's history files
(IO: off the event loop) unless handed their edit times (`edit_times`, the IO part).
Results are plain data: numbers, ratios, spreads of seconds, and per metric a series of
equal time buckets over the window (for sparklines).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from store.derivation.derive import (
    RequestStatus,
    over_budget,
    request_binding,
    request_status,
    retries_exhausted,
)
from store.derivation.ledger import Mark
from store.derivation.mission import MissionState
from store.derivation.plan_binding import plan_binding
from store.format.records import ApprovalRequest
from store.index.workspace import Workspace
from store.writers.revisions import revisions

BUCKETS = 24
TROUBLE = frozenset({"failed", "blocked", "outcome_unknown"})
ESCALATING = frozenset({"blocked", "outcome_unknown"})
HANDOFF_ENDS = frozenset({"succeeded", "failed", "outcome_unknown"})
DUPLICATES = frozenset({"redone-effect", "replayed-effect", "unkeyed-repeat"})
"""Findings of an effect done (or maybe done) twice."""
SERIES = (
    "handoffs",
    "conflicts",
    "stale_context",
    "rework",
    "duplicate_effects",
    "calls",
    "tool_errors",
    "rejections",
    "escalations",
    "approval_latency",
    "waiting_seconds",
    "human_edits",
)
"""The series every result carries, one value per bucket (`approval_latency`: the mean
of the bucket's latencies in seconds, 0 when none)."""


@dataclass(frozen=True, slots=True)
class Ratio:
    """`count` of `of` (a rate of None when `of` is 0)."""

    count: int = 0
    of: int = 0

    @property
    def rate(self) -> float | None:
        return self.count / self.of if self.of else None


@dataclass(frozen=True, slots=True)
class Spread:
    """Durations in seconds that ended in the window, and how many had not ended by then."""

    count: int = 0
    median: float | None = None
    p90: float | None = None
    max: float | None = None
    open: int = 0


@dataclass(frozen=True, slots=True)
class Metrics:
    handoffs: Ratio
    """Handoffs whose new actor succeeded at a step, of those that ended either way."""
    handoffs_open: int
    conflicts: int
    stale_context: int
    rework: Ratio
    """Successes of a step that had succeeded before, of all successes."""
    duplicate_effects: int
    """Effects done again under another key (or none) after they finished ok or might have."""
    tool_errors: Ratio
    """Calls that ended in error or unknown, of all calls."""
    tools: dict[str, Ratio]
    rejections: Ratio
    """Requests rejected, or refused (stale or expired unused), of those decided or refused."""
    recovery: Spread
    escalation: Ratio
    """Steps that needed a human, of the steps active."""
    approval_latency: Spread
    waiting_seconds: float
    human_edits: int
    series: dict[str, tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class MetricsReport:
    since: datetime
    until: datetime
    bucket_seconds: float
    total: Metrics
    missions: dict[str, Metrics]
    partial: dict[str, datetime]
    """Missions whose ledger dropped marks (it keeps the latest `store.derivation.ledger.JOURNAL`)
    before the window's end: counted from this time on."""


@dataclass(slots=True)
class _Tally:
    """What a window holds, in sums that add up across missions."""

    buckets: int
    handoffs_ok: int = 0
    handoffs_failed: int = 0
    handoffs_open: int = 0
    conflicts: int = 0
    stale_context: int = 0
    successes: int = 0
    repeats: int = 0
    duplicates: int = 0
    tools: dict[str, list[int]] = field(default_factory=dict)
    decided_or_refused: int = 0
    refused: int = 0
    recoveries: list[float] = field(default_factory=list)
    unrecovered: int = 0
    active_steps: int = 0
    escalated_steps: int = 0
    latencies: list[float] = field(default_factory=list)
    waiting: float = 0.0
    human_edits: int = 0
    series: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (*SERIES, "latency_count"):
            self.series.setdefault(name, [0.0] * self.buckets)

    def add(self, other: _Tally) -> None:
        for name in _SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for tool, (calls, errors) in other.tools.items():
            mine = self.tools.setdefault(tool, [0, 0])
            mine[0] += calls
            mine[1] += errors
        for name, values in other.series.items():
            self.series[name] = [a + b for a, b in zip(self.series[name], values, strict=True)]


_SUMS = (
    "handoffs_ok",
    "handoffs_failed",
    "handoffs_open",
    "conflicts",
    "stale_context",
    "successes",
    "repeats",
    "duplicates",
    "decided_or_refused",
    "refused",
    "recoveries",
    "unrecovered",
    "active_steps",
    "escalated_steps",
    "latencies",
    "waiting",
    "human_edits",
)


class _Window:
    def __init__(self, since: datetime, until: datetime, buckets: int) -> None:
        self.since, self.until, self.buckets = since, until, buckets
        self.width = max((until - since).total_seconds(), 1e-9) / buckets

    def holds(self, at: datetime | None) -> bool:
        return at is not None and self.since <= at <= self.until

    def bucket(self, at: datetime) -> int:
        index = int((at - self.since).total_seconds() / self.width)
        return min(max(index, 0), self.buckets - 1)

    def count(self, tally: _Tally, name: str, at: datetime, amount: float = 1.0) -> None:
        tally.series[name][self.bucket(at)] += amount


# ---- one mission --------------------------------------------------------------------------


def mission_metrics(
    mission: MissionState,
    since: datetime,
    until: datetime,
    edits: Iterable[datetime] = (),
    buckets: int = BUCKETS,
) -> Metrics:
    """The metrics of one mission over [since, until]; `edits` are the times of human
    edits of its intent and constraints (`directory_metrics` reads them)."""
    return _finish(_tally(mission, _Window(since, until, buckets), edits))


def _tally(mission: MissionState, window: _Window, edits: Iterable[datetime]) -> _Tally:
    tally = _Tally(window.buckets)
    marks = [mark for mark in mission.ledger.journal if mark.at <= window.until]
    _handoffs(marks, window, tally)
    _steps(marks, window, tally)
    duplicated: set[int] = set()
    for mark in marks:
        if not window.holds(mark.at):
            continue
        if mark.kind == "contested":
            tally.conflicts += 1
            window.count(tally, "conflicts", mark.at)
        elif mark.kind in ("stale-plan", "forgotten-ref"):
            tally.stale_context += 1
            window.count(tally, "stale_context", mark.at)
        elif mark.kind in DUPLICATES and mark.line not in duplicated:  # once an attempt
            duplicated.add(mark.line)
            tally.duplicates += 1
            window.count(tally, "duplicate_effects", mark.at)
        elif mark.kind == "call":
            failed = mark.detail != "ok"
            counts = tally.tools.setdefault(mark.subject, [0, 0])
            counts[0] += 1
            counts[1] += failed
            window.count(tally, "calls", mark.at)
            window.count(tally, "tool_errors", mark.at, failed)
    _requests(mission, window, tally)
    _escalation(mission, marks, window, tally)
    for at in edits:
        if window.holds(at):
            tally.human_edits += 1
            window.count(tally, "human_edits", at)
    return tally


def _handoffs(marks: list[Mark], window: _Window, tally: _Tally) -> None:
    """Each handoff in the window ends at the new actor's first success (ok), or its
    first failed or outcome_unknown step or halt (failed); else it is open."""
    for index, mark in enumerate(marks):
        if mark.kind != "handoff" or not window.holds(mark.at):
            continue
        window.count(tally, "handoffs", mark.at)
        outcome = next(
            (
                later.subject == "succeeded"
                for later in marks[index + 1 :]
                if later.actor == mark.actor
                and (
                    later.kind == "halt"
                    or (later.kind == "state" and later.subject in HANDOFF_ENDS)
                )
            ),
            None,
        )
        if outcome is None:
            tally.handoffs_open += 1
        elif outcome:
            tally.handoffs_ok += 1
        else:
            tally.handoffs_failed += 1


def _steps(marks: list[Mark], window: _Window, tally: _Tally) -> None:
    """Rework (a success of a step that succeeded before) and recovery (from a step's
    first trouble to its next success)."""
    succeeded: set[str] = set()
    trouble: dict[str, datetime] = {}
    for mark in marks:
        if mark.kind != "state" or mark.step is None:
            continue
        step, inside = mark.step, window.holds(mark.at)
        if mark.subject in TROUBLE:
            trouble.setdefault(step, mark.at)
            continue
        start = trouble.pop(step, None)
        if inside:
            tally.successes += 1
            if step in succeeded:
                tally.repeats += 1
                window.count(tally, "rework", mark.at)
            if start is not None:
                tally.recoveries.append((mark.at - start).total_seconds())
        succeeded.add(step)
    tally.unrecovered += len(trouble)


def _requests(mission: MissionState, window: _Window, tally: _Tally) -> None:
    """Rejections, stale decisions (a conflict), approval latency and time waiting."""
    pending: list[tuple[datetime, datetime]] = []
    for request_id, loaded in mission.requests.items():
        request = loaded.record
        if request is None:
            continue
        decided = mission.decisions.get(request_id)
        decision = decided.record if decided else None
        if window.holds(request.requested_at):
            status = request_status(mission, request_id, window.until)
            if request_id in mission.used_approvals:
                status = RequestStatus.APPROVED
            if status is not RequestStatus.PENDING:
                tally.decided_or_refused += 1
            if status in (RequestStatus.REJECTED, RequestStatus.STALE, RequestStatus.EXPIRED):
                tally.refused += 1
                window.count(tally, "rejections", request.requested_at)
        if decision is not None and window.holds(decision.decided_at):
            latency = (decision.decided_at - request.requested_at).total_seconds()
            tally.latencies.append(latency)
            window.count(tally, "approval_latency", decision.decided_at, latency)
            window.count(tally, "latency_count", decision.decided_at)
            if mission.decision_is_current(request_id) is False:
                tally.conflicts += 1
                window.count(tally, "conflicts", decision.decided_at)
        decided_at = decision.decided_at if decision else None
        ends = [
            t
            for t in (
                decided_at,
                request.expires_at,
                _stale_from(mission, request_id, request),
                window.until,
            )
            if t is not None
        ]
        pending.append((max(request.requested_at, window.since), min(ends)))
    for start, end in _union(pending):
        tally.waiting += (end - start).total_seconds()
        _spread_seconds(window, tally, start, end)


def _stale_from(
    mission: MissionState, request_id: str, request: ApprovalRequest
) -> datetime | None:
    """When a newer plan version left the request stale (that version's created_at), or
    None when none did (or when that version does not load)."""
    if not request_binding(mission, request_id).stale:
        return None
    plans = {v: p.record for v, p in mission.plans.items() if v >= request.plan_version}
    for version in sorted(v for v in plans if v > request.plan_version):
        upto = {v: plan for v, plan in plans.items() if v <= version}
        if plan_binding(upto, request.plan_version, request.step).stale:
            plan = plans[version]
            return plan.created_at if plan is not None else None
    return None


def _union(spans: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """Overlapping spans merged (empty ones dropped)."""
    merged: list[tuple[datetime, datetime]] = []
    for start, end in sorted(span for span in spans if span[0] < span[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _spread_seconds(window: _Window, tally: _Tally, start: datetime, end: datetime) -> None:
    """Add the seconds of [start, end] to the buckets they fall in."""
    while start < end:
        index = window.bucket(start)
        edge = window.since + timedelta(seconds=window.width * (index + 1))
        stop = min(end, edge) if index < window.buckets - 1 else end
        tally.series["waiting_seconds"][index] += (stop - start).total_seconds()
        start = stop


def _escalation(mission: MissionState, marks: list[Mark], window: _Window, tally: _Tally) -> None:
    """Steps active in the window (a step event in it), and those that needed a human: an
    approval request for them, blocked or outcome_unknown, their attempts used up, or (not
    succeeded) when the usage went past the budget and the run did not halt."""
    active = {step for step, latest in mission.step_latest.items() if latest.at >= window.since}
    needed: dict[str, datetime] = {}
    for mark in marks:
        if mark.kind == "state" and mark.subject in ESCALATING and window.holds(mark.at):
            needed.setdefault(mark.step or "", mark.at)
    for loaded in mission.requests.values():
        request = loaded.record
        if request is not None and window.holds(request.requested_at):
            needed.setdefault(request.step, request.requested_at)
    for step in retries_exhausted(mission):
        latest = mission.step_latest.get(step)
        if latest is not None and window.holds(latest.at):
            needed.setdefault(step, latest.at)
    overruns = over_budget(mission) if mission.halt is None else []
    overrun = min((o.at for o in overruns if o.at <= window.until), default=None)
    if overrun is not None:
        for step, latest in mission.step_latest.items():
            if latest.state != "succeeded":
                needed.setdefault(step, max(overrun, window.since))
    needed = {step: at for step, at in needed.items() if step in active}
    tally.active_steps += len(active)
    tally.escalated_steps += len(needed)
    for at in needed.values():
        window.count(tally, "escalations", at)


# ---- results ------------------------------------------------------------------------------


def _spread(values: list[float], still_open: int = 0) -> Spread:
    if not values:
        return Spread(open=still_open)
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    p90 = ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]
    return Spread(len(ordered), median, p90, ordered[-1], still_open)


def _finish(tally: _Tally) -> Metrics:
    series = {name: tuple(values) for name, values in tally.series.items() if name in SERIES}
    counts = tally.series["latency_count"]
    series["approval_latency"] = tuple(
        total / count if count else 0.0
        for total, count in zip(tally.series["approval_latency"], counts, strict=True)
    )
    calls = sum(c for c, _ in tally.tools.values())
    errors = sum(e for _, e in tally.tools.values())
    return Metrics(
        handoffs=Ratio(tally.handoffs_ok, tally.handoffs_ok + tally.handoffs_failed),
        handoffs_open=tally.handoffs_open,
        conflicts=tally.conflicts,
        stale_context=tally.stale_context,
        rework=Ratio(tally.repeats, tally.successes),
        duplicate_effects=tally.duplicates,
        tool_errors=Ratio(errors, calls),
        tools={tool: Ratio(e, c) for tool, (c, e) in sorted(tally.tools.items())},
        rejections=Ratio(tally.refused, tally.decided_or_refused),
        recovery=_spread(tally.recoveries, tally.unrecovered),
        escalation=Ratio(tally.escalated_steps, tally.active_steps),
        approval_latency=_spread(tally.latencies),
        waiting_seconds=tally.waiting,
        human_edits=tally.human_edits,
        series=series,
    )


# ---- a directory --------------------------------------------------------------------------


def edit_times(root: Path, mission_ids: Iterable[str]) -> dict[str, list[datetime]]:
    """The times of the human edits of each mission's intent and constraints: reads its
    history files (IO)."""
    return {
        mission_id: [
            revision.at
            for revision in revisions(root, mission_id)
            if revision.action == "edited" and revision.at is not None
        ]
        for mission_id in mission_ids
    }


def directory_metrics(
    workspace: Workspace,
    since: datetime,
    until: datetime | None = None,
    buckets: int = BUCKETS,
    edits: Mapping[str, list[datetime]] | None = None,
) -> MetricsReport:
    """Every mission's metrics over [since, until] (until: the workspace's clock) and
    their sum. `edits` as `edit_times` reads them; read here (IO) when None."""
    end = until or workspace.clock()
    window = _Window(since, end, buckets)
    total = _Tally(buckets)
    missions: dict[str, Metrics] = {}
    partial: dict[str, datetime] = {}
    if edits is None:
        edits = edit_times(workspace.root, workspace.missions)
    for mission_id, mission in sorted(workspace.missions.items()):
        tally = _tally(mission, window, edits.get(mission_id, ()))
        missions[mission_id] = _finish(tally)
        total.add(tally)
        journal = mission.ledger.journal
        if len(journal) == journal.maxlen and journal[0].at > since:
            partial[mission_id] = journal[0].at
    return MetricsReport(since, end, window.width, _finish(total), missions, partial)
