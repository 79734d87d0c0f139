"""A replay's checkpoints in the user's cache folder (`store.cache.logs`): a replay of a
log replayed before starts at the end of what was verified then, not at its first line.

`resume(mission, cache)`, before the first read: for each log, the entry an earlier
replay kept, when `load_log` finds it reusable for the file as it is now (the same
device and inode, no shorter, its size and times as verified or only grown, its last
verified line still hashing to the chain head there; docs/format.md). The reader
starts at the end of that prefix, the fold restored as it was there, with the
checkpoints (`Recorded`) taken on the way. Anything else (no entry, another file, a
sealed file that does not verify, bytes of another version) reads the log from the
start. The prefix is then taken on trust (`LogReader.trusted`) until it is hashed again
(`Replay.verify`), unless the file is the very one verified (`signature`).

`keep(mission, cache)`, after a read: the entry of each log its reader read and
verified itself, with no problem (a log with one is read whole each time), unless it
was kept already, fewer than `every` lines shorter.

A `StateCheckpoint` holds the fold as `encode_state` bytes (the codec's own version
inside) and, in `extra`, this module's: `Extra` (its version, the time of the line,
the latest evidence time, the series the checkpoint added).
"""

from __future__ import annotations

import os
from datetime import datetime

import msgspec

from store.analysis.replay_fold import NO_TIME, Checkpoint, Recorded
from store.cache.entry import LogEntry, StateCheckpoint, clean, snapshot
from store.cache.entry import resume as resume_reader
from store.cache.logs import load_log, save_log
from store.cache.sealed import Cache
from store.cache.state import StateError, decode_state
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES
from store.format.confined import open_on_disk
from store.format.layout import Kind
from store.format.load import LogReader
from store.format.problems import Problem

EXTRA_VERSION = 1
"""Bumped whenever `Extra` or the series' bytes change: older checkpoints are refused."""


class Extra(msgspec.Struct, array_like=True, frozen=True):
    """What a `StateCheckpoint` keeps of a replay's `Checkpoint` besides its state."""

    version: int
    at: str | None
    latest: float
    series: bytes


_EXTRA = msgspec.msgpack.Decoder(Extra)


def resume(mission: Recorded, cache: Cache) -> None:
    """Start each log of `mission` not read yet at the end of its cached prefix, when
    the cache has one that stands for the file now (IO)."""
    for kind in (Kind.EVENTS, Kind.EVIDENCE):
        if _reader(mission, kind) is not None:
            continue
        rel = mission.events_path if kind is Kind.EVENTS else mission.evidence_path
        entry = _entry(cache, mission, rel)
        restored = _restored(entry, kind) if entry is not None else None
        if entry is None or restored is None:
            continue
        state, checkpoints = restored
        reader = mission.reader(kind, rel)
        resume_reader(reader, entry)
        mission.restore(state)
        if kind is Kind.EVENTS:
            for checkpoint in checkpoints:
                mission.add_event_checkpoint(checkpoint)
            mission.events = reader
        else:
            for checkpoint in checkpoints:
                mission.add_evidence_checkpoint(checkpoint)
            mission.evidence = reader
            mission.latest = _latest(reader, checkpoints)
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
        names = EVENT_AGGREGATES if kind is Kind.EVENTS else EVIDENCE_AGGREGATES
        checkpoints = (
            mission.event_checkpoints if kind is Kind.EVENTS else mission.evidence_checkpoints
        )
        kept = tuple(_persisted(reader, checkpoint) for checkpoint in checkpoints)
        found = snapshot(reader, mission.saved(names), kept)
        if found is None:
            continue
        opened = open_on_disk(mission.root, reader.relpath)
        if isinstance(opened, Problem):
            continue
        with opened:
            entry = found.entry(opened.info)  # None: changed, or a fold the codec cannot write
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


def _restored(entry: LogEntry, kind: Kind) -> tuple[dict[str, object], list[Checkpoint]] | None:
    """The fold at the end of the entry's prefix and its checkpoints; None when its bytes
    are not what this version writes."""
    names = EVENT_AGGREGATES if kind is Kind.EVENTS else EVIDENCE_AGGREGATES
    try:
        state = decode_state(entry.state)
        extras = [_EXTRA.decode(checkpoint.extra) for checkpoint in entry.checkpoints]
        times = [datetime.fromisoformat(extra.at) if extra.at else None for extra in extras]
    except (StateError, msgspec.DecodeError, ValueError):
        return None
    if tuple(state) != names or any(extra.version != EXTRA_VERSION for extra in extras):
        return None
    checkpoints = [
        Checkpoint(kept.line, at, kept.state, extra.series, extra.latest, kept.head)
        for kept, extra, at in zip(entry.checkpoints, extras, times, strict=True)
    ]
    return state, checkpoints


def _persisted(reader: LogReader, checkpoint: Checkpoint) -> StateCheckpoint:
    starts = reader.line_starts
    offset = starts[checkpoint.line] if checkpoint.line < len(starts) else reader.offset
    at = checkpoint.at.isoformat() if checkpoint.at is not None else None
    extra = msgspec.msgpack.encode(Extra(EXTRA_VERSION, at, checkpoint.latest, checkpoint.series))
    return StateCheckpoint(checkpoint.line, offset, checkpoint.head, checkpoint.state, extra)


def _latest(reader: LogReader, checkpoints: list[Checkpoint]) -> float:
    """The latest evidence time in the prefix a reader resumed at: the last checkpoint's,
    and those of the lines after it (at most a checkpoint's worth, read again)."""
    latest, first = (checkpoints[-1].latest, checkpoints[-1].line) if checkpoints else (NO_TIME, 0)
    for _, record in reader.read_window(first, reader.line_no - first):
        if not isinstance(record, Problem):
            latest = max(latest, record.at.timestamp())
    return latest
