"""One log's entry with its checkpoints, in a sealed file of its own (replay's).

Replay folds a long log once (verifying it) and keeps the fold every K lines
(`StateCheckpoint`); the next replay of the same log loads the entry, and when it is
`reusable` for the file now, resumes a reader at its end (`entry.resume`) and starts
any frame from the checkpoint at or before it:

    entry = load_log(cache, root, relpath, opened)   # None: fold from the start
    if entry is not None:
        resume(reader, entry)                          # the prefix, trusted
        at = nearest(entry, line)                      # a StateCheckpoint or None
        state = decode_state(at.state)                 # MissionState.restore(state)
    ...
    save_log(cache, root, entry_with_checkpoints)      # after a fresh fold (IO)

Keyed like the pack's entries: the file is named after the log's device, inode and
path, and `load_log` checks them all again (`reusable`).
"""

from __future__ import annotations

import hashlib
import os
from bisect import bisect_right
from pathlib import Path

import msgspec

from store.cache.entry import LogEntry, StateCheckpoint, reusable
from store.cache.sealed import Cache
from store.format.confined import Readable


def log_name(root: Path, relpath: str, device: int, inode: int) -> str:
    """The sealed file's name for a log (its device, inode and real path)."""
    where = os.path.join(os.path.realpath(root), relpath)
    key = f"{device}:{inode}:{where}".encode()
    return "log-" + hashlib.sha256(key).hexdigest()[:32]


def load_log(cache: Cache, root: Path, relpath: str, opened: Readable) -> LogEntry | None:
    """The log's entry with its checkpoints, when one was saved and it is reusable for
    the file `opened` now (IO: reads its last verified line again)."""
    info = opened.info
    payload = cache.unseal(log_name(root, relpath, info.st_dev, info.st_ino))
    if payload is None:
        return None
    try:
        entry = msgspec.msgpack.decode(payload, type=LogEntry)
    except msgspec.DecodeError:
        return None
    return entry if entry.relpath == relpath and reusable(entry, opened) else None


def save_log(cache: Cache, root: Path, entry: LogEntry) -> bool:
    """Keep `entry` (with its checkpoints) for the next `load_log` (IO)."""
    name = log_name(root, entry.relpath, entry.device, entry.inode)
    return cache.seal(name, msgspec.msgpack.encode(entry))


def nearest(entry: LogEntry, line: int) -> StateCheckpoint | None:
    """The checkpoint at or before line `line` (None: there is none that early)."""
    lines = [checkpoint.line for checkpoint in entry.checkpoints]
    at = bisect_right(lines, line)
    return entry.checkpoints[at - 1] if at else None
