"""Durable file writes shared by every writer: temp file, fsync, link or rename, fsync.

Every write happens by name inside an open folder descriptor (for the HUD, one that
`store.format.confined.folder` reached without following a symlink): no path is resolved
again, so a folder swapped for a symlink mid-write cannot send the bytes elsewhere.
A temp file `.<name>.tmp-<pid>-<hex>` (a name `store.format.layout.is_transient` ignores) is
created with `O_EXCL | O_NOFOLLOW` in that folder and fsynced; it then either becomes
the target by `os.link`, which fails if the target exists (write-once), or replaces it
by `os.replace` (atomic). The folder is fsynced after, so the new name survives a crash.

A writer killed mid-write leaves its temp file behind; `remove_stale_temps` removes
those of dead writers on the next write in the folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import stat
import time
from pathlib import Path

from store.format import confined, load
from store.format.problems import Problem

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>[1-9][0-9]*)-[0-9a-f]{8}$")
STALE_AFTER_SECONDS = 60
"""A temp file this old whose writer's process is gone is a killed write's leftover."""


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def lock(folder_fd: int) -> None:
    """Take an exclusive advisory lock (flock) on an open folder, for read-check-replace
    sequences; closing the descriptor releases it."""
    fcntl.flock(folder_fd, fcntl.LOCK_EX)


class Changed(Exception):
    """The file is not what the writer loaded: `theirs` is on disk now (None: deleted)."""

    def __init__(self, theirs: bytes | None) -> None:
        super().__init__("changed on disk since it was loaded")
        self.theirs = theirs


def check_unchanged(root: Path, folder_fd: int, relpath: str, loaded_sha256: str) -> bytes:
    """Lock the open folder of `relpath` and return the file's bytes, if they still hash
    to `loaded_sha256`; else `Changed`. Optimistic saves replace only under this lock."""
    lock(folder_fd)
    current = existing(root, relpath)
    if current is None or hashlib.sha256(current).hexdigest() != loaded_sha256:
        raise Changed(current)
    return current


def existing(root: Path, relpath: str) -> bytes | None:
    """The bytes a writer is about to check or replace, read confined (`store.format.confined`)
    under the document cap; None when missing. `Refused` for a symlink, a FIFO, a device
    or a folder there, or a file over the cap: never followed, never blocking."""
    opened = confined.open_on_disk(root, relpath)  # as it is now, never a read-ahead copy
    data: bytes | Problem = opened if isinstance(opened, Problem) else _read(opened)
    if isinstance(data, Problem):
        if data.code == "missing":
            return None
        raise confined.Refused(data)
    return data


def write_temp(folder_fd: int, name: str, data: bytes, mode: int, *, exact: bool = False) -> str:
    """A fsynced temp file for `name` in the folder, holding `data`; its name.

    Its permission bits are `mode` as the umask allows, or exactly `mode` with `exact`.
    Removed again on any failure."""
    temp = f".{name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(temp, _TEMP_FLAGS, mode, dir_fd=folder_fd)
    try:
        if exact:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _remove(folder_fd, temp)
        raise
    os.close(fd)
    return temp


def create_once(folder_fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """Create `name` in the folder holding `data`; FileExistsError if it exists.
    Never half-written."""
    temp = write_temp(folder_fd, name, data, mode)
    try:
        os.link(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    finally:
        _remove(folder_fd, temp)
    os.fsync(folder_fd)


def replace(folder_fd: int, name: str, data: bytes, mode: int | None = None) -> None:
    """Replace `name` in the folder with `data` atomically (keeping its permission bits
    by default)."""
    if mode is None:
        mode = _mode_of(folder_fd, name)
    temp = write_temp(folder_fd, name, data, mode, exact=True)
    try:
        os.replace(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        _remove(folder_fd, temp)
        raise
    os.fsync(folder_fd)


def remove_stale_temps(folder_fd: int) -> list[str]:
    """Remove the folder's temp files of killed writes; the names removed.

    Only regular files named as `write_temp` names them, older than
    STALE_AFTER_SECONDS, whose writer process is gone; nothing else is touched."""
    now = time.time()
    stale = [name for name in os.listdir(folder_fd) if _is_stale(folder_fd, name, now)]
    for name in stale:
        _remove(folder_fd, name)
    return stale


def _is_stale(folder_fd: int, name: str, now: float) -> bool:
    match = _TEMP_NAME.match(name)
    if match is None:
        return False
    try:
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    old = now - info.st_mtime > STALE_AFTER_SECONDS
    return stat.S_ISREG(info.st_mode) and old and not _alive(int(match["pid"]))


def _alive(pid: int) -> bool:
    """True unless no process has this id (another user's process counts as alive)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # a process of another user
        pass
    return True


def _read(opened: confined.OpenFile) -> bytes | Problem:
    with opened:
        return opened.read_capped(load.MAX_DOCUMENT_BYTES)


def _mode_of(folder_fd: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode & 0o7777
    except FileNotFoundError:
        return 0o644


def _remove(folder_fd: int, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=folder_fd)
