"""The cache folder: sealed files, written atomically, bounded by an LRU byte budget.

A sealed file is MAGIC (the format and its version), an HMAC-SHA256 of MAGIC and the
payload under the folder's key, then the payload. The key is 32 random bytes in
`<folder>/key`, made once with mode 0600 and read only when it is a regular file of
this user that nobody else may read: a file another process (an agent writing the
state directory, another user) wrote without the key never verifies, so a forged or
tampered cache is ignored rather than trusted; a torn write (a crash) never verifies
either. Why a MAC and not only a strict schema: a schema check catches corruption, not
a well-formed lie (a digest of bytes that were never verified); the MAC ties every
byte to a writer that held the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

APP = "operator-hud"
ENV_FOLDER = "HUD_CACHE_DIR"
"""Where the cache lives instead of the user's cache folder (`off`: no cache)."""
ENV_BUDGET = "HUD_CACHE_BYTES"
"""The byte budget instead of BUDGET (tests lower it)."""
BUDGET = 512 * 1024 * 1024
MAGIC = b"operator-hud cache 1\n"
KEY_BYTES = 32
MAC_BYTES = 32
SUFFIX = ".sealed"
STALE_TEMP_NS = 60 * 10**9
"""A temp file this old was left by a writer that crashed (a newer one may be in use)."""


def cache_folder(root: Path | None = None) -> Path | None:
    """The cache folder (HUD_CACHE_DIR, else the user's cache folder), None when turned
    off or when it would lie inside the state directory `root`."""
    named = os.environ.get(ENV_FOLDER)
    if named == "off":
        return None
    folder = Path(named) if named else Path(user_cache_dir(APP))
    folder = folder.absolute()
    if root is not None:
        real, top = os.path.realpath(folder), os.path.realpath(root)
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return None
    return folder


def budget() -> int:
    try:
        return max(0, int(os.environ.get(ENV_BUDGET, BUDGET)))
    except ValueError:
        return BUDGET


@dataclass(frozen=True, slots=True)
class Cache:
    """A cache folder and its key."""

    folder: Path
    key: bytes

    def path(self, name: str) -> Path:
        return self.folder / f"{name}{SUFFIX}"

    def seal(self, name: str, payload: bytes) -> bool:
        """Write `payload` as the sealed file `name`, atomically (temp, fsync, rename),
        then evict the least recently used files past the budget. False when it could
        not be written (or alone exceeds the budget)."""
        head = MAGIC + self._mac(payload)  # (the payload is written as it is: never copied)
        if len(head) + len(payload) > budget():
            return False
        target = self.path(name)
        try:
            fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=self.folder)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(head)
                    out.write(payload)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
            _sync_folder(self.folder)
        except OSError:
            return False
        self.evict(keep=target)
        return True

    def unseal(self, name: str) -> memoryview | None:
        """The payload of the sealed file `name` (a view of the file's bytes: a pack of
        tens of MB is never copied); None when there is none or it does not verify
        (short, foreign, another version, tampered with, torn). A file read is marked as
        used (its mtime: the LRU order)."""
        target = self.path(name)
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > budget():
                return None
            with os.fdopen(os.dup(fd), "rb") as stream:
                data = stream.read(info.st_size + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        head = len(MAGIC) + MAC_BYTES
        if len(data) < head or not data.startswith(MAGIC):
            return None
        payload = memoryview(data)[head:]
        if not hmac.compare_digest(data[len(MAGIC) : head], self._mac(payload)):
            return None
        with contextlib.suppress(OSError):
            os.utime(target)
        return payload

    def evict(self, keep: Path | None = None) -> None:
        """Remove the least recently used sealed files until the folder fits the budget
        (and temp files a crash left behind)."""
        files = []
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(".tmp-"):
                if time.time_ns() - info.st_mtime_ns > STALE_TEMP_NS:  # torn by a crash
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
            elif entry.name.endswith(SUFFIX) and stat.S_ISREG(info.st_mode):
                files.append((info.st_mtime_ns, info.st_size, Path(entry.path)))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files, key=lambda item: item[0]):
            if total <= budget():
                break
            if path == keep:
                continue
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size

    def _mac(self, payload: bytes | memoryview) -> bytes:
        mac = hmac.new(self.key, MAGIC, hashlib.sha256)
        mac.update(payload)
        return mac.digest()


def open_cache(root: Path | None = None) -> Cache | None:
    """The cache for the state directory `root` (its folder made 0700 and its key made
    once), None when there is none to use."""
    folder = cache_folder(root)
    if folder is None:
        return None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    key = _key(folder)
    return Cache(folder, key) if key is not None else None


def _key(folder: Path) -> bytes | None:
    """The folder's key: made once (0600, O_EXCL), read only when it is a regular file of
    this user that no one else may read or write."""
    path = folder / "key"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o077
            or info.st_size != KEY_BYTES
        ):
            return None
        key = os.pread(fd, KEY_BYTES, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    return key if len(key) == KEY_BYTES else None


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
