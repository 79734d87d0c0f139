"""Replay: a mission as it was at any event of its log, from the live state's own fold.

Review a failed run by reading its state versions, not its transcript. `Replay` reads a
mission's folder into a `MissionState` (the very fold the HUD keeps) that also keeps a
checkpoint of its aggregates every `every` lines as it goes
(`store.analysis.replay_fold`). `frame(seq)` then puts the checkpoint at or before
`seq - 1` into a fresh `MissionState`, folds the few lines after it (read again by their
byte offsets, the log reader's line index), and derives what the HUD derives
(`store.derivation.derive`) twice: as of event `seq - 1` and as of event `seq`; a `Frame`
holds both and what changed between them. A jump costs at most `every` lines of each
log, however long the log (bench/replay.py).

"As of event N" (at time T, the `at` of line N):

* the events log's lines 1..N (positions are lines: they equal `seq` in a valid log);
* the evidence log's lines up to the last one whose `at`, and every `at` before it, is
  at most T;
* plan versions created, requests requested, decisions decided and the handoff written
  at or before T (a document whose time cannot be read counts from the start); intent
  and constraints as they are now (their history is in `store.writers.revisions`);
* log problems on lines up to those; the status, request statuses and budget derived
  with T as "now".

Build and refresh read files (off the event loop); `frame` reads at most `every` lines
of each log; everything returned is plain data.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any

import msgspec

from store.analysis import replay_cache
from store.analysis.replay_fold import CHECKPOINT_LINES, Recorded
from store.cache import open_cache
from store.cache.state import StateError
from store.derivation.derive import Limit, budget_use, mission_status, request_status
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.format.confined import open_on_disk
from store.format.layout import mission_dir
from store.format.load import Loaded, LogReader, verify_prefix
from store.format.problems import Problem
from store.format.records import Settings
from store.index.workspace import Workspace

__all__ = ["CHECKPOINT_LINES", "Change", "Frame", "Moment", "Replay", "moment"]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""The time taken as now for a log with no event that loads."""
EVIDENCE_SHOWN = 20
"""The latest evidence a moment lists (it counts them all)."""
SPANS_KEPT = 4
"""Spans of evidence lines between two checkpoints kept read (`Replay._evidence_lines`)."""


# ---- what a frame shows ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepAt:
    """A step of the plan in force (or one events name outside any plan)."""

    id: str
    title: str
    risk: str
    state: str | None
    reason: str
    actor: str | None
    line: int | None
    """The events line of its latest step event."""


@dataclass(frozen=True, slots=True)
class RequestAt:
    id: str
    step: str
    tool: str
    risk: str
    status: str
    requested_at: datetime | None
    decided_at: datetime | None


@dataclass(frozen=True, slots=True)
class EvidenceAt:
    id: str
    step: str
    verdict: str
    line: int


@dataclass(frozen=True, slots=True)
class Moment:
    """The mission as of one event (`seq` 0: before the first)."""

    seq: int
    at: datetime | None
    event: str
    """What the event at `seq` was, in a few words."""
    actor: str | None
    status: str
    plan_version: int | None
    steps: tuple[StepAt, ...]
    budget: tuple[Limit, ...]
    requests: tuple[RequestAt, ...]
    evidence: tuple[EvidenceAt, ...]
    """The latest EVIDENCE_SHOWN so far, oldest first."""
    evidence_lines: int
    halt: str | None
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """One thing that differs from the previous moment: `what` is status, plan, step,
    budget, request, evidence or halt; `key` names the step, limit, request or evidence."""

    what: str
    key: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Frame:
    moment: Moment
    previous: Moment
    changes: tuple[Change, ...]
    last_seq: int


# ---- the replay ------------------------------------------------------------------------------


class Replay:
    """One mission, replayable at any line of its events log.

    With `cached` (the default), logs replayed before start at the end of what was
    verified then, from the user's cache folder (`store.analysis.replay_cache`), and,
    with `keep` (the default; never in a read-only or served session), what is read and
    verified whole is kept there for the next replay."""

    def __init__(
        self,
        root: Path | str,
        mission_id: str,
        every: int = CHECKPOINT_LINES,
        cached: bool = True,
        keep: bool = True,
        marking: bool = False,
    ) -> None:
        self.workspace = Workspace(root)
        self.every = every
        self.marking = marking
        """Whether the fold feeds the events log's landmarks as it reads it from its first
        line (`Recorded.landmarks`: the Replay tab's, with no second read of each line)."""
        self.cache = open_cache(self.workspace.root) if cached else None
        self.keeps = keep
        """Whether what is verified whole goes into the cache."""
        self._resumed = False
        self._spans: dict[tuple[LogReader, int, int, int], list[tuple[int, Any]]] = {}
        self.mission = self._recorded(mission_id)

    def _recorded(self, mission_id: str) -> Recorded:
        mission = Recorded(self.workspace.root, mission_id, self.every, self.marking)
        self.workspace.missions[mission_id] = mission
        return mission

    def _read_anew(self) -> None:
        """Drop the fold and read the logs again from their first line, the cache aside
        (IO); what is read whole is kept in the cache again."""
        self._resumed = True
        self.mission = self._recorded(self.mission.id)
        self.refresh()

    def refresh(self) -> bool:
        """Read what changed in the mission's folder (of the logs, only what was appended;
        the first time, only what came after their cached prefix); False when the
        mission's folder is not there."""
        self.workspace.load_settings()
        if self.cache is not None and not self._resumed:
            self._resumed = True
            replay_cache.resume(self.mission, self.cache)
        self.workspace.apply([mission_dir(self.mission.id)])
        if self.cache is not None and self.keeps:
            replay_cache.keep(self.mission, self.cache)
        return self.mission.exists()

    @property
    def trusting(self) -> bool:
        """Whether a log's prefix was taken from the cache and not hashed again since:
        cached, not verified (`verify`)."""
        return any(
            reader is not None and reader.trusted is not None
            for reader in (self.mission.events, self.mission.evidence)
        )

    def verify(self, changed_only: bool = False) -> bool:
        """Hash again the bytes of each log taken on trust from the cache (IO, the whole
        log: sha256 only, nothing parsed again); with `changed_only`, only of a log
        written since it was verified (its `replay_cache.signature` differs: the kernel
        vouches for the others). True when they are what was verified (or nothing was
        taken on trust); else the replay starts again from the first line of each log,
        the cache aside, and reads them (IO), and False."""
        for reader in (self.mission.events, self.mission.evidence):
            if reader is None or reader.trusted is None:
                continue
            opened = open_on_disk(self.workspace.root, reader.relpath)
            whole = sha256()
            if isinstance(opened, Problem):
                intact = False
            else:
                with opened:
                    kept = self.mission.verified.get(reader.relpath)
                    if changed_only and kept == replay_cache.signature(opened.info):
                        continue
                    intact = all(
                        verify_prefix(opened, end, digest, start, whole)
                        for start, end, digest in reader.spans()
                    )
            if not intact:
                self._read_anew()
                return False
            reader.confirm(reader.offset, whole)
        return True

    @property
    def settings(self) -> Settings:
        return self.workspace.settings

    @property
    def last_seq(self) -> int:
        """How many lines the events log has (0: none yet)."""
        reader = self.mission.events
        return len(reader.line_starts) if reader is not None else 0

    @property
    def unread(self) -> Problem | None:
        """Why the events log is not read at all (not a regular file, a symlink,
        unreadable), if it is not."""
        reader = self.mission.events
        return reader.file_problems[0] if reader is not None and reader.file_problems else None

    def frame(self, seq: int) -> Frame:
        """The mission as of event `seq` (1..last_seq), as of the one before, and what
        changed. Reads at most `every` lines of each log (a checkpoint from the cache
        that does not decode: the logs again from the start, the cache aside)."""
        try:
            return self._frame(seq)
        except (StateError, msgspec.MsgspecError):
            if not self.mission.verified:  # not resumed from the cache
                raise
        self._read_anew()
        return self._frame(seq)

    def _frame(self, seq: int) -> Frame:
        last = self.last_seq
        if not 1 <= seq <= last:
            raise ValueError(f"no event {seq}: the events log has {last} lines")
        source = self.mission
        assert source.events is not None  # last_seq > 0
        before = _fresh(source)
        index = source.event_checkpoint(seq - 1)
        first, start_at = 0, None
        if index is not None:
            first = source.event_checkpoints[index].line
            start_at = source.restore_events(before, index)
        lines = source.events.read_window(first, seq - first)
        earlier = [(n, r) for n, r in lines[:-1] if not isinstance(r, Problem)]
        _fold(before._on_event, earlier)
        at_before = earlier[-1][1].at if earlier else start_at
        _, record = lines[-1]
        at = at_before if isinstance(record, Problem) else record.at
        evidence_before = self._evidence_line(at_before)
        evidence = self._evidence_line(at)
        later = self._evidence(before, evidence_before, evidence)
        after = _fresh(source)
        after.restore(before.saved(EVENT_AGGREGATES + EVIDENCE_AGGREGATES))
        if evidence < evidence_before:  # the event's time steps back: less evidence by then
            self._evidence(after, evidence, evidence)
        _fold(after._on_evidence, later)
        if not isinstance(record, Problem):
            after._on_event(record, seq)
        now = at or source.first_event_at or EPOCH
        previous = self._moment(before, seq - 1, at_before, evidence_before, None, at_before or now)
        moment = self._moment(after, seq, at, evidence, record, now)
        return Frame(moment, previous, changes(previous, moment), last)

    def _evidence_line(self, at: datetime | None) -> int:
        """The last evidence line whose time, and every time before it, is at most `at`
        (0: none). Reads at most `every` lines."""
        reader = self.mission.evidence
        if at is None or reader is None:
            return 0
        limit = at.timestamp()
        found, latest, then = self.mission.evidence_span(limit)
        stop = len(reader.line_starts) if then is None else then
        for line, record in self._evidence_lines(found, stop):
            latest = max(latest, record.at.timestamp())
            if latest > limit:
                break
            found = line
        return found

    def _evidence(self, state: MissionState, upto: int, then: int) -> list[tuple[int, Any]]:
        """Give `state` the fold of evidence lines 1..`upto` (whatever it held); return the
        records of the lines after it, up to `then`."""
        source = self.mission
        index = source.evidence_checkpoint(upto)
        first = 0
        if index is None:
            state._reset_evidence()
        else:
            first = source.evidence_checkpoints[index].line
            source.restore_evidence(state, index)
        stop = max(upto, then)
        if source.evidence is None or stop <= first:
            return []
        records = self._evidence_lines(first, stop)
        _fold(state._on_evidence, [(n, r) for n, r in records if n <= upto])
        return [(n, r) for n, r in records if n > upto]

    def _evidence_lines(self, first: int, stop: int) -> list[tuple[int, Any]]:
        """The records of evidence lines `first`+1..`stop`: from the span of lines between
        the checkpoint at `first` and the next, read once and kept (a frame asks for lines
        of the same span up to three times, and the next frame too)."""
        reader = self.mission.evidence
        assert reader is not None
        marks = self.mission.evidence_marks
        index = bisect_right(marks, first)
        end = marks[index] if index < len(marks) else len(reader.line_starts)
        if stop > end:  # past the next checkpoint: not a span
            return _records(reader.read_window(first, stop - first))
        key = (reader, reader.generation, len(reader.line_starts), first)
        span = self._spans.get(key)
        if span is None:
            span = self._spans[key] = _records(reader.read_window(first, end - first))
            while len(self._spans) > SPANS_KEPT:
                del self._spans[next(iter(self._spans))]
        return span if end == stop else span[: bisect_right(span, stop, key=_line)]

    def _moment(
        self,
        state: MissionState,
        seq: int,
        at: datetime | None,
        evidence: int,
        record: Any,
        now: datetime,
    ) -> Moment:
        _as_of(state, self.mission, at)
        state.until = (seq, evidence)
        return moment(state, seq, at, record, now, self.settings, evidence)


def _records(window: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    return [(line, record) for line, record in window if not isinstance(record, Problem)]


def _line(item: tuple[int, Any]) -> int:
    return item[0]


def _fold(on_record: Any, records: Iterable[tuple[int, Any]]) -> None:
    for line, record in records:
        on_record(record, line)


def _fresh(source: MissionState) -> MissionState:
    """A state with no aggregates yet, holding what of `source` no log or time decides."""
    state = MissionState(source.root, source.id)
    state.intent, state.constraints = source.intent, source.constraints
    state.signers = source.signers
    state.events, state.evidence = source.events, source.evidence
    state.history, state.artifacts = source.history, source.artifacts
    state.constraint_history = source.constraint_history
    state.policy_signatures = source.policy_signatures
    state.artifact_checks, state.path_problems = source.artifact_checks, source.path_problems
    return state


def _as_of(state: MissionState, source: MissionState, at: datetime | None) -> None:
    """Give `state` the documents of `source` that were written at or before `at`."""
    state.plans = _written(source.plans, "created_at", at)
    state.requests = _written(source.requests, "requested_at", at)
    state.decisions = _written(source.decisions, "decided_at", at)
    handoff = _written({"": source.handoff} if source.handoff else {}, "at", at)
    state.handoff = handoff.get("")


def _written(documents: dict[Any, Loaded[Any]], field: str, at: datetime | None) -> dict[Any, Any]:
    """The documents whose `field` is at or before `at`; one without a readable time
    counts from the start."""
    kept = {}
    for key, loaded in documents.items():
        when = getattr(loaded.record, field, None) if loaded.record is not None else None
        if when is None or (at is not None and when <= at):
            kept[key] = loaded
    return kept


# ---- deriving a moment -----------------------------------------------------------------------


def moment(
    state: MissionState,
    seq: int,
    at: datetime | None,
    record: Any,
    now: datetime,
    settings: Settings,
    evidence_lines: int,
) -> Moment:
    """What the HUD derives from `state` at `now`, as the moment of event `seq` (at `at`;
    `record` is that event, or None)."""
    plan = state.latest_plan
    evidence = tuple(
        EvidenceAt(seen.id, seen.step, seen.verdict, seen.line)
        for seen in list(state.recent_evidence)[-EVIDENCE_SHOWN:]
    )
    return Moment(
        seq=seq,
        at=at,
        event=describe(record),
        actor=getattr(record, "actor", None),
        status=mission_status(state, now, settings).value,
        plan_version=plan.version if plan else None,
        steps=steps_at(state),
        budget=budget_use(state, now).limits,
        requests=tuple(_request(state, rid, now) for rid in sorted(state.requests)),
        evidence=evidence,
        evidence_lines=evidence_lines,
        halt=state.halt.reason if state.halt else None,
        problems=tuple(state.problems()),
    )


def steps_at(state: MissionState) -> tuple[StepAt, ...]:
    """The latest plan's steps in order, then steps events name outside it."""
    plan = state.latest_plan
    planned = plan.steps if plan is not None else []
    found = []
    for step in planned:
        latest = state.step_latest.get(step.id)
        found.append(_step(step.id, step.title, step.risk, latest))
    known = {step.id for step in planned}
    for step_id in sorted(state.step_latest.keys() - known):
        found.append(_step(step_id, "", "", state.step_latest[step_id]))
    return tuple(found)


def _step(step_id: str, title: str, risk: str, latest: Any) -> StepAt:
    if latest is None:
        return StepAt(step_id, title, risk, None, "", None, None)
    return StepAt(step_id, title, risk, latest.state, latest.reason, latest.actor, latest.line)


def _request(state: MissionState, request_id: str, now: datetime) -> RequestAt:
    record = state.requests[request_id].record
    decided = state.decisions.get(request_id)
    return RequestAt(
        request_id,
        record.step if record else "",
        record.tool if record else "",
        record.risk if record else "",
        request_status(state, request_id, now).value,
        record.requested_at if record else None,
        decided.record.decided_at if decided and decided.record else None,
    )


def describe(record: Any) -> str:
    """An event in a few words (a line that does not load: its problem)."""
    if record is None:
        return ""
    if isinstance(record, Problem):
        return f"does not load: {record.message}"
    kind = record.type
    if kind == "step":
        return f"step {record.step} {record.state}" + (
            f": {record.reason}" if record.reason else ""
        )
    if kind == "attempt":
        outcome = f" ({record.outcome})" if record.outcome else ""
        return f"attempt {record.attempt} of {record.step} {record.phase}: {record.tool}{outcome}"
    if kind == "usage":
        return f"usage {record.usd:.2f} usd, {record.tokens:,} tokens, {record.steps} steps"
    if kind == "error":
        return f"error: {record.message}"
    if kind == "halt":
        return f"halt: {record.reason}"
    return str(kind)


# ---- what changed ----------------------------------------------------------------------------


def changes(before: Moment, after: Moment) -> tuple[Change, ...]:
    """What differs from `before` to `after`, in the order a reader looks: status, plan,
    steps, budget (but wall time), requests, evidence, halt."""
    found: list[Change] = []

    def differ(what: str, key: str, old: str, new: str) -> None:
        if old != new:
            found.append(Change(what, key, old, new))

    differ("status", "", before.status, after.status)
    differ("plan", "", _version(before.plan_version), _version(after.plan_version))
    old_steps = {step.id: step.state or "" for step in before.steps}
    for step in after.steps:
        differ("step", step.id, old_steps.pop(step.id, ""), step.state or "")
    for step_id, state in old_steps.items():
        differ("step", step_id, state, "(not in the plan)")
    old_limits = {limit.name: _number(limit.used) for limit in before.budget}
    for limit in after.budget:
        if limit.name != "time":  # wall time moves with every event
            differ("budget", limit.name, old_limits.get(limit.name, ""), _number(limit.used))
    old_requests = {request.id: request.status for request in before.requests}
    for request in after.requests:
        differ("request", request.id, old_requests.get(request.id, ""), request.status)
    seen = {item.id for item in before.evidence}
    for item in after.evidence:
        if item.id not in seen and item.line > before.evidence_lines:
            differ("evidence", item.id, "", f"{item.verdict} for {item.step}")
    differ("halt", "", before.halt or "", after.halt or "")
    return tuple(found)


def _version(version: int | None) -> str:
    return f"v{version}" if version is not None else ""


def _number(value: float) -> str:
    return f"{int(value):,}" if value == int(value) else f"{value:,.2f}"
