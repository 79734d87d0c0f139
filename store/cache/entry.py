"""One log's verified prefix (`LogEntry`), the rules to reuse it, and a reader resumed there.

An entry says: the log (device, inode, path) had, when its size, mtime and ctime were
these, `offset` bytes of `lines` complete lines that this user's HUD read and verified
(JSON, schema, seq, hash chain: no problem at all), whose last line hashes to `head`
and whose bytes hash to `digest`; the fold of those lines is `state`, and every K lines
a `StateCheckpoint` of it (replay). Only a clean, complete prefix is kept (no problem,
no line held back): anything else is read again whole.

`reusable` is the rule (docs/format.md, "The verified-prefix cache"): the same device
and inode, no shorter than the prefix, and either unchanged (size, mtime and ctime as
recorded) or grown (larger); and in both cases the prefix's last line, read again now,
still hashes to `head`. An in-place edit before the last line that comes with an
append passes these tests: the reader resumed from an entry holds the prefix as
trusted, not verified (`LogReader.trusted`), until the scrub hashes it again
(`store.index.scrub`).
"""

from __future__ import annotations

import os
from array import array
from hashlib import sha256
from typing import Any

import msgspec

from store.cache.state import StateError, encode_state
from store.format.confined import Readable
from store.format.load import MAX_LINE_BYTES, LogReader

ENTRY_VERSION = 1


class StateCheckpoint(msgspec.Struct, frozen=True):
    """The fold at the end of line `line` (byte `offset`, chain head `head`): `state` is
    `encode_state` bytes, or the caller's own of them (replay's pieces); `extra` is the
    caller's own (replay's usage series, say)."""

    line: int
    offset: int
    head: str
    state: bytes
    extra: bytes = b""


class LogEntry(msgspec.Struct, frozen=True):
    """A log's verified prefix and its fold (see the module's docstring)."""

    relpath: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    offset: int
    lines: int
    last_seq: int
    head: str
    digest: str
    line_starts: bytes
    """The byte offset of each line, as `array("Q")` bytes (native order)."""
    state: bytes
    checkpoints: tuple[StateCheckpoint, ...] = ()
    version: int = ENTRY_VERSION

    def starts(self) -> array[int]:
        found = array("Q")
        found.frombytes(self.line_starts)
        return found

    def sound(self) -> bool:
        """Its own fields agree (a decoded entry is checked before any use)."""
        return (
            self.version == ENTRY_VERSION
            and 0 < self.offset <= self.size
            and self.lines > 0
            and len(self.line_starts) == 8 * self.lines
            and len(self.head) == 64
            and len(self.digest) == 64
            and all(c.offset <= self.offset and c.line <= self.lines for c in self.checkpoints)
        )


class Snapshot(msgspec.Struct, frozen=True):
    """What a reader and its fold held at the end of a clean prefix (taken on the thread
    that owns them, no IO); `entry` completes it with the file's stat (IO)."""

    relpath: str
    inode: int
    offset: int
    lines: int
    last_seq: int
    head: str
    digest: str
    line_starts: bytes
    saved: Any
    checkpoints: tuple[StateCheckpoint, ...] = ()

    def entry(self, info: os.stat_result) -> LogEntry | None:
        """The entry, when the file (`info`, its fstat now) is still what was read: the
        same inode, and exactly `offset` bytes, and a fold the codec can write (else nothing
        is kept this time)."""
        if info.st_ino != self.inode or info.st_size != self.offset:
            return None
        try:
            saved = encode_state(self.saved)
        except StateError:  # the fold holds what the codec cannot write: not kept
            return None
        return LogEntry(
            self.relpath,
            info.st_dev,
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
            self.offset,
            self.lines,
            self.last_seq,
            self.head,
            self.digest,
            self.line_starts,
            saved,
            self.checkpoints,
        )


def clean(reader: LogReader) -> bool:
    """Whether the reader read all it holds itself and found it clean: no problem,
    nothing held back, none taken on trust from the cache."""
    return not (
        reader.inode is None
        or reader.offset == 0
        or reader.problems
        or reader.partial
        or reader.oversized is not None
        or reader.trusted is not None
        or reader.rewrite_seen
        or len(reader.line_starts) != reader.line_no
    )


def snapshot(
    reader: LogReader, saved: dict[str, Any], checkpoints: tuple[StateCheckpoint, ...] = ()
) -> Snapshot | None:
    """A reader's prefix and its fold `saved` (`MissionState.saved`), when it is `clean`;
    None otherwise."""
    if not clean(reader) or reader.inode is None:
        return None
    return Snapshot(
        reader.relpath,
        reader.inode,
        reader.offset,
        reader.line_no,
        reader.last_seq,
        reader.last_hash,
        reader.digest.copy().hexdigest(),
        reader.line_starts.tobytes(),
        saved,
        checkpoints,
    )


def reusable(entry: LogEntry, opened: Readable) -> bool:
    """Whether `entry` may stand for the log `opened` now (IO: reads the prefix's last
    line again)."""
    info = opened.info
    if not entry.sound() or (info.st_dev, info.st_ino) != (entry.device, entry.inode):
        return False
    if info.st_size < entry.offset:
        return False
    unchanged = (info.st_size, info.st_mtime_ns, info.st_ctime_ns) == (
        entry.size,
        entry.mtime_ns,
        entry.ctime_ns,
    )
    if not unchanged and info.st_size == entry.size:
        return False  # same size, touched: an edit in place, or a copy over it
    last = entry.starts()[-1]
    if entry.offset - last > MAX_LINE_BYTES + 1:
        return False
    try:
        line = opened.pread(entry.offset - last, last)
    except OSError:
        return False
    return line.endswith(b"\n") and sha256(line[:-1]).hexdigest() == entry.head


def resume(reader: LogReader, entry: LogEntry) -> None:
    """Start a fresh `reader` at the end of the entry's prefix, the prefix trusted."""
    reader.resume(
        entry.inode,
        entry.mtime_ns,
        entry.offset,
        entry.lines,
        entry.last_seq,
        entry.head,
        entry.digest,
        entry.starts(),
    )
