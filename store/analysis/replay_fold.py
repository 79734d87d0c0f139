"""The replay's fold: the live state's own fold, with a checkpoint every `every` lines.

`Recorded` is a `MissionState` that, as it folds a log, keeps a `Checkpoint` of its
aggregates every `every` lines: its events reader (`CheckpointingReader`) hands the fold a
checkpoint's worth of lines at a time, so the fold's own call for each line is all a line
costs. `restore_events(state, index)` and
`restore_evidence(state, index)` put a checkpoint back into a fresh state; the replay
then folds the few lines after it.

A checkpoint holds its aggregates as bytes (`store.cache.state`, the versioned codec
of the fold): what a million-line log keeps is a few kilobytes per checkpoint that the
garbage collector never walks, and it is what the cache keeps (`replay_cache`). Each
aggregate, and each field of the ledger, is a piece of its own (`Pieces`): a piece that
did not change since the previous checkpoint is not encoded again, its bytes are that
checkpoint's (the same object), so a checkpoint costs what changed. The two append-only
series of the events fold (the ledger's `journal` of marks and the `usage` points,
deques of thousands of items) are kept apart, as what was added since the previous
checkpoint (each item carries its line: those past the previous checkpoint's line are
new), as JSON (msgspec's: a time keeps its offset, with no Python call an item); a
restore gathers the latest ones walking back. Copied whole into every checkpoint, each
mark would be kept up to four thousand times.

Each evidence checkpoint also keeps the latest time of the evidence folded by then (times
in a log may step back): the replay finds "the evidence as of T" by bisecting those and
reading at most `every` lines after the checkpoint found.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import lru_cache
from itertools import islice
from operator import attrgetter, is_
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from store.analysis.landmarks import Landmarks
from store.cache.state import StateError, decode_state, encode_state
from store.derivation.ledger import Ledger, Mark
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.derivation.view import UsagePoint
from store.format.layout import Kind
from store.format.load import LogBatch, LogReader

CHECKPOINT_LINES = 1024
"""A checkpoint every this many lines: a jump folds at most this many."""
NO_TIME = float("-inf")
"""The latest evidence time before any evidence."""
LEDGER = "ledger."
LEDGER_FIELDS = tuple(vars(Ledger()))
EVENT_PIECES = (
    *(name for name in EVENT_AGGREGATES if name != "ledger"),
    *(LEDGER + field for field in LEDGER_FIELDS),
)
"""The pieces of an events checkpoint, in order: the aggregates but the ledger, then each
of the ledger's fields (`usage` and `ledger.journal` empty: the series)."""
EVIDENCE_PIECES = EVIDENCE_AGGREGATES
Series = tuple[list[Mark], list[UsagePoint]]
"""What a checkpoint's series added: marks of the journal, usage points."""
_SERIES_ENCODER = msgspec.json.Encoder()
_SERIES_DECODER = msgspec.json.Decoder(Series)
_LINE = attrgetter("line")


class Checkpoint(NamedTuple):
    """The fold once line `line` was folded: its aggregates (`state`: the bytes of each
    piece, `EVENT_PIECES` or `EVIDENCE_PIECES`) and, for the events fold, what its series
    added since the previous checkpoint (`series`: `Series` as JSON); the time of the
    line, and the latest time of the evidence so far (a POSIX timestamp; evidence only)."""

    line: int
    at: datetime | None
    state: tuple[bytes, ...]
    series: bytes = b""
    latest: float = NO_TIME
    head: str = ""
    """The sha256 of the line (the chain head there)."""


class Pieces:
    """A fold's pieces encoded one by one (`encode_state`), each with what it was encoded
    from: a piece unchanged since the last `encode` keeps its bytes. What an aggregate
    holds is immutable (`MissionState.saved`), so a container is unchanged when it holds
    the very same items in the same order; any other value when it is the same object."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[Any, bytes]] = {}

    def encode(self, values: dict[str, Any]) -> tuple[bytes, ...]:
        """Each value's piece, in order; StateError when one holds what the codec cannot
        write (nothing remembered of that piece then)."""
        found = []
        for name, value in values.items():
            last = self._last.get(name)
            if last is not None and _unchanged(last[0], value):
                found.append(last[1])
                continue
            data = encode_state({name: value})
            self._last[name] = (value.copy() if type(value) in _CONTAINERS else value, data)
            found.append(data)
        return tuple(found)


_CONTAINERS = (dict, set, deque, list)


def _unchanged(held: Any, value: Any) -> bool:
    """Whether `value` is what `held` (a container's copy, or the value itself) was."""
    kind = type(value)
    if kind is not type(held):
        return False
    if kind is dict:
        return (
            len(held) == len(value)
            and list(held) == list(value)
            and all(map(is_, held.values(), value.values()))
        )
    if kind is deque or kind is list:
        return (
            len(held) == len(value)
            and getattr(held, "maxlen", None) == getattr(value, "maxlen", None)
            and all(map(is_, held, value))
        )
    if kind is set:
        return bool(held == value)
    return held is value


def restored(pieces: tuple[bytes, ...], names: tuple[str, ...]) -> dict[str, Any]:
    """The aggregates of a checkpoint's pieces (the ledger's fields made a `Ledger`
    again); StateError on pieces of another fold."""
    values: dict[str, Any] = {}
    for data in pieces:
        values.update(decode_state(data))
    if tuple(values) != names:
        raise StateError("pieces of another fold")
    if names is EVENT_PIECES:
        ledger = Ledger()
        for field in LEDGER_FIELDS:
            setattr(ledger, field, values.pop(LEDGER + field))
        values["ledger"] = ledger
    return values


class Recorded(MissionState):
    """A MissionState that keeps a checkpoint every `every` lines as it folds."""

    def __init__(
        self, root: Path, mission_id: str, every: int = CHECKPOINT_LINES, marking: bool = False
    ) -> None:
        self.every = every
        self.marking = marking
        """Whether the events fold also feeds `landmarks`, from the log's first line."""
        self.readers: dict[Kind, LogReader] = {}
        """The last reader made of each log (its chain head is each checkpoint's)."""
        self.kept: dict[str, tuple[int, int]] = {}
        """Each log's (inode, lines) as the cache has it (`replay_cache`)."""
        self.verified: dict[str, tuple[int, int, int, int, int]] = {}
        """The signature of each log resumed from the cache as it was verified then
        (`replay_cache.signature`)."""
        super().__init__(root, mission_id)

    def reader(self, kind: Kind, rel: str) -> LogReader:
        found: LogReader
        if kind is Kind.EVENTS:
            fold = self._on_marked_event if self.marking else self._on_event
            found = CheckpointingReader(self, rel, fold)
        else:
            found = super().reader(kind, rel)
        self.readers[kind] = found
        return found

    def _reset_events(self) -> None:
        super()._reset_events()
        self.event_checkpoints: list[Checkpoint] = []
        self.event_lines = array("Q")
        self._next_event = self.every
        self._event_pieces = Pieces()
        self.landmarks = Landmarks() if self.marking else None
        """The landmarks of every events line folded since the first (`marking`); None
        when not marking, or once the fold resumed at a cached prefix."""

    def _reset_evidence(self) -> None:
        super()._reset_evidence()
        self.evidence_checkpoints: list[Checkpoint] = []
        self.evidence_marks = array("Q")
        self.evidence_latest = array("d")
        self._next_evidence = self.every
        self._evidence_pieces = Pieces()
        self.latest = NO_TIME
        """The latest time of the evidence folded (a POSIX timestamp)."""
        self.evidence_at: datetime | None = None
        """The time of the last evidence folded."""

    def _on_marked_event(self, event: Any, line: int) -> None:
        self._on_event(event, line)
        if self.landmarks is not None:
            self.landmarks.feed(event, line)

    def _on_evidence(self, item: Any, line: int) -> None:
        MissionState._on_evidence(self, item, line)
        at = self.evidence_at = item.at
        stamp = at.timestamp()
        if stamp > self.latest:
            self.latest = stamp
        if line >= self._next_evidence:
            self._evidence_checkpoint(at, line)

    def _event_checkpoint(self, at: datetime | None, line: int) -> None:
        """Keep the events fold as of `line`, its series as what was added since the last
        checkpoint (none when the fold holds what the codec cannot write)."""
        self._next_event = line + self.every
        since = self.event_lines[-1] if self.event_lines else 0
        ledger, usage = self.ledger, self.usage
        values = {name: getattr(self, name) for name in EVENT_AGGREGATES if name != "ledger"}
        values["usage"] = deque(maxlen=usage.maxlen)
        values.update((LEDGER + field, getattr(ledger, field)) for field in LEDGER_FIELDS)
        values[LEDGER + "journal"] = deque(maxlen=ledger.journal.maxlen)
        try:
            state = self._event_pieces.encode(values)
        except StateError:
            return
        series = _SERIES_ENCODER.encode((_added(ledger.journal, since), _added(usage, since)))
        head = self.readers[Kind.EVENTS].last_hash
        self.add_event_checkpoint(Checkpoint(line, at, state, series, head=head))

    def _evidence_checkpoint(self, at: datetime | None, line: int) -> None:
        self._next_evidence = line + self.every
        values = {name: getattr(self, name) for name in EVIDENCE_AGGREGATES}
        try:
            state = self._evidence_pieces.encode(values)
        except StateError:
            return
        head = self.readers[Kind.EVIDENCE].last_hash
        self.add_evidence_checkpoint(Checkpoint(line, at, state, b"", self.latest, head))

    def settle(self, kind: Kind, line: int) -> bool:
        """Make sure the last checkpoint of log `kind` is at line `line`, the last folded
        (the cache keeps the fold at the end of a prefix as its last checkpoint); False
        when the fold there holds what the codec cannot write."""
        if kind is Kind.EVENTS:
            if not self.event_lines or self.event_lines[-1] != line:
                self._event_checkpoint(self.last_event_at, line)
            return bool(self.event_lines) and self.event_lines[-1] == line
        if not self.evidence_marks or self.evidence_marks[-1] != line:
            self._evidence_checkpoint(self.evidence_at, line)
        return bool(self.evidence_marks) and self.evidence_marks[-1] == line

    def resume_fold(self, kind: Kind, checkpoints: list[Checkpoint]) -> bool:
        """Take the checkpoints of log `kind` (from the cache), the fold as of the last
        one; False (nothing taken) when that one does not decode."""
        if kind is Kind.EVENTS:
            self.landmarks = None  # those of the prefix are the cache's (landmarks_cache)
            for checkpoint in checkpoints:
                self.add_event_checkpoint(checkpoint)
            try:
                self.restore_events(self, len(checkpoints) - 1)
            except (StateError, msgspec.MsgspecError):
                self._reset_events()
                return False
            return True
        for checkpoint in checkpoints:
            self.add_evidence_checkpoint(checkpoint)
        try:
            self.restore_evidence(self, len(checkpoints) - 1)
        except StateError:
            self._reset_evidence()
            return False
        self.latest, self.evidence_at = checkpoints[-1].latest, checkpoints[-1].at
        return True

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
        `StateError` (or msgspec's error) on bytes this version did not write."""
        checkpoints = self.event_checkpoints
        state.restore(restored(checkpoints[index].state, EVENT_PIECES))
        state.ledger.journal = _gathered(checkpoints, index, 0, state.ledger.journal)
        state.usage = _gathered(checkpoints, index, 1, state.usage)
        return checkpoints[index].at

    def restore_evidence(self, state: MissionState, index: int) -> None:
        """Give `state` the evidence fold of checkpoint `index`."""
        state.restore(restored(self.evidence_checkpoints[index].state, EVIDENCE_PIECES))

    def evidence_span(self, latest: float) -> tuple[int, float, int | None]:
        """Where the last evidence line whose time, and every time before it, is at most
        `latest` lies: (the line of the last checkpoint within, its latest time; the line
        of the first checkpoint past it, None when there is none). The lines between are
        at most `every`."""
        index = bisect_right(self.evidence_latest, latest)
        marks = self.evidence_marks
        start, then = (marks[index - 1], self.evidence_latest[index - 1]) if index else (0, NO_TIME)
        return start, then, marks[index] if index < len(marks) else None


class CheckpointingReader(LogReader):
    """The events log's reader of a `Recorded`: it checks the log's lines as any reader
    does, handing them to the fold a checkpoint's worth at a time, and has the fold keep a
    checkpoint between two (exactly every `every` lines, and no call a line for it)."""

    def __init__(self, mission: Recorded, rel: str, fold: Callable[[Any, int], None]) -> None:
        super().__init__(mission.root, rel, Kind.EVENTS, fold, mission._reset_events)
        self.mission = mission

    def _lines(self, lines: Iterator[bytes], start: int, batch: LogBatch) -> int:
        mission = self.mission
        while True:
            room = mission._next_event - self.line_no
            read = self.line_no
            start = super()._lines(islice(lines, room), start, batch)
            if self.line_no - read < room:  # every line of the chunk read
                return start
            # the time of the last event (a line that does not load changes nothing)
            mission._event_checkpoint(mission.last_event_at, self.line_no)


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


@lru_cache(maxsize=256)
def _series(data: bytes) -> Series:
    """A checkpoint's series, decoded (the same ones again as a replay steps along)."""
    return _SERIES_DECODER.decode(data)


def _added(series: deque[Any], since: int) -> list[Any]:
    """The items of an append-only series (each with its `line`, in order) past line
    `since`."""
    start = bisect_right(series, since, key=_LINE)
    return [series[index] for index in range(start, len(series))]
