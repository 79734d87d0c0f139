"""Batches of changed paths under a state directory, from watchfiles in a child process.

Arming the watcher (`RustNotify`: one inotify watch per folder) holds the GIL the whole
time: about 1.3 s at 10,000 missions (20,000 folders), during which no thread of the
HUD runs, keys included. So the watcher runs in a child process of its own
(`store.index.watch_child`, run by `child_command`: the HUD's own interpreter, isolated
from the current folder and PYTHON* variables), which says `ready` once armed and then
writes each batch as a line of JSON (absolute paths, at most LINE_PATHS a line). It is
killed when the watch ends, and ends by itself when its standard input closes (the HUD
is gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from importlib.util import find_spec
from pathlib import Path

from store.format.layout import is_transient
from store.index.watch_child import DEBOUNCE_MS, READY

__all__ = ["DEBOUNCE_MS", "watch_batches"]


async def watch_batches(
    root: Path,
    stop: asyncio.Event | None = None,
    also: Mapping[str, Path] | None = None,
    armed: Callable[[], None] | None = None,
) -> AsyncGenerator[set[str], None]:
    """Yield sets of changed paths (relative to `root`, POSIX) as files change.

    `also` names folders outside the root to watch too (`Source.watch_paths`): a path
    under one arrives as `<prefix>/<path relative to it>`. Debounce is 25 ms
    (watchfiles' default is 1,600 ms). Temp and lock files are dropped; a path appears
    once per batch whatever happened to it. `armed` is called once the watcher watches
    every folder (a change after it is reported). Raises RuntimeError if the watcher
    ends on its own."""
    base = root.resolve()
    others = {prefix: folder for prefix, folder in (also or {}).items() if folder.is_dir()}
    folders = others.values()
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    child = subprocess.Popen(
        [*child_command(), str(base), *map(str, folders)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    threading.Thread(
        target=_forward, args=(child, asyncio.get_running_loop(), lines), daemon=True
    ).start()
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    try:
        while True:
            reading = asyncio.ensure_future(lines.get())
            waiting = {reading} if stopped is None else {reading, stopped}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if not reading.done():
                reading.cancel()
                return
            line = reading.result()
            if not line:
                raise RuntimeError("the watcher ended")
            if line == READY:
                if armed is not None:
                    armed()
                continue
            batch: set[str] = set()
            for path in json.loads(line):
                rel = _relative(Path(path), base, others)
                if rel is not None and rel != "." and not is_transient(rel):
                    batch.add(rel)
            if batch:
                yield batch
    finally:
        if stopped is not None:
            stopped.cancel()
        child.kill()  # (it holds nothing worth a goodbye)
        child.wait()


def child_command() -> list[str]:
    """The watcher child's command: this interpreter, isolated (`-I`: neither the current
    folder nor PYTHON* variables count), importing the store and watchfiles from where
    this process did (a `--user` install is outside `-I`'s path)."""
    watchfiles = find_spec("watchfiles")
    homes = {str(Path(__file__).resolve().parents[2])}
    if watchfiles is not None and watchfiles.origin is not None:
        homes.add(str(Path(watchfiles.origin).resolve().parents[1]))
    code = (
        f"import sys; sys.path[:0] = {sorted(homes)!r}; "
        "from store.index.watch_child import serve; serve(sys.argv[1:])"
    )
    return [sys.executable, "-I", "-c", code]


def _forward(
    child: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes]
) -> None:
    """The child's lines into `lines` (a thread: b"" once it ended), until the loop is gone."""
    assert child.stdout is not None
    with contextlib.suppress(RuntimeError), child.stdout:  # the loop closed
        for line in child.stdout:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, b"")


def _relative(path: Path, base: Path, others: Mapping[str, Path]) -> str | None:
    """`path` as the workspace names it: relative to the root, or under a prefix."""
    if path == base or base in path.parents:
        return path.relative_to(base).as_posix()
    for prefix, folder in others.items():
        if path == folder or folder in path.parents:
            return f"{prefix}/{path.relative_to(folder).as_posix()}"
    return None
