"""Read a state directory's SMALL workspace in a forked child while the HUD starts.

Starting the HUD is one core's work: imports, the first frame, the store. A large SMALL
workspace (the live fixture: 1.1 MB of progress, 1,206 entries) takes as long again to
parse and validate. `start` forks before the HUD imports anything heavy; the child
imports the SMALL loader, reads `.small/` on the other core and sends the
`SmallWorkspace` back through a pipe, pickled. The HUD's scan then takes it with
`result()` and applies the directory's SMALL paths to it as usual: every file is read
again and kept only if its bytes are the same (sha256), so anything written after the
child read it is parsed then, and appended progress is read incrementally.

Nothing here is needed for correctness: without fork, or if the child fails, `result()`
is None and the scan parses in process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.small.workspace import SmallWorkspace

SMALL_DIR = ".small"


class Prefetch:
    """A child process reading one SMALL workspace; `result()` once, `close()` always."""

    def __init__(self, root: Path, pid: int, fd: int) -> None:
        self.root = root
        self._pid = pid
        self._fd = fd

    def result(self) -> SmallWorkspace | None:
        """The child's workspace (waiting for it), or None if it failed or was taken."""
        if self._fd < 0:
            return None
        chunks = []
        with open(self._fd, "rb", closefd=True) as pipe:
            self._fd = -1
            while chunk := pipe.read(1 << 20):
                chunks.append(chunk)
        self._reap()
        try:
            small = pickle.loads(b"".join(chunks))
        except Exception:  # a dead or failed child: the scan parses in process
            return None
        from store.small.workspace import SmallWorkspace

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
        self._reap()

    def _reap(self) -> None:
        if self._pid > 0:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = 0


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
        from store.small.workspace import SmallWorkspace

        small = SmallWorkspace(root)
        small.load()
        with open(fd, "wb", closefd=True) as pipe:
            pipe.write(pickle.dumps(small, protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    finally:
        os._exit(code)
