"""The overview rows as the HUD last derived them, shown at the next start before the
store's loaders (pydantic) are even imported: a row only while every file and folder of
its mission is exactly as it was, and the state directory's own files too (hud.toml,
signers/: what every row is derived under).

One sealed file per state directory (`sealed.py`: under the per-user key, atomic, LRU).
Each file and folder is known by its lstat (device, inode, mode, size, mtime, ctime): a
write moves ctime, which no process can set back, and a file added or removed moves
its folder's. A row is kept only when all its files were last changed RACY_NS before the
scan that derived it began (`save_rows`: what the scan read is what is on disk), and
none when the wall clock stepped meanwhile. At the next start the rows that still stand
(`load_rows`) are shown while the scan runs, which replaces each with the one it
derives ("◌ scanning" until then); they are never taken for the derivation itself.
Nothing here imports pydantic or the loaders: it runs before they load.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from store.cache.sealed import SUFFIX, Cache, cache_folder, open_cache
from store.format.row import MissionSummary

ROWS_VERSION = 1
RACY_NS = 1_000_000_000
"""A file changed this shortly before the scan began (or since) keeps its row out."""
MISSIONS = "missions"
FIRST_CHUNK = 50
CHUNK = 1000
SHARED_FOLDERS = ("signers",)
"""Folders of the root every row depends on, gone into; its other folders are sources of
their own (their rows are not kept) or unknown (a problem of no mission)."""
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Seen(msgspec.Struct, frozen=True, array_like=True):
    """A file or folder as lstat saw it: its path (`name`, relative to the folder walked)
    and its `identity` (device, inode, mode, size, mtime, ctime in nanoseconds)."""

    name: str
    identity: tuple[int, int, int, int, int, int]


class KeptRow(msgspec.Struct, frozen=True, array_like=True):
    row: MissionSummary
    files: tuple[Seen, ...]
    """The mission's folder (`""`) and everything under it."""


class LastRows(msgspec.Struct, frozen=True):
    """The sealed payload: the state directory, its own files, the rows kept."""

    root: str
    shared: tuple[Seen, ...]
    chunks: tuple[msgspec.Raw, ...]
    """The rows kept, most urgent first (`MissionSummary.sort_key`), each chunk an
    encoded tuple of `KeptRow`, decoded and checked one at a time (`load_rows`): the
    first screenful is shown before the rest of a large directory is even decoded."""
    version: int = ROWS_VERSION


def _name(root: Path) -> str:
    return "rows-" + hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Began:
    """When a scan began, by the wall clock (what ctime is) and the monotonic one."""

    wall_ns: int
    monotonic_ns: int

    @classmethod
    def now(cls) -> Began:
        return cls(time.time_ns(), time.monotonic_ns())

    def clock_stepped(self) -> bool:
        """Whether the wall clock moved other than time did since (set back or ahead)."""
        wall = time.time_ns() - self.wall_ns
        return abs(wall - (time.monotonic_ns() - self.monotonic_ns)) > RACY_NS


def load_rows(root: Path) -> Iterator[list[MissionSummary]]:
    """The rows kept for `root` that still stand, most urgent first, a chunk at a time
    (none without a cache, or when the file does not verify, is of another directory
    or version, or the root's own files changed)."""
    folder = cache_folder(root)
    if folder is None or not (folder / f"{_name(root)}{SUFFIX}").is_file():
        return  # nothing kept: no cache folder or key is made for it (a cold open)
    cache = open_cache(root)
    payload = cache.unseal(_name(root)) if cache is not None else None
    if payload is None:
        return
    try:
        kept = msgspec.msgpack.decode(payload, type=LastRows)
    except msgspec.DecodeError:
        return
    if kept.version != ROWS_VERSION or kept.root != os.path.realpath(root):
        return
    with _opened(root) as (root_fd, missions_fd):
        if missions_fd is None or _shared(root_fd) != kept.shared:
            return
        for chunk in kept.chunks:
            try:
                rows = msgspec.msgpack.decode(chunk, type=tuple[KeptRow, ...])
            except msgspec.DecodeError:
                return
            yield [each.row for each in rows if _standing(missions_fd, each)]


def _standing(missions_fd: int, kept: KeptRow) -> bool:
    """Whether every file and folder of the kept row's mission is as it was seen: each
    lstat through the missions folder (a folder swapped for a symlink on the way is seen
    as the symlink it now is; one added or removed moves its folder's times)."""
    mission = kept.row.id
    if "/" in mission or mission in ("", ".", "..") or not kept.files:
        return False
    try:
        for seen in kept.files:
            path = f"{mission}/{seen.name}" if seen.name else mission
            if _identity(os.stat(path, dir_fd=missions_fd, follow_symlinks=False)) != seen.identity:
                return False
    except (OSError, ValueError):  # gone, unreadable, or a name no folder has
        return False
    return True


def save_rows(root: Path, rows: Iterable[MissionSummary], began: Began) -> bool:
    """Keep these rows of native missions, derived by a scan that began at `began`, each
    whose files all changed RACY_NS before it (IO: off the event loop). False when
    nothing could be kept (no cache, the clock stepped, the root's files changed)."""
    cache = open_cache(root)
    if cache is None or began.clock_stepped():
        return False
    try:
        return _save(cache, root, rows, began)
    except OSError:  # the directory went away or cannot be listed: keep nothing
        return False


def _save(cache: Cache, root: Path, rows: Iterable[MissionSummary], began: Began) -> bool:
    settled = began.wall_ns - RACY_NS
    with _opened(root) as (root_fd, missions_fd):
        shared = _shared(root_fd)
        if missions_fd is None or not _all_before(shared, settled):
            return False
        kept = []
        for row in sorted(rows, key=MissionSummary.sort_key):
            files = _mission(missions_fd, row.id)
            if files and _all_before(files, settled):
                kept.append(KeptRow(row, files))
    if began.clock_stepped():
        return False
    chunks = tuple(msgspec.Raw(msgspec.msgpack.encode(chunk)) for chunk in _chunked(kept))
    return _seal(cache, root, LastRows(os.path.realpath(root), shared, chunks))


def _chunked(kept: list[KeptRow]) -> Iterator[list[KeptRow]]:
    """FIRST_CHUNK rows (about a screenful), then CHUNK at a time."""
    start, size = 0, FIRST_CHUNK
    while start < len(kept):
        yield kept[start : start + size]
        start, size = start + size, CHUNK


def _seal(cache: Cache, root: Path, kept: LastRows) -> bool:
    return cache.seal(_name(root), msgspec.msgpack.encode(kept))


def _all_before(files: Iterable[Seen], settled_ns: int) -> bool:
    return all(max(seen.identity[4:]) < settled_ns for seen in files)


@contextlib.contextmanager
def _opened(root: Path) -> Iterator[tuple[int, int | None]]:
    """The root's descriptor and its missions folder's (None when it cannot be opened
    as a folder of its own: missing, a symlink)."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            missions_fd: int | None = os.open(MISSIONS, _FOLDER, dir_fd=root_fd)
        except OSError:
            missions_fd = None
        try:
            yield root_fd, missions_fd
        finally:
            if missions_fd is not None:
                os.close(missions_fd)
    finally:
        os.close(root_fd)


def _identity(info: os.stat_result) -> tuple[int, int, int, int, int, int]:
    return (
        info.st_dev,
        info.st_ino,
        info.st_mode,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _seen(name: str, info: os.stat_result) -> Seen:
    return Seen(name, _identity(info))


def _shared(root_fd: int) -> tuple[Seen, ...]:
    """The root itself, each of its entries but folders, and SHARED_FOLDERS' trees."""
    found = [_seen("", os.fstat(root_fd))]
    with os.scandir(root_fd) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                found.append(_seen(entry.name, info))
            elif entry.name in SHARED_FOLDERS:
                found += _tree(root_fd, entry.name)
    return tuple(found)


def _mission(missions_fd: int, mission_id: str) -> tuple[Seen, ...]:
    """The mission's folder and everything under it; () when it is not a folder there."""
    if "/" in mission_id or mission_id in ("", ".", ".."):
        return ()
    try:
        return _tree(missions_fd, mission_id, "")
    except OSError:
        return ()


def _tree(parent_fd: int, name: str, shown: str | None = None) -> tuple[Seen, ...]:
    """The folder `name` of `parent_fd` and everything under it, in listing order by
    name, never following a symlink; each named from `shown` (default: `name`)."""
    prefix = name if shown is None else shown
    fd = os.open(name, _FOLDER, dir_fd=parent_fd)
    try:
        found = [_seen(prefix, os.fstat(fd))]
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
        for entry in entries:
            path = f"{prefix}/{entry.name}" if prefix else entry.name
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                found += _tree(fd, entry.name, path)
            else:
                found.append(_seen(path, info))
        return tuple(found)
    finally:
        os.close(fd)
