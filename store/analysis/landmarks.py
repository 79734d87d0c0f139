"""Landmarks of a mission's events log: the events worth jumping to in a replay.

Each is a `Landmark` (seq, kind, short label), of one of KINDS: a failure (a step that
failed, blocked or ended outcome_unknown, an attempt that finished error or unknown, an
error or halt event), a handoff (an actor new to the log, or handoff.json), a plan
version, an approval asked (a request) or decided (a decision), a budget threshold
crossed. Events are fed in log order, as many as were read (`add`); documents land on
the first event at which the replay shows them (`store.analysis.replay`: a document
counts from the first event whose `at` is at or after its time); budget thresholds on
the first event at which the used amount (or wall time) reaches WARN_AT or all of a
`[budget]` limit (`place`, with the limits as they are now).

Pure: records in, landmarks out, no IO. Memory is bounded for a 1,000,000-line log:
per event line one float (the latest time so far); per landmark an index, a kind byte
and its label's bytes (LABEL_MAX at most); per usage event four numbers. `dump` and
`Landmarks.load` turn what the lines fed made into bytes and back (the user's cache:
`store.analysis.landmarks_cache`); documents and budget thresholds are placed again.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from store.format.problems import Problem
from store.format.records import ApprovalRequest, Budget, Decision, Handoff, Plan

KINDS = ("approval-asked", "approval-decided", "handoff", "plan", "failure", "budget")
"""Every kind of landmark, by the index kept for it."""
LABEL_MAX = 72
"""Characters of a label kept (agent text is cut here)."""
WARN_AT = 0.8
"""The share of a limit that is a threshold (as the budget gauge warns), besides all of it."""
ACTORS_KEPT = 4096
"""Distinct actors remembered: past them a new actor is no longer a handoff."""
FAILED_STATES = {"failed": "failed", "blocked": "blocked", "outcome_unknown": "outcome unknown"}
LIMITS = ("usd", "tokens", "steps")

Aim = tuple[str, int, int]
"""Where a replay goes from an event: ("landmark", hops, seq) (hops < 0: back) or
("problem", 0, seq): the first event a `hud check` problem cites (`first_cited`)."""


class Fed(msgspec.Struct, array_like=True, frozen=True):
    """What `Landmarks.add` made of the lines fed, as bytes (arrays in native order)."""

    lines: int
    times: bytes
    seqs: bytes
    kinds: bytes
    text: bytes
    ends: bytes
    actors: list[str]
    actor: str | None
    usage: tuple[bytes, bytes, bytes, bytes]


class Landmark(NamedTuple):
    seq: int
    kind: str
    label: str


@dataclass(frozen=True)
class Bearings:
    """Where a frame sits among the log's landmarks (plain data for the event loop)."""

    here: tuple[Landmark, ...]
    """The landmarks on the frame's event."""
    previous: int | None
    following: int | None
    """The seqs of the landmarks before and after it."""
    ticks: tuple[int, ...]
    """Seqs of landmarks, one per stretch of the log that has one (`Landmarks.ticks`)."""
    problem: Problem | None
    """The problem citing the earliest line of the events log."""
    scanned: int
    """Lines of the log looked at for landmarks so far."""
    aim: Aim | None = None
    """The aim this frame answers."""
    note: str = ""
    """Why the aim did not move (no landmark that way, no problem citing an event)."""


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 1] + "…"


def describe_event(record: Any) -> tuple[str, str] | None:
    """(kind, label) of an event that is a failure in itself, None for any other."""
    kind = record.type
    if kind == "step" and record.state in FAILED_STATES:
        reason = f": {record.reason}" if record.reason else ""
        return "failure", f"step {record.step} {FAILED_STATES[record.state]}{reason}"
    if kind == "attempt" and record.phase == "finished" and record.outcome in ("error", "unknown"):
        outcome = "failed" if record.outcome == "error" else "outcome unknown"
        return "failure", f"attempt {record.attempt} of {record.step} {outcome}: {record.tool}"
    if kind == "error":
        return "failure", f"error: {record.message}"
    if kind == "halt":
        return "failure", f"halt: {record.reason}"
    return None


class Landmarks:
    """The landmarks of one events log, fed its lines in order as they are read."""

    def __init__(self) -> None:
        self.lines = 0
        """Event lines fed so far (`add`)."""
        self._times = array("d")
        """Per line, the latest `at` so far (seconds since the epoch; 0 before any)."""
        self._seqs = array("Q")
        self._kinds = array("B")
        self._text = bytearray()
        self._ends = array("Q")
        """Per event landmark: its seq, kind index and label (UTF-8, up to its end)."""
        self._actors: set[str] = set()
        self._actor: str | None = None
        self._usage = (array("Q"), array("d"), array("d"), array("d"))
        """Per usage event: its seq, usd, tokens, steps."""
        self._documents: list[Landmark] = []
        self._budget: list[Landmark] = []
        self._budget_for: tuple[Any, ...] | None = None
        """The limits and lines `_budget` was found for."""

    @classmethod
    def load(cls, fed: Fed) -> Landmarks | None:
        """The landmarks of `fed` (`dump`), None when its parts do not agree."""
        found = cls()
        arrays: tuple[array[Any], ...] = (
            found._times,
            found._seqs,
            found._kinds,
            found._ends,
            *found._usage,
        )
        parts = (fed.times, fed.seqs, fed.kinds, fed.ends, *fed.usage)
        try:
            for kept, part in zip(arrays, parts, strict=True):
                kept.frombytes(part)
        except ValueError:  # a part that is not whole items
            return None
        seqs, usage = found._seqs, found._usage
        if (
            len(found._times) != fed.lines
            or not len(seqs) == len(found._kinds) == len(found._ends)
            or any(len(series) != len(usage[0]) for series in usage)
            or max(seqs, default=0) > fed.lines
            or max(usage[0], default=0) > fed.lines
            or max(found._kinds, default=0) >= len(KINDS)
            or max(found._ends, default=0) > len(fed.text)
            or len(fed.actors) > ACTORS_KEPT
        ):
            return None
        found.lines, found._text = fed.lines, bytearray(fed.text)
        found._actors, found._actor = set(fed.actors), fed.actor
        return found

    def dump(self) -> Fed:
        """What the lines fed made (not the documents and thresholds: `place` them)."""
        usage = self._usage
        return Fed(
            self.lines,
            self._times.tobytes(),
            self._seqs.tobytes(),
            self._kinds.tobytes(),
            bytes(self._text),
            self._ends.tobytes(),
            sorted(self._actors),
            self._actor,
            (usage[0].tobytes(), usage[1].tobytes(), usage[2].tobytes(), usage[3].tobytes()),
        )

    # ---- feeding ---------------------------------------------------------------------------

    def add(self, lines: Iterable[tuple[int, Any]]) -> None:
        """Fold the next event lines (line number, record or Problem), in order."""
        times = self._times
        for line, record in lines:
            if line != self.lines + 1:
                raise ValueError(f"line {line} fed after line {self.lines}")
            if isinstance(record, Problem):
                self.lines = line
                times.append(times[-1] if times else 0.0)
            else:
                self.feed(record, line)

    def feed(self, record: Any, line: int) -> None:
        """Fold the record of event line `line`, the lines before it not fed yet being
        lines that do not load (a log reader hands its fold only the records: the
        replay's fold feeds them here as it reads, `store.analysis.replay_fold`)."""
        times = self._times
        latest = times[-1] if times else 0.0
        if line - self.lines > 1:
            times.extend([latest] * (line - self.lines - 1))
        elif line <= self.lines:
            raise ValueError(f"line {line} fed after line {self.lines}")
        self.lines = line
        times.append(max(latest, record.at.timestamp()))
        self._fold(record, line)

    def _fold(self, record: Any, line: int) -> None:
        actor = record.actor
        if actor != self._actor:
            if actor not in self._actors and len(self._actors) < ACTORS_KEPT:
                if self._actor is not None:
                    self._note(line, "handoff", f"handoff from {self._actor} to {actor}")
                self._actors.add(actor)
            self._actor = actor
        if record.type == "usage":
            seqs, usd, tokens, steps = self._usage
            seqs.append(line)
            usd.append(float(record.usd))
            tokens.append(float(record.tokens))
            steps.append(float(record.steps))
            return
        found = describe_event(record)
        if found is not None:
            self._note(line, *found)

    def _note(self, line: int, kind: str, label: str) -> None:
        self._seqs.append(line)
        self._kinds.append(KINDS.index(kind))
        self._text += _cut(label).encode("utf-8", "replace")
        self._ends.append(len(self._text))

    def seq_at(self, when: datetime) -> int | None:
        """The first event at or after `when` (None: no event is that late yet)."""
        index = bisect_left(self._times, when.timestamp())
        return index + 1 if index < len(self._times) else None

    def place(
        self,
        *,
        plans: Mapping[int, Plan | None],
        requests: Mapping[str, ApprovalRequest | None],
        decisions: Mapping[str, Decision | None],
        handoff: Handoff | None,
        budget: Budget | None,
    ) -> None:
        """Put the documents that load on the events that first show them, and the budget
        thresholds of these limits (the mission's as they are now) on the events that
        first reach them."""
        found: list[tuple[datetime, str, str]] = []
        for version, plan in plans.items():
            if plan is not None:
                reason = f": {plan.reason}" if plan.reason else ""
                found.append((plan.created_at, "plan", f"plan v{version}{reason}"))
        for request_id, request in requests.items():
            if request is not None:
                label = f"approval {request_id} asked: {request.tool} for {request.step}"
                found.append((request.requested_at, "approval-asked", label))
        for request_id, decision in decisions.items():
            if decision is not None:
                verdict = "approved" if decision.decision == "approve" else "rejected"
                label = f"approval {request_id} {verdict} by {decision.decided_by}"
                found.append((decision.decided_at, "approval-decided", label))
        if handoff is not None:
            step = f" at step {handoff.current_step}" if handoff.current_step else ""
            found.append((handoff.at, "handoff", f"handoff written{step}"))
        placed = []
        for when, kind, label in found:
            seq = self.seq_at(when)
            if seq is not None:
                placed.append(Landmark(seq, kind, _cut(label)))
        self._documents = sorted(placed)
        limits = (budget.usd, budget.tokens, budget.steps, budget.wall_seconds) if budget else ()
        if self._budget_for != (limits, self.lines):
            self._budget_for = (limits, self.lines)
            crossed = self._thresholds(budget) if budget is not None else ()
            self._budget = sorted(crossed, key=lambda mark: mark.seq)

    def _thresholds(self, budget: Budget) -> Iterable[Landmark]:
        seqs, *series = self._usage
        for name, used in zip(LIMITS, series, strict=True):
            limit = getattr(budget, name)
            if limit:
                for share in (WARN_AT, 1.0):
                    index = next((i for i, v in enumerate(used) if v >= share * limit), None)
                    if index is not None:
                        yield Landmark(seqs[index], "budget", _crossed(name, share))
        if budget.wall_seconds and self._times:
            start = next((t for t in self._times if t), None)
            for share in (WARN_AT, 1.0):
                if start is not None:
                    seq = bisect_left(self._times, start + share * float(budget.wall_seconds)) + 1
                    if seq <= len(self._times):
                        yield Landmark(seq, "budget", _crossed("time", share))

    # ---- reading ---------------------------------------------------------------------------

    def _event(self, index: int) -> Landmark:
        start = self._ends[index - 1] if index else 0
        label = self._text[start : self._ends[index]].decode("utf-8", "replace")
        return Landmark(self._seqs[index], KINDS[self._kinds[index]], label)

    def all(self) -> list[Landmark]:
        """Every landmark, by seq."""
        events = [self._event(i) for i in range(len(self._seqs))]
        return sorted(events + self._documents + self._budget, key=lambda mark: mark.seq)

    def at(self, seq: int) -> list[Landmark]:
        """The landmarks on event `seq`."""
        first, stop = bisect_left(self._seqs, seq), bisect_right(self._seqs, seq)
        found = [self._event(i) for i in range(first, stop)]
        return found + [mark for mark in self._documents + self._budget if mark.seq == seq]

    def after(self, seq: int) -> int | None:
        """The seq of the first landmark after event `seq`."""
        index = bisect_right(self._seqs, seq)
        found = [self._seqs[index]] if index < len(self._seqs) else []
        found += [mark.seq for mark in self._documents + self._budget if mark.seq > seq]
        return min(found, default=None)

    def before(self, seq: int) -> int | None:
        """The seq of the last landmark before event `seq`."""
        index = bisect_left(self._seqs, seq)
        found = [self._seqs[index - 1]] if index else []
        found += [mark.seq for mark in self._documents + self._budget if mark.seq < seq]
        return max(found, default=None)

    def ticks(self, last: int, cells: int) -> tuple[int, ...]:
        """One landmark seq per stretch of the log that has one, the log (1..`last`) cut
        in `cells` stretches: where a position bar marks them."""
        found: set[int] = set()
        seqs = self._seqs
        for cell in range(cells):
            low = 1 + cell * last // cells
            index = bisect_left(seqs, low)
            if index < len(seqs) and seqs[index] < 1 + (cell + 1) * last // cells:
                found.add(seqs[index])
        found.update(mark.seq for mark in self._documents + self._budget if mark.seq <= last)
        return tuple(sorted(found))


def _crossed(name: str, share: float) -> str:
    return f"budget {name} reached {share:.0%} of its limit"


def first_cited(problems: Iterable[Problem], events_path: str, last: int) -> Problem | None:
    """Of the problems that cite a line of the events log (1..`last`: a position of the
    replay), the one citing the earliest."""
    cited = [p for p in problems if p.path == events_path and p.line and p.line <= last]
    return min(cited, key=lambda problem: problem.line or 0, default=None)
