"""Durable file writes shared by every writer: temp file, fsync, link or rename, fsync.

A temp file is written beside its target (named so `store.layout.is_transient`
ignores it) and fsynced; it then either becomes the target by `os.link`, which
fails if the target exists (write-once), or replaces it by `os.replace` (atomic).
The folder is fsynced after, so the new name survives a crash too.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive advisory lock (flock) on a folder, for read-check-replace sequences."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_temp(final: Path, data: bytes, mode: int = 0o644) -> Path:
    """A fsynced temp file beside `final` holding `data`; removed again on any failure."""
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.with_name(f".{final.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


def create_once(final: Path, data: bytes, mode: int = 0o644) -> None:
    """Create `final` holding `data`; FileExistsError if it exists. Never half-written."""
    temp = write_temp(final, data, mode)
    try:
        os.link(temp, final)
    finally:
        temp.unlink(missing_ok=True)
    fsync_dir(final.parent)


def replace(final: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `final` with `data` atomically (keeping its permission bits by default)."""
    if mode is None:
        try:
            mode = final.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    temp = write_temp(final, data, mode)
    try:
        os.chmod(temp, mode)
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(final.parent)
