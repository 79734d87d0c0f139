"""A waiter's lease on an approval request: whether anyone still waits for its decision.

A process that files a request and waits for the answer (the Claude Code hook, `hud
agent request --wait`, the MCP server) first creates `approvals/<id>.wait` (empty,
agent-owned) and holds an exclusive `flock` on it for as long as it waits. The kernel
drops the lock when the process dies, SIGKILL included, so no heartbeat is needed:
anyone can test the lock without blocking (`waiting`). The file stays after its waiter
left: it marks the request as one that was filed with a waiter (docs/format.md).
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from store.format import confined
from store.format.layout import lease_path
from store.format.problems import Problem


class LeaseTaken(Exception):
    """The lease file exists already: that request id is in use."""


class Lease:
    """The exclusive lock on `approvals/<id>.wait`, held while this process waits."""

    def __init__(self, root: Path, mission: str, request_id: str, fd: int) -> None:
        self.root = root
        self.mission = mission
        self.request_id = request_id
        self.relpath = lease_path(mission, request_id)
        self._fd = fd
        info = os.fstat(fd)
        self._identity = (info.st_dev, info.st_ino)

    @classmethod
    def take(cls, root: Path, mission: str, request_id: str) -> Lease:
        """Create the lease file (never an existing one: LeaseTaken) and lock it."""
        relpath = lease_path(mission, request_id)
        folder, _, name = relpath.rpartition("/")
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with confined.folder(Path(root), folder, create=True) as folder_fd:
            try:
                fd = os.open(name, flags, 0o644, dir_fd=folder_fd)
            except FileExistsError:
                raise LeaseTaken(f"{relpath} exists already: request id in use") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return cls(Path(root), mission, request_id, fd)
        except BaseException:
            os.close(fd)
            raise

    @property
    def held(self) -> bool:
        """True while this process holds the lock on the file that is there now."""
        if self._fd < 0:
            return False
        info = confined.lstat(self.root, self.relpath)
        return info is not None and (info.st_dev, info.st_ino) == self._identity

    def abandon(self) -> None:
        """Remove the lease file this process created (its request was never written)
        and release it."""
        if self.held:
            folder, _, name = self.relpath.rpartition("/")
            with confined.folder(self.root, folder) as folder_fd:
                os.unlink(name, dir_fd=folder_fd)
        self.release()

    def release(self) -> None:
        """Stop waiting (closing the descriptor drops the lock); the file stays."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def waiting(root: Path, mission: str, request_id: str) -> bool | None:
    """Whether a waiter holds request `request_id`'s lease now: None when the request has
    no lease file (it was filed without a waiter). Never blocks: the file is opened
    non-blocking, without following a symlink, and tested with LOCK_SH|LOCK_NB. Anything
    but a regular file there counts as nobody waiting (fail closed)."""
    opened = confined.open_on_disk(Path(root), lease_path(mission, request_id))
    if isinstance(opened, Problem):
        return None if opened.code == "missing" else False
    with opened:
        try:
            fcntl.flock(opened.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            return exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
        return False  # the lock was free: nobody holds it (closing releases ours)
