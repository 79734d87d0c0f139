"""Read a state directory ahead in a forked child while the HUD starts.

Starting the HUD is one core's work: imports (Textual's, then the store's), the first
frame, the scan. `start` forks before the HUD imports anything heavy; the child imports
the store on the other core, reads what the HUD will show first and sends three
messages through a pipe, pickled, in turn:
- on a cold open (no rows kept, `store.cache.rows`), the rows of the scan's first batch
  of native missions (`first_rows()`: `store.index.batches.FIRST_CHUNK` of them, as the
  walk finds them, each derived here as the scan derives it, and shown while the HUD's
  own scan imports the store and reads them again);
- the overview row of the directory's SMALL workspace (`row()`: plain data, shown at once,
  even before the HUD has imported the store);
- the `SmallWorkspace` itself (`result()`). A large SMALL workspace (the live fixture:
  1.1 MB of progress, 1,206 entries) takes as long again as the HUD's start to parse and
  validate. The HUD's scan applies the directory's SMALL paths to that workspace as
  usual: every file is read again and kept only if its bytes are the same (sha256), so
  anything written after the child read it is parsed then, and the row is re-derived.

Nothing here is needed for correctness: without fork, or if the child fails, each is
None (the first rows empty) and the scan reads everything in process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import struct
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from store.format.row import MissionSummary
from store.index.batches import FIRST_CHUNK, batches

if TYPE_CHECKING:
    from typing import BinaryIO

    from store.index.workspace import Workspace
    from store.sources.small.workspace import SmallWorkspace

SMALL_DIR = ".small"


_FIRST_ROWS, _SMALL_ROW, _SMALL = range(3)
"""The child's messages, in the order it sends them."""


class Prefetch:
    """A child process reading ahead: `first_rows()`, `row()` then `result()`, each once
    and in that order (from any thread; the next drops those before it); `close()`
    always."""

    def __init__(self, root: Path, pid: int, fd: int) -> None:
        self.root = root
        self._pid = pid
        self._fd = fd
        self._lock = threading.Lock()
        self._next = _FIRST_ROWS
        """The message the pipe holds next."""

    def first_rows(self, within: float) -> list[MissionSummary]:
        """The rows of the first native missions as the child derived them, if they
        come within `within` seconds (else none: the scan reads them)."""
        with self._lock:
            if self._next != _FIRST_ROWS or not _readable(self._fd, within):
                return []
            data = self._take(_FIRST_ROWS)
        try:
            return msgspec.msgpack.decode(data or b"", type=list[MissionSummary])
        except msgspec.DecodeError:  # a dead or failed child: the scan reads them
            return []

    def row(self) -> MissionSummary | None:
        """The SMALL workspace's overview row as the child derived it, or None."""
        with self._lock:
            row = _loads(self._take(_SMALL_ROW))
        return row if isinstance(row, MissionSummary) else None

    def result(self) -> SmallWorkspace | None:
        """The child's SMALL workspace (waiting for it), or None if it failed or was
        taken."""
        with self._lock:
            small = _loads(self._take(_SMALL))
            self.close()
        from store.sources.small.workspace import SmallWorkspace

        if not isinstance(small, SmallWorkspace) or small.root != self.root:
            return None
        return small

    def _take(self, which: int) -> bytes | None:
        """Message `which`, those before it read and dropped; None once it was taken."""
        if self._next > which:
            return None
        while self._next < which:
            self._message()
            self._next += 1
        self._next += 1
        return self._message()

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


def _readable(fd: int, within: float) -> bool:
    """Whether `fd` has something to read (or its end) within `within` seconds."""
    if fd < 0:
        return False
    try:
        return bool(select.select([fd], [], [], within)[0])
    except (OSError, ValueError):
        return False


def _loads(data: bytes | None) -> object:
    try:
        return pickle.loads(data) if data is not None else None
    except Exception:  # a dead or failed child: the scan parses in process
        return None


def start(root: Path, first_rows: bool = False) -> Prefetch | None:
    """Fork a child reading ahead: the first native missions' rows when `first_rows`
    (a cold open), and root's SMALL workspace if root holds `.small/` (or is one); None
    when there is neither to read.

    Call it before threads exist (fork copies only the calling thread).
    """
    root = root.resolve()
    folder = root if root.name == SMALL_DIR else root / SMALL_DIR
    small = folder.is_dir() and not folder.is_symlink()
    if not hasattr(os, "fork") or not (small or first_rows):
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, never writes to the terminal
        os.close(read_end)
        _child(root, write_end, first_rows=first_rows, small=small)
    os.close(write_end)
    return Prefetch(root, pid, read_end)


def _child(root: Path, fd: int, *, first_rows: bool, small: bool) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        gc.disable()  # a short life: nothing to collect that exit does not
        from store.index.workspace import Workspace, utc_now

        workspace = Workspace(root)
        workspace.load_settings()
        with open(fd, "wb", closefd=True) as pipe:
            _send(pipe, msgspec.msgpack.encode(_first_rows(workspace) if first_rows else []))
            if small:
                workspace.small.load()
                _send(pipe, _dumps(workspace.small.summary(utc_now(), workspace.settings)))
                _send(pipe, _dumps(workspace.small))
        code = 0
    finally:
        os._exit(code)


def _first_rows(workspace: Workspace) -> list[MissionSummary]:
    """The rows of the first batch of native missions the walk finds, derived as the
    HUD's scan derives its first batch (the root's own files first)."""
    for batch in batches(workspace.walk(), FIRST_CHUNK, FIRST_CHUNK):
        workspace.apply([path for path in batch.other if not workspace.is_external(path)])
        workspace.apply(batch.paths)
        return [row for mission in batch.missions if (row := workspace.row(mission))]
    return []


def _dumps(message: object) -> bytes:
    return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def _send(pipe: BinaryIO, data: bytes) -> None:
    pipe.write(_LENGTH.pack(len(data)) + data)
    pipe.flush()
