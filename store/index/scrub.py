"""The scrub: logs re-verified in the background, at a bounded share of one core.

An in-place edit together with an append in one watcher batch looks like an append by
size alone; the reader checks only its last line again. So every log whose (inode,
size, mtime_ns) changed since it was last verified has the bytes already read hashed
again and compared with the reader's digest of them (`LogReader.digest`). A mismatch
means bytes before the old end changed: the owner reads that log again from the start.

`targets` snapshots what to verify (on the thread that owns the index), `scrub` does
the IO (off it), `Workspace.take_scrub` folds the result back.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

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
    digest: str
    verified: Signature | None


@dataclass(slots=True)
class Scrubbed:
    """What one pass found: logs found unchanged (with their signature) and rewritten."""

    verified: dict[str, Signature] = field(default_factory=dict)
    rewritten: dict[str, Target] = field(default_factory=dict)
    bytes_hashed: int = 0


def targets(readers: Iterable[LogReader]) -> list[Target]:
    """A snapshot of these readers' state (cheap: no IO)."""
    return [
        Target(r.relpath, r.inode, r.generation, r.offset, r.digest.copy().hexdigest(), r.verified)
        for r in readers
        if r.inode is not None and r.offset > 0
    ]


def scrub(root: Path, found: list[Target], share: float = SHARE) -> Scrubbed:
    """Verify every target whose file changed since it was last verified (IO). Sleeps
    after each so its CPU time stays under `share` of the wall time."""
    result = Scrubbed()
    for target in found:
        began = time.thread_time()
        opened = open_on_disk(root, target.relpath)
        if isinstance(opened, Problem):
            continue  # gone or no longer a file: the watcher reports it
        with opened:
            info = opened.info
            now: Signature = (info.st_ino, info.st_size, info.st_mtime_ns)
            if info.st_ino != target.inode or now == target.verified:
                continue
            if info.st_size >= target.offset and verify_prefix(
                opened, target.offset, target.digest
            ):
                result.verified[target.relpath] = now
            else:
                result.rewritten[target.relpath] = target
            result.bytes_hashed += target.offset
        spent = time.thread_time() - began
        time.sleep(spent * (1 / share - 1))
    return result
