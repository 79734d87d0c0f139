"""Batches of changed paths under a state directory, from watchfiles in a child process.

Arming the watcher (`RustNotify`: one inotify watch per folder) holds the GIL the whole
time: about 1.3 s at 10,000 missions (20,000 folders), during which no thread of the
HUD runs, keys included. So the watcher runs in a child process of its own
(`python -I -m store.index.watch FOLDER...`, the HUD's own interpreter, isolated from
the current folder and PYTHON* variables), which says `ready` once armed and then
writes each batch as a line of JSON (absolute paths, at most LINE_PATHS a line). It is
killed when the watch ends, and ends by itself when its standard input closes (the HUD
is gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from pathlib import Path

from store.format.layout import is_transient

DEBOUNCE_MS = 25
STEP_MS = 5
READY_MS = 50
"""The child's watcher wakes this often when nothing changes: it says `ready` at its
first wake-up (armed), and sees its input closed within this."""
LINE_PATHS = 200
"""Paths per line the child writes."""
READY = b"ready\n"


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
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    child = subprocess.Popen(
        [sys.executable, "-I", "-m", "store.index.watch", str(base), *map(str, others.values())],
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


def serve(folders: list[str]) -> None:
    """The child: watch `folders`, say `ready` once armed, then write each batch, until
    standard input closes (or standard output does)."""
    from watchfiles import watch

    closed = threading.Event()

    def until_closed() -> None:
        with contextlib.suppress(OSError):
            while os.read(sys.stdin.fileno(), 4096):
                pass
        closed.set()

    threading.Thread(target=until_closed, daemon=True).start()
    out = sys.stdout.buffer
    ready = False
    try:
        for changes in watch(
            *folders,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=closed,
            rust_timeout=READY_MS,
            yield_on_timeout=True,
            debug=False,  # (it would print to our standard output)
            raise_interrupt=False,
            recursive=True,
            ignore_permission_denied=True,
        ):
            if not ready:
                out.write(READY)
                ready = True
            paths = sorted(path for _change, path in changes)
            for start in range(0, len(paths), LINE_PATHS):
                out.write(json.dumps(paths[start : start + LINE_PATHS]).encode() + b"\n")
            out.flush()
    except BrokenPipeError:  # the HUD is gone
        pass


if __name__ == "__main__":
    serve(sys.argv[1:])
