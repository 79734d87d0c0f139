"""Batches of changed paths under a state directory, from watchfiles."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from watchfiles import awatch

from store.format.layout import is_transient

DEBOUNCE_MS = 25
STEP_MS = 5


async def watch_batches(
    root: Path,
    stop: asyncio.Event | None = None,
    also: Mapping[str, Path] | None = None,
) -> AsyncIterator[set[str]]:
    """Yield sets of changed paths (relative to `root`, POSIX) as files change.

    `also` names folders outside the root to watch too (`Source.watch_paths`): a path
    under one arrives as `<prefix>/<path relative to it>`. Debounce is 25 ms
    (watchfiles' default is 1,600 ms). Temp and lock files are dropped; a path appears
    once per batch whatever happened to it.
    """
    base = root.resolve()
    others = {prefix: folder for prefix, folder in (also or {}).items() if folder.is_dir()}
    async for changes in awatch(
        base,
        *others.values(),
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        stop_event=stop,
        recursive=True,
        ignore_permission_denied=True,
    ):
        batch: set[str] = set()
        for _change, path in changes:
            rel = _relative(Path(path), base, others)
            if rel is not None and rel != "." and not is_transient(rel):
                batch.add(rel)
        if batch:
            yield batch


def _relative(path: Path, base: Path, others: Mapping[str, Path]) -> str | None:
    """`path` as the workspace names it: relative to the root, or under a prefix."""
    if path == base or base in path.parents:
        return path.relative_to(base).as_posix()
    for prefix, folder in others.items():
        if path == folder or folder in path.parents:
            return f"{prefix}/{path.relative_to(folder).as_posix()}"
    return None
