"""The replay's fold: the live state's own fold, with a checkpoint every `every` lines.

`Recorded` is a `MissionState` that, as it folds a log, keeps a copy of its aggregates
every `every` lines (`Checkpoint`). `restore_events(state, index)` and
`restore_evidence(state, index)` put a checkpoint back into a fresh state; the replay
then folds the few lines after it.

What a copy holds is bounded whatever the log's length: the two append-only series of
the events fold (the ledger's `journal` of marks, the `usage` points), whose deques
hold thousands of items, are kept in each checkpoint only as what was added since the
previous one (each item carries its line: those past the previous checkpoint's line
are new); a restore gathers the latest ones walking back. A copy of them in every
checkpoint would hold each mark in up to four thousand copies (memory, and bytes in
the cache).

Each evidence checkpoint also keeps the latest time of the evidence folded by then (times
in a log may step back): the replay finds "the evidence as of T" by bisecting those and
reading at most `every` lines after the checkpoint found.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from store.derivation.mission import (
    EVENT_AGGREGATES,
    EVIDENCE_AGGREGATES,
    MissionState,
)

CHECKPOINT_LINES = 1024
"""A copy of the aggregates every this many lines: a jump folds at most this many."""
NO_TIME = float("-inf")
"""The latest evidence time before any evidence."""


class Checkpoint(NamedTuple):
    """The fold's aggregates once line `line` was folded (`saved`, see the module's
    docstring for its series), and the time of that line: of the event, or the latest
    time of the evidence so far (a POSIX timestamp)."""

    line: int
    at: datetime | None
    saved: dict[str, Any]
    latest: float = NO_TIME


class Recorded(MissionState):
    """A MissionState that keeps a checkpoint every `every` lines as it folds."""

    def __init__(self, root: Path, mission_id: str, every: int = CHECKPOINT_LINES) -> None:
        self.every = every
        super().__init__(root, mission_id)

    def _reset_events(self) -> None:
        super()._reset_events()
        self.event_checkpoints: list[Checkpoint] = []
        self.event_lines = array("Q")
        self._next_event = self.every

    def _reset_evidence(self) -> None:
        super()._reset_evidence()
        self.evidence_checkpoints: list[Checkpoint] = []
        self.evidence_marks = array("Q")
        self.evidence_latest = array("d")
        self._next_evidence = self.every
        self._latest = NO_TIME

    def _on_event(self, event: Any, line: int) -> None:
        super()._on_event(event, line)
        if line >= self._next_event:
            self.take_event_checkpoint(Checkpoint(line, event.at, self._event_copy()))

    def _on_evidence(self, item: Any, line: int) -> None:
        super()._on_evidence(item, line)
        stamp = item.at.timestamp()
        if stamp > self._latest:
            self._latest = stamp
        if line >= self._next_evidence:
            saved = self.saved(EVIDENCE_AGGREGATES)
            self.take_evidence_checkpoint(Checkpoint(line, item.at, saved, self._latest))

    def take_event_checkpoint(self, checkpoint: Checkpoint) -> None:
        self.event_checkpoints.append(checkpoint)
        self.event_lines.append(checkpoint.line)
        self._next_event = checkpoint.line + self.every

    def take_evidence_checkpoint(self, checkpoint: Checkpoint) -> None:
        self.evidence_checkpoints.append(checkpoint)
        self.evidence_marks.append(checkpoint.line)
        self.evidence_latest.append(checkpoint.latest)
        self._next_evidence = checkpoint.line + self.every
        self._latest = max(self._latest, checkpoint.latest)

    def _event_copy(self) -> dict[str, Any]:
        """The events fold's aggregates, its series as what was added since the last
        checkpoint."""
        saved = self.saved(EVENT_AGGREGATES)
        since = self.event_lines[-1] if self.event_lines else 0
        ledger = saved["ledger"]
        ledger.journal = _added(ledger.journal, since)
        saved["usage"] = _added(saved["usage"], since)
        return saved

    def event_checkpoint(self, line: int) -> int | None:
        """The index of the last events checkpoint at or before `line`."""
        index = bisect_right(self.event_lines, line)
        return index - 1 if index else None

    def evidence_checkpoint(self, line: int) -> int | None:
        """The index of the last evidence checkpoint at or before `line`."""
        index = bisect_right(self.evidence_marks, line)
        return index - 1 if index else None

    def restore_events(self, state: MissionState, index: int) -> datetime | None:
        """Give `state` the events fold of checkpoint `index`; returns its time."""
        checkpoints = self.event_checkpoints
        state.restore(checkpoints[index].saved)
        journal = state.ledger.journal
        state.ledger.journal = _gathered(checkpoints, index, lambda s: s["ledger"].journal, journal)
        state.usage = _gathered(checkpoints, index, lambda s: s["usage"], state.usage)
        return checkpoints[index].at

    def restore_evidence(self, state: MissionState, index: int) -> None:
        """Give `state` the evidence fold of checkpoint `index`."""
        state.restore(self.evidence_checkpoints[index].saved)

    def evidence_span(self, latest: float) -> tuple[int, float, int | None]:
        """Where the last evidence line whose time, and every time before it, is at most
        `latest` lies: (the line of the last checkpoint within, its latest time; the line
        of the first checkpoint past it, None when there is none). The lines between are
        at most `every`."""
        index = bisect_right(self.evidence_latest, latest)
        marks = self.evidence_marks
        start, then = (marks[index - 1], self.evidence_latest[index - 1]) if index else (0, NO_TIME)
        return start, then, marks[index] if index < len(marks) else None


def _added(series: deque[Any], since: int) -> deque[Any]:
    """The items of an append-only series (each with its `line`) past line `since`."""
    count = 0
    for item in reversed(series):
        if item.line <= since:
            break
        count += 1
    added: deque[Any] = deque(maxlen=series.maxlen)
    if count:
        added.extend(series[i] for i in range(len(series) - count, len(series)))
    return added


def _gathered(
    checkpoints: Sequence[Checkpoint],
    index: int,
    series: Callable[[dict[str, Any]], deque[Any]],
    like: deque[Any],
) -> deque[Any]:
    """The series as it was at checkpoint `index`: the latest of what each checkpoint
    back to the first added, up to the deque's length."""
    limit = like.maxlen or 0
    parts: list[deque[Any]] = []
    count = 0
    while index >= 0 and count < limit:
        part = series(checkpoints[index].saved)
        parts.append(part)
        count += len(part)
        index -= 1
    gathered: deque[Any] = deque(maxlen=like.maxlen)
    for part in reversed(parts):
        gathered.extend(part)
    return gathered
