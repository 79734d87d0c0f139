"""Read a state directory's SMALL workspace in a forked child while the HUD starts.

Starting the HUD is one core's work: imports, the first frame, the store. A large SMALL
workspace (the live fixture: 1.1 MB of progress, 1,206 entries) takes as long again to
parse and validate. `start` forks before the HUD imports anything heavy; the child
imports the store, reads `.small/` on the other core and sends two messages through a
pipe, pickled: the workspace's overview row (`row()`: plain data, shown at once, even
before the HUD has imported the store) and then the `SmallWorkspace` itself
(`result()`). The HUD's scan applies the directory's SMALL paths to that workspace as
usual: every file is read again and kept only if its bytes are the same (sha256), so
anything written after the child read it is parsed then, and the row is re-derived.

Nothing here is needed for correctness: without fork, or if the child fails, `row()`
and `result()` are None and the scan parses in process.
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
    from store.sources.small.workspace import SmallWorkspace

SMALL_DIR = ".small"


class Prefetch:
    """A child process reading one SMALL workspace: `row()` then `result()`, each once
    (from any thread); `close()` always."""

    def __init__(self, root: Path, pid: int, fd: int) -> None:
        self.root = root
        self._pid = pid
        self._fd = fd
        self._lock = threading.Lock()
        self._row_taken = False

    def row(self) -> MissionSummary | None:
        """The workspace's overview row as the child derived it, or None."""
        with self._lock:
            if self._row_taken:
                return None
            self._row_taken = True
            row = _loads(self._message())
        return row if isinstance(row, MissionSummary) else None

    def result(self) -> SmallWorkspace | None:
        """The child's workspace (waiting for it), or None if it failed or was taken."""
        with self._lock:
            if not self._row_taken:
                self._row_taken = True
                self._message()
            small = _loads(self._message())
            self.close()
        from store.sources.small.workspace import SmallWorkspace

        if not isinstance(small, SmallWorkspace) or small.root != self.root:
            return None
        return small

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
    """Fork a child reading root's SMALL workspace, if root holds `.small/` (or is one).

    Call it before threads exist (fork copies only the calling thread).
    """
    root = root.resolve()
    folder = root if root.name == SMALL_DIR else root / SMALL_DIR
    if not hasattr(os, "fork") or not folder.is_dir() or folder.is_symlink():
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, never writes to the terminal
        os.close(read_end)
        _child(root, write_end)
    os.close(write_end)
    return Prefetch(root, pid, read_end)


def _child(root: Path, fd: int) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        gc.disable()  # a short life: nothing to collect that exit does not
        from store.index.workspace import Workspace, utc_now

        workspace = Workspace(root)
        workspace.load_settings()
        small = workspace.small
        small.load()
        with open(fd, "wb", closefd=True) as pipe:
            for message in (small.summary(utc_now(), workspace.settings), small):
                data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(_LENGTH.pack(len(data)) + data)
                pipe.flush()
        code = 0
    finally:
        os._exit(code)
