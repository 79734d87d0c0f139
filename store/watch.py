"""Batches of changed paths under a state directory, from watchfiles."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from watchfiles import awatch

from store.layout import is_transient

DEBOUNCE_MS = 25
STEP_MS = 5


async def watch_batches(root: Path, stop: asyncio.Event | None = None) -> AsyncIterator[set[str]]:
    """Yield sets of changed paths (relative to `root`, POSIX) as files change.

    Debounce is 25 ms (watchfiles' default is 1,600 ms). Temp and lock files are
    dropped; a path appears once per batch whatever happened to it.
    """
    base = root.resolve()
    async for changes in awatch(
        base,
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        stop_event=stop,
        recursive=True,
        ignore_permission_denied=True,
    ):
        batch: set[str] = set()
        for _change, path in changes:
            try:
                rel = Path(path).relative_to(base).as_posix()
            except ValueError:
                continue
            if rel != "." and not is_transient(rel):
                batch.add(rel)
        if batch:
            yield batch
