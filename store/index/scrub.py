"""The scrub: logs re-verified in the background, at a bounded share of one core.

An in-place edit together with an append in one watcher batch looks like an append by
size alone; the reader checks only its last line again. So every log whose (inode,
size, mtime_ns) changed since it was last verified has the bytes already read hashed
again and compared with the reader's digest of them (`LogReader.digest`). A mismatch
means bytes before the old end changed: the owner reads that log again from the start.
A reader resumed from the cache (`store.cache`) holds its prefix on trust: the scrub
hashes it in the first pass whatever its signature (the background full verification
after first paint), and the owner then holds nothing on trust (`LogReader.confirm`).

`targets` snapshots what to verify (on the thread that owns the index), `scrub` does
the IO (off it), `Workspace.take_scrub` folds the result back.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any

from store.format.confined import open_on_disk
from store.format.load import LogReader, verify_prefix
from store.format.problems import Problem

SHARE = 0.08
"""The scrub sleeps so that its CPU time stays under this share of one core (the pass's
own bookkeeping comes on top: measured under 10 % in all, bench/scrub.py)."""

Signature = tuple[int, int, int]
"""(inode, size, mtime_ns) of a log."""


@dataclass(frozen=True, slots=True)
class Target:
    """What a reader knows of one log, to compare the disk with."""

    relpath: str
    inode: int
    generation: int
    offset: int
    spans: tuple[tuple[int, int, str], ...]
    """(start, end, sha256) of the bytes read (`LogReader.spans`): two when the reader
    resumed from the cache (its prefix trusted, not yet hashed here)."""
    verified: Signature | None

    @property
    def trusting(self) -> bool:
        """The reader holds a prefix on trust (`store.cache`): cached, not verified."""
        return len(self.spans) > 1


@dataclass(slots=True)
class Scrubbed:
    """What one pass found: logs found unchanged (with their signature) and rewritten;
    for the logs that held a prefix on trust, the sha256 of all their bytes read."""

    verified: dict[str, Signature] = field(default_factory=dict)
    rewritten: dict[str, Target] = field(default_factory=dict)
    confirmed: dict[str, tuple[int, Any]] = field(default_factory=dict)
    bytes_hashed: int = 0


def targets(readers: Iterable[LogReader]) -> list[Target]:
    """A snapshot of these readers' state (cheap: no IO)."""
    return [
        Target(r.relpath, r.inode, r.generation, r.offset, tuple(r.spans()), r.verified)
        for r in readers
        if r.inode is not None and r.offset > 0
    ]


def scrub(root: Path, found: list[Target], share: float = SHARE) -> Scrubbed:
    """Verify every target whose file changed since it was last verified, or that holds a
    prefix on trust (IO). Sleeps after each so its CPU time stays under `share` of the
    wall time."""
    result = Scrubbed()
    for target in found:
        began = time.thread_time()
        opened = open_on_disk(root, target.relpath)
        if isinstance(opened, Problem):
            continue  # gone or no longer a file: the watcher reports it
        with opened:
            info = opened.info
            now: Signature = (info.st_ino, info.st_size, info.st_mtime_ns)
            if info.st_ino != target.inode or (now == target.verified and not target.trusting):
                continue
            whole = sha256()
            if info.st_size >= target.offset and all(
                verify_prefix(opened, end, digest, start, whole)
                for start, end, digest in target.spans
            ):
                result.verified[target.relpath] = now
                if target.trusting:
                    result.confirmed[target.relpath] = (target.offset, whole)
            else:
                result.rewritten[target.relpath] = target
            result.bytes_hashed += target.offset
        spent = time.thread_time() - began
        time.sleep(spent * (1 / share - 1))
    return result
