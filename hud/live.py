"""The live view: changes on disk reach the workspace without the event loop reading a file.

Three workers of the app, one job each:
- `watch`: the watcher's batches go into a queue; if the state directory goes away or
  the watcher stops, `health` says so (the header shows it), and when the directory is
  back the whole of it is queued again (a rescan) and `health` is live again;
- `fold`: takes the queue, has a thread read the files ahead (`Workspace.read_ahead`),
  then folds them on the event loop (`Workspace.apply_read`), a bounded step at a time,
  so keys are handled between steps whatever an agent wrote;
- `scrub`: every SCRUB_SECONDS, a thread hashes again the logs that changed since they
  were last verified, and the prefixes the scan took from the cache (`store.index.scrub`:
  until then they are "cached, not verified"); a log rewritten in place is queued to be
  read again; the logs verified whole go into the cache (`keep`).
The app owns the workspace: threads read files and return data, only the event loop
changes the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.format.problems import Problem
    from store.index.workspace import Workspace

SCRUB_SECONDS = 2.0
"""A scrub pass starts this long after the last one ended (bench/scrub.py uses it)."""
RETRY_SECONDS = 0.5
"""How often a missing state directory is looked for again."""


@dataclass
class Live:
    """The queue of changed paths between the watcher, the HUD's own writes and the fold."""

    root: Path
    fold_step: Callable[[set[str] | None, set[str]], None]
    """The app's reaction to a folded step: the missions touched (None: any may have
    changed) and the paths the step folded."""
    notice: Callable[[Problem], None]
    """Shows a notice the fold found (a log read again from the start)."""
    health_changed: Callable[[], None]
    pending: set[str] = field(default_factory=set)
    also: dict[str, Path] = field(default_factory=dict)
    """Folders outside the root the sources read (`Workspace.watch_paths`), watched too."""
    health: str | None = "starting"
    """None while live; else what is wrong with watching, in words."""
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _rewatch: asyncio.Event = field(default_factory=asyncio.Event)
    _waiting: list[asyncio.Future[None]] = field(default_factory=list)
    """`reread`s whose paths are in `pending`: done when the step that takes them is folded."""
    armed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the watcher watches every folder: a change after it is reported."""

    def queue(self, paths: Iterable[str]) -> None:
        """Paths to bring up to date (from the watcher, the scrub or the HUD's writes)."""
        self.pending.update(paths)
        if self.pending:
            self._wake.set()

    async def reread(self, paths: Iterable[str]) -> None:
        """Read `paths` again and return once the fold has brought them into the workspace
        (the step that takes them from the queue is folded)."""
        folded = asyncio.get_running_loop().create_future()
        self._waiting.append(folded)
        self.queue(paths)
        self._wake.set()  # folded even when no path is given
        await folded

    def follow(self, also: dict[str, Path]) -> None:
        """Watch these folders outside the root too (the watcher restarts if they changed)."""
        if also != self.also:
            self.also = dict(also)
            self._rewatch.set()

    def _set_health(self, health: str | None) -> None:
        if health != self.health:
            self.health = health
            self.health_changed()

    async def watch(self) -> None:
        """Feed the watcher's batches into the queue, for as long as the app runs."""
        from store.index.watch import watch_batches

        first = True
        while True:
            if not self.root.is_dir():
                self._set_health(f"{self.root.name}/ is gone; waiting for it")
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if not first and not self._rewatch.is_set():  # back, or restarted: read it all
                self.queue([""])
            first = False
            self._rewatch.clear()
            self._set_health(None)
            identity = await asyncio.to_thread(_identity, self.root)
            stop = asyncio.Event()
            guard = asyncio.create_task(self._guard(stop, identity))
            try:
                watching = watch_batches(self.root, stop, self.also, self.armed.set)
                async with contextlib.aclosing(watching):  # its watcher ends with it
                    async for batch in watching:
                        self.queue(batch)
                        if not self.root.is_dir():
                            break
            except Exception as exc:  # the watcher died: say so, start it again
                self._set_health(f"watcher stopped ({type(exc).__name__}); restarting")
                await asyncio.sleep(RETRY_SECONDS)
                continue
            finally:
                stop.set()
                guard.cancel()
            if self._rewatch.is_set():
                continue  # other folders to watch: no rescan, no pause
            if await asyncio.to_thread(_identity, self.root) != identity:
                continue  # moved away, or another folder in its place: see what is there
            if identity is not None:  # the same folder as before, still there
                self._set_health("watcher stopped; restarting")
                await asyncio.sleep(RETRY_SECONDS)

    async def _guard(self, stop: asyncio.Event, identity: tuple[int, int] | None) -> None:
        """End the watch (set `stop`) when other folders are to be watched, or when the
        root is no longer the folder watched: moving it away sends the watcher nothing."""
        while not self._rewatch.is_set():
            if await asyncio.to_thread(_identity, self.root) != identity:
                break
            with contextlib.suppress(TimeoutError):  # at once when asked to rewatch
                await asyncio.wait_for(self._rewatch.wait(), RETRY_SECONDS)
        stop.set()

    async def fold(self, index: Workspace) -> None:
        """Bring the workspace up to date with the queue, one read-ahead step at a time."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.pending:
                paths, self.pending = self.pending, set()
                waiting, self._waiting = self._waiting, []
                ahead = await asyncio.to_thread(index.read_ahead, paths)
                touched = index.apply_read(ahead)
                self.pending |= ahead.more
                notices, index.notices = index.notices, []
                for notice in notices:
                    self.notice(notice)
                self.fold_step(None if "" in paths else touched, paths)
                for folded in waiting:
                    if not folded.done():  # not cancelled
                        folded.set_result(None)
                await asyncio.sleep(0)  # keys and paints between steps

    async def scrub(self, index: Workspace) -> None:
        """Re-verify changed logs in the background, a pass every SCRUB_SECONDS."""
        from store.index.scrub import scrub, targets

        while True:
            await asyncio.sleep(SCRUB_SECONDS)
            found = await asyncio.to_thread(scrub, self.root, targets(index.readers()))
            self.queue(index.take_scrub(found))
            if found.confirmed:  # prefixes held on trust, now verified
                index.remember(found.confirmed)
                self.keep(index)
                self.health_changed()

    async def catch_up(self, index: Workspace, walked: set[str], since_ns: int) -> None:
        """Once the watcher is armed, queue what changed since `since_ns` among the paths
        a scan `walked` (and what came or went): the watcher starts after the scan, so a
        file written between the scan's read and the watcher's start has no event."""
        await self.armed.wait()
        self.queue(await asyncio.to_thread(index.changed_since, walked, since_ns))

    def keep(self, workspace: Workspace, prune: bool = False) -> None:
        """Write the logs verified whole into the cache, in a daemon thread: quitting
        never waits for it (a write cut short leaves the cache as it was), and `prune`
        after the scan: forget logs no longer there."""
        threading.Thread(target=workspace.flush_cache, args=(prune,), daemon=True).start()


def _identity(root: Path) -> tuple[int, int] | None:
    """(device, inode) of the folder at `root`, or None when there is none."""
    try:
        info = os.stat(root)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None
