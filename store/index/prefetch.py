"""Read the start of a state directory in a forked child while the HUD starts.

Starting the HUD is one core's work: imports, the first frame, the store. `start` forks
before the HUD imports anything heavy; the child imports the store and, on the other
core, reads what the first frame shows, sending three messages through a pipe, pickled:
- the overview rows of the first PREVIEW_MISSIONS native missions the walk finds (as
  the HUD's scan's first chunk does: plain data, shown at once, before the HUD has even
  imported the store; `rows()`);
- a SMALL workspace's row (`row()`) and then the `SmallWorkspace` itself (`result()`):
  a large one (the live fixture: 1.1 MB of progress, 1,206 entries) takes as long as
  the HUD's start to parse and validate. The HUD's scan applies the directory's SMALL
  paths to that workspace as usual: every file is read again and kept only if its
  bytes are the same (sha256), so anything written after the child read it is parsed
  then, and the row is re-derived.
The rows are the store's own derivation of the same files; the HUD's scan replaces
each with its own as it reaches it.

Nothing here is needed for correctness: without fork, or if the child fails, `rows()`,
`row()` and `result()` are empty or None and the scan does it all in process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import struct
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from store.format.row import MissionSummary

if TYPE_CHECKING:
    from store.index.workspace import Workspace
    from store.sources.small.workspace import SmallWorkspace

SMALL_DIR = ".small"


class Prefetch:
    """A child process reading the start of one state directory: `rows()`, `row()` and
    `result()`, in this order, each once (from any thread); `close()` always."""

    def __init__(self, root: Path, pid: int, fd: int) -> None:
        self.root = root
        self._pid = pid
        self._fd = fd
        self._lock = threading.Lock()
        self._taken = 0
        """How many of the child's messages were read."""

    def rows(self) -> list[MissionSummary]:
        """The first native missions' overview rows as the child derived them."""
        rows = _loads(self._take(_ROWS))
        if not isinstance(rows, list):
            return []
        return [row for row in rows if isinstance(row, MissionSummary)]

    def row(self) -> MissionSummary | None:
        """The SMALL workspace's overview row as the child derived it, or None."""
        row = _loads(self._take(_SMALL_ROW))
        return row if isinstance(row, MissionSummary) else None

    def result(self) -> SmallWorkspace | None:
        """The child's SMALL workspace (waiting for it), or None if it failed or was taken."""
        small = _loads(self._take(_SMALL))
        self.close()
        from store.sources.small.workspace import SmallWorkspace

        if not isinstance(small, SmallWorkspace) or small.root != self.root:
            return None
        return small

    def _take(self, message: int) -> bytes | None:
        """Message number `message` (those before it skipped), or None once taken."""
        with self._lock:
            data = None
            while self._taken <= message:
                data = self._message()
                self._taken += 1
            return data

    def close(self) -> None:
        """Stop the child if it still runs (the HUD quit before its scan took the result)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
        if self._pid > 0:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = 0

    def _message(self) -> bytes | None:
        """The next length-prefixed message, or None when the pipe ends early."""
        if self._fd < 0:
            return None
        head = _read(self._fd, _LENGTH.size)
        if head is None:
            return None
        return _read(self._fd, _LENGTH.unpack(head)[0])


_LENGTH = struct.Struct("!Q")
_ROWS, _SMALL_ROW, _SMALL = range(3)
"""The child's messages, in the order it sends them."""
PREVIEW_MISSIONS = 50
"""Native missions the child derives: about a screenful (the scan's first chunk)."""
PREVIEW_BYTES = 4 * 1024 * 1024
"""Log bytes the child reads at most (about 20,000 lines)."""


def _read(fd: int, size: int) -> bytes | None:
    """`size` bytes, or None at an early end (a dead child, or `close()` on quit)."""
    chunks, left = [], size
    while left:
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _loads(data: bytes | None) -> object:
    try:
        return pickle.loads(data) if data is not None else None
    except Exception:  # a dead or failed child: the scan parses in process
        return None


def start(root: Path) -> Prefetch | None:
    """Fork a child reading the start of root: its first native missions, if root holds
    `missions/`, and its SMALL workspace, if root holds `.small/` (or is one).

    Call it before threads exist (fork copies only the calling thread).
    """
    root = root.resolve()
    small = _folder(root if root.name == SMALL_DIR else root / SMALL_DIR)
    if not hasattr(os, "fork") or not (small or _folder(root / "missions")):
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, never writes to the terminal
        os.close(read_end)
        _child(root, write_end, small)
    os.close(write_end)
    return Prefetch(root, pid, read_end)


def _folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _child(root: Path, fd: int, small: bool) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        gc.disable()  # a short life: nothing to collect that exit does not
        from store.index.workspace import Workspace, utc_now

        workspace = Workspace.cached(root, keep=False)  # reads the cache, never writes it
        workspace.load_settings()
        with open(fd, "wb", closefd=True) as pipe:

            def send(message: object) -> None:
                data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(_LENGTH.pack(len(data)) + data)
                pipe.flush()

            touched = workspace.apply(_first_missions(workspace))
            send([row for m in sorted(touched) if (row := workspace.row(m)) is not None])
            if small:
                read = workspace.small
                read.load()
                send(read.summary(utc_now(), workspace.settings))
                send(read)
        code = 0
    finally:
        os._exit(code)


def _first_missions(workspace: Workspace) -> list[str]:
    """The paths the walk finds until PREVIEW_MISSIONS native missions are whole (and
    what it found beside them: trust files, settings), other sources' left out. A
    mission whose logs would take the preview past PREVIEW_BYTES is left out too: the
    scan reads it (from the cache, when it holds it) while the child would read it whole."""
    from store.format.confined import lstat
    from store.format.layout import Kind, classify

    outside: list[str] = []
    missions: dict[str, list[str]] = {}
    budget = PREVIEW_BYTES
    for rel in workspace.walk():
        if workspace.is_external(rel):
            continue
        parts = rel.split("/", 2)
        if len(parts) < 3 or parts[0] != "missions":
            outside.append(rel)
            continue
        if parts[1] not in missions and len(missions) == PREVIEW_MISSIONS:
            break
        paths = missions.setdefault(parts[1], [])
        located = classify(rel)
        if located is not None and located.kind in (Kind.EVENTS, Kind.EVIDENCE):
            info = lstat(workspace.root, rel)
            size = info.st_size if info is not None else 0
            if size > budget:
                paths.append("")  # too much to read: not previewed
            else:
                budget -= size
        paths.append(rel)
    return outside + [rel for paths in missions.values() if "" not in paths for rel in paths]
