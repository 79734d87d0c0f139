"""A replay's checkpoints in the user's cache folder (`store.cache.logs`): a replay of a
log replayed before starts at the end of what was verified then, not at its first line.

`resume(mission, cache)`, before the first read: for each log, the entry an earlier
replay kept, when `load_log` finds it reusable for the file as it is now (the same
device and inode, no shorter, its size and times as verified or only grown, its last
verified line still hashing to the chain head there; docs/format.md). The reader
starts at the end of that prefix, the fold restored from the last checkpoint (taken at
the prefix's end, `Recorded.settle`: the entry's own `state` holds nothing), with the
checkpoints (`Recorded`) taken on the way. Anything else (no entry, another file, a
sealed file that does not verify, bytes of another version) reads the log from the
start. The prefix is then taken on trust (`LogReader.trusted`) until it is hashed again
(`Replay.verify`), unless the file is the very one verified (`signature`).

`keep(mission, cache)`, after a read: the entry of each log its reader read and
verified itself, with no problem (a log with one is read whole each time), unless it
was kept already, fewer than `every` lines shorter.

A `StateCheckpoint` holds the fold's pieces (`replay_fold.Pieces`) as a msgpack array of
`encode_state` bytes, a piece the same as the previous checkpoint's written as empty
bytes (no state is), and, in `extra`, this module's: `Extra` (its version, the time of
the line, the latest evidence time, the series the checkpoint added).
"""

from __future__ import annotations

import os
from datetime import datetime

import msgspec

from store.analysis.replay_fold import EVENT_PIECES, EVIDENCE_PIECES, Checkpoint, Recorded
from store.cache.entry import LogEntry, StateCheckpoint, clean, snapshot
from store.cache.entry import resume as resume_reader
from store.cache.logs import load_log, save_log
from store.cache.sealed import Cache
from store.format.confined import open_on_disk
from store.format.layout import Kind
from store.format.load import LogReader
from store.format.problems import Problem

EXTRA_VERSION = 2
"""Bumped whenever `Extra`, the series' bytes or the pieces change: older checkpoints are
refused."""


class Extra(msgspec.Struct, array_like=True, frozen=True):
    """What a `StateCheckpoint` keeps of a replay's `Checkpoint` besides its state."""

    version: int
    at: str | None
    latest: float
    series: bytes


_EXTRA = msgspec.msgpack.Decoder(Extra)
_PIECES = msgspec.msgpack.Decoder(list[bytes])


def resume(mission: Recorded, cache: Cache) -> None:
    """Start each log of `mission` not read yet at the end of its cached prefix, when
    the cache has one that stands for the file now (IO)."""
    for kind in (Kind.EVENTS, Kind.EVIDENCE):
        if _reader(mission, kind) is not None:
            continue
        rel = mission.events_path if kind is Kind.EVENTS else mission.evidence_path
        entry = _entry(cache, mission, rel)
        checkpoints = _restored(entry, kind) if entry is not None else None
        if entry is None or checkpoints is None or not mission.resume_fold(kind, checkpoints):
            continue
        reader = mission.reader(kind, rel)
        resume_reader(reader, entry)
        if kind is Kind.EVENTS:
            mission.events = reader
        else:
            mission.evidence = reader
        mission.kept[rel] = (entry.inode, entry.lines)
        mission.verified[rel] = signature(entry)


def signature(found: LogEntry | os.stat_result) -> tuple[int, int, int, int, int]:
    """(device, inode, size, mtime, ctime) of a log as verified (an entry) or now (its
    fstat): while they agree, nothing wrote it (the kernel sets ctime on every write)."""
    if isinstance(found, LogEntry):
        return (found.device, found.inode, found.size, found.mtime_ns, found.ctime_ns)
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def keep(mission: Recorded, cache: Cache) -> None:
    """Keep the entry of each log of `mission` that its reader read and verified itself,
    with no problem, unless kept already with fewer than `every` lines less (a log that
    grows as it is watched is not written out again at every line) (IO)."""
    for kind in (Kind.EVENTS, Kind.EVIDENCE):
        reader = _reader(mission, kind)
        if reader is None:
            continue
        inode, lines = mission.kept.get(reader.relpath, (None, 0))
        if not clean(reader) or (inode == reader.inode and reader.line_no - lines < mission.every):
            continue  # problems, a line held back, a prefix taken on trust; or kept
        if not mission.settle(kind, reader.line_no):
            continue  # a fold the codec cannot write
        checkpoints = (
            mission.event_checkpoints if kind is Kind.EVENTS else mission.evidence_checkpoints
        )
        kept = tuple(_persisted(reader, checkpoints, index) for index in range(len(checkpoints)))
        found = snapshot(reader, {}, kept)  # the fold at the prefix's end: its last checkpoint
        if found is None:
            continue
        opened = open_on_disk(mission.root, reader.relpath)
        if isinstance(opened, Problem):
            continue
        with opened:
            entry = found.entry(opened.info)  # None: changed
        if entry is not None and save_log(cache, mission.root, entry):
            mission.kept[reader.relpath] = (entry.inode, entry.lines)


def _reader(mission: Recorded, kind: Kind) -> LogReader | None:
    return mission.events if kind is Kind.EVENTS else mission.evidence


def _entry(cache: Cache, mission: Recorded, rel: str) -> LogEntry | None:
    """The entry kept for the log `rel`, when it stands for the file now (IO)."""
    opened = open_on_disk(mission.root, rel)
    if isinstance(opened, Problem):
        return None
    with opened:
        return load_log(cache, mission.root, rel, opened)


def _restored(entry: LogEntry, kind: Kind) -> list[Checkpoint] | None:
    """The entry's checkpoints, the last at the end of its prefix; None when its bytes
    are not what this version writes."""
    names = EVENT_PIECES if kind is Kind.EVENTS else EVIDENCE_PIECES
    found: list[Checkpoint] = []
    try:
        for kept in entry.checkpoints:
            extra = _EXTRA.decode(kept.extra)
            pieces = _PIECES.decode(kept.state)
            if extra.version != EXTRA_VERSION or len(pieces) != len(names):
                return None
            if found:  # a piece as the previous checkpoint's: the same bytes
                pieces = [p or before for p, before in zip(pieces, found[-1].state, strict=True)]
            elif not all(pieces):
                return None
            at = datetime.fromisoformat(extra.at) if extra.at else None
            found.append(
                Checkpoint(kept.line, at, tuple(pieces), extra.series, extra.latest, kept.head)
            )
    except (msgspec.DecodeError, ValueError):
        return None
    return found if found and found[-1].line == entry.lines else None


def _persisted(reader: LogReader, checkpoints: list[Checkpoint], index: int) -> StateCheckpoint:
    checkpoint = checkpoints[index]
    pieces = checkpoint.state
    if index:  # what did not change since the previous checkpoint: written once
        before = checkpoints[index - 1].state
        pieces = tuple(b"" if p is old else p for p, old in zip(pieces, before, strict=True))
    starts = reader.line_starts
    offset = starts[checkpoint.line] if checkpoint.line < len(starts) else reader.offset
    at = checkpoint.at.isoformat() if checkpoint.at is not None else None
    extra = msgspec.msgpack.encode(Extra(EXTRA_VERSION, at, checkpoint.latest, checkpoint.series))
    return StateCheckpoint(
        checkpoint.line, offset, checkpoint.head, msgspec.msgpack.encode(pieces), extra
    )
