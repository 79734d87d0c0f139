"""The replay's fold: the live state's own fold, with a checkpoint every `every` lines.

`Recorded` is a `MissionState` that, as it folds a log, keeps a `Checkpoint` of its
aggregates every `every` lines. `restore_events(state, index)` and
`restore_evidence(state, index)` put a checkpoint back into a fresh state; the replay
then folds the few lines after it.

A checkpoint holds its aggregates as bytes (`store.cache.state`, the versioned codec
of the fold): what a million-line log keeps is a few kilobytes per checkpoint that the
garbage collector never walks, and it is what the cache keeps (`replay_cache`). The
two append-only series of the events fold (the ledger's `journal` of marks and the
`usage` points, deques of thousands of items) are kept apart, as what was added since
the previous checkpoint (each item carries its line: those past the previous
checkpoint's line are new); a restore gathers the latest ones walking back. Copied
whole into every checkpoint, each mark would be kept up to four thousand times.

Each evidence checkpoint also keeps the latest time of the evidence folded by then (times
in a log may step back): the replay finds "the evidence as of T" by bisecting those and
reading at most `every` lines after the checkpoint found.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import deque
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from store.cache.state import StateError, decode_state, encode_state
from store.derivation.ledger import Mark
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.derivation.view import UsagePoint
from store.format.layout import Kind
from store.format.load import LogReader

CHECKPOINT_LINES = 1024
"""A checkpoint every this many lines: a jump folds at most this many."""
ZERO = timedelta(0)
NO_TIME = float("-inf")
"""The latest evidence time before any evidence."""
Series = tuple[list[Mark], list[UsagePoint]]
"""What a checkpoint's series added: marks of the journal, usage points."""
_SERIES_ENCODER = msgspec.msgpack.Encoder()
_SERIES_DECODER = msgspec.msgpack.Decoder(Series)


class Checkpoint(NamedTuple):
    """The fold once line `line` was folded: its aggregates (`state`) and, for the events
    fold, what its series added since the previous checkpoint (`series`: `Series` as
    msgpack); the time of the line, and the latest time of the
    evidence so far (a POSIX timestamp; evidence only)."""

    line: int
    at: datetime | None
    state: bytes
    series: bytes = b""
    latest: float = NO_TIME
    head: str = ""
    """The sha256 of the line (the chain head there)."""


class Recorded(MissionState):
    """A MissionState that keeps a checkpoint every `every` lines as it folds."""

    def __init__(self, root: Path, mission_id: str, every: int = CHECKPOINT_LINES) -> None:
        self.every = every
        self.readers: dict[Kind, LogReader] = {}
        """The last reader made of each log (its chain head is each checkpoint's)."""
        self.kept: dict[str, tuple[int, int]] = {}
        """Each log's (inode, lines) as the cache has it (`replay_cache`)."""
        self.verified: dict[str, tuple[int, int, int, int, int]] = {}
        """The signature of each log resumed from the cache as it was verified then
        (`replay_cache.signature`)."""
        super().__init__(root, mission_id)

    def reader(self, kind: Kind, rel: str) -> LogReader:
        found = self.readers[kind] = super().reader(kind, rel)
        return found

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
        self.latest = NO_TIME
        """The latest time of the evidence folded (a POSIX timestamp)."""

    def _on_event(self, event: Any, line: int) -> None:
        MissionState._on_event(self, event, line)
        if line >= self._next_event:
            self._event_checkpoint(event.at, line)

    def _on_evidence(self, item: Any, line: int) -> None:
        MissionState._on_evidence(self, item, line)
        stamp = item.at.timestamp()
        if stamp > self.latest:
            self.latest = stamp
        if line >= self._next_evidence:
            self._next_evidence = line + self.every
            try:
                state = encode_state({name: getattr(self, name) for name in EVIDENCE_AGGREGATES})
            except StateError:
                return
            head = self.readers[Kind.EVIDENCE].last_hash
            self.add_evidence_checkpoint(Checkpoint(line, item.at, state, b"", self.latest, head))

    def _event_checkpoint(self, at: datetime, line: int) -> None:
        """Keep the events fold as of `line`, its series as what was added since the last
        checkpoint (none when the fold holds what the codec cannot write)."""
        self._next_event = line + self.every
        since = self.event_lines[-1] if self.event_lines else 0
        ledger, usage = self.ledger, self.usage
        empty: deque[Any] = deque(maxlen=usage.maxlen)
        journal, ledger.journal = ledger.journal, deque(maxlen=ledger.journal.maxlen)
        try:  # the aggregates as they are (encoded, not copied), the series apart
            state = encode_state(
                {
                    name: empty if name == "usage" else getattr(self, name)
                    for name in EVENT_AGGREGATES
                }
            )
            series = _encode_series(_added(journal, since), _added(usage, since))
        except StateError:
            return
        finally:
            ledger.journal = journal
        head = self.readers[Kind.EVENTS].last_hash
        self.add_event_checkpoint(Checkpoint(line, at, state, series, head=head))

    def add_event_checkpoint(self, checkpoint: Checkpoint) -> None:
        self.event_checkpoints.append(checkpoint)
        self.event_lines.append(checkpoint.line)
        self._next_event = checkpoint.line + self.every

    def add_evidence_checkpoint(self, checkpoint: Checkpoint) -> None:
        self.evidence_checkpoints.append(checkpoint)
        self.evidence_marks.append(checkpoint.line)
        self.evidence_latest.append(checkpoint.latest)
        self._next_evidence = checkpoint.line + self.every

    def event_checkpoint(self, line: int) -> int | None:
        """The index of the last events checkpoint at or before `line`."""
        index = bisect_right(self.event_lines, line)
        return index - 1 if index else None

    def evidence_checkpoint(self, line: int) -> int | None:
        """The index of the last evidence checkpoint at or before `line`."""
        index = bisect_right(self.evidence_marks, line)
        return index - 1 if index else None

    def restore_events(self, state: MissionState, index: int) -> datetime | None:
        """Give `state` the events fold of checkpoint `index`; returns its time. Raises
        `StateError` on bytes the codec did not write."""
        checkpoints = self.event_checkpoints
        state.restore(decode_state(checkpoints[index].state))
        state.ledger.journal = _gathered(checkpoints, index, 0, state.ledger.journal)
        state.usage = _gathered(checkpoints, index, 1, state.usage)
        return checkpoints[index].at

    def restore_evidence(self, state: MissionState, index: int) -> None:
        """Give `state` the evidence fold of checkpoint `index`."""
        state.restore(decode_state(self.evidence_checkpoints[index].state))

    def evidence_span(self, latest: float) -> tuple[int, float, int | None]:
        """Where the last evidence line whose time, and every time before it, is at most
        `latest` lies: (the line of the last checkpoint within, its latest time; the line
        of the first checkpoint past it, None when there is none). The lines between are
        at most `every`."""
        index = bisect_right(self.evidence_latest, latest)
        marks = self.evidence_marks
        start, then = (marks[index - 1], self.evidence_latest[index - 1]) if index else (0, NO_TIME)
        return start, then, marks[index] if index < len(marks) else None


def _gathered(
    checkpoints: list[Checkpoint], index: int, which: int, like: deque[Any]
) -> deque[Any]:
    """Series `which` (0: marks, 1: usage) as it was at checkpoint `index`: the latest of what each
    checkpoint back to the first added, up to the length of the deque `like`."""
    limit = like.maxlen or 0
    parts: list[list[Any]] = []
    count = 0
    while index >= 0 and count < limit:
        part = _series(checkpoints[index].series)[which]
        parts.append(part)
        count += len(part)
        index -= 1
    gathered: deque[Any] = deque(maxlen=like.maxlen)
    for part in reversed(parts):
        gathered.extend(part)
    return gathered


def _encode_series(marks: list[Mark], usage: list[UsagePoint]) -> bytes:
    """`Series` as msgpack; a time in UTC as a msgpack timestamp, one at another offset
    as its RFC 3339 text (the offset kept)."""
    return _SERIES_ENCODER.encode(
        (
            [m if m.at.utcoffset() == ZERO else (m[0], m.at.isoformat(), *m[2:]) for m in marks],
            [p if p.at.utcoffset() == ZERO else (p.at.isoformat(), *p[1:]) for p in usage],
        )
    )


@lru_cache(maxsize=256)
def _series(data: bytes) -> Series:
    """A checkpoint's series, decoded (the same ones again as a replay steps along)."""
    return _SERIES_DECODER.decode(data)


def _added(series: deque[Any], since: int) -> list[Any]:
    """The items of an append-only series (each with its `line`) past line `since`."""
    count = 0
    for item in reversed(series):
        if item.line <= since:
            break
        count += 1
    return [series[i] for i in range(len(series) - count, len(series))]
