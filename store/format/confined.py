"""Confined file access under a state directory, for every reader and writer.

The state directory may be written by a buggy or hostile agent, so a path is never
handed to the kernel whole. It is walked one name at a time through directory file
descriptors (`os.open(name, dir_fd=...)`) with `O_NOFOLLOW`: a symlink anywhere below
the root is refused, never followed, so nothing read or written can land outside.
Files are opened `O_NONBLOCK` (a FIFO cannot block the open) and `fstat`-ed on the
descriptor: only regular files are read, and every read stops at a cap (a file that
grows past it, or a device, cannot exhaust memory). The root itself is the one path
resolved as given: the human chose it.

What cannot be opened comes back as a `Problem` (readers) or raises `Refused`
carrying one (writers): path, what is wrong, and a fix hint.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from store.format.problems import Problem

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
FIRST_READ = 1024 * 1024
"""A file is read in steps up to its fstat size (then on to its cap): no cap-sized buffer
is allocated for a small file."""

_TYPES = (
    (stat.S_ISREG, "a file"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symlink"),
)


class Refused(Exception):
    """A path that cannot be opened safely; `problem` says where, what and how to fix it."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.path}: {problem.message}")
        self.problem = problem


def type_name(mode: int) -> str:
    """What a file of this mode is, in words ("a FIFO (named pipe)")."""
    return next((name for test, name in _TYPES if test(mode)), "of an unknown type")


def _parts(relpath: str) -> list[str]:
    parts = relpath.split("/") if relpath else []
    if any(part in ("", ".", "..") for part in parts):
        raise Refused(
            Problem(relpath, None, "unsafe-path", "path has an empty, '.' or '..' part", "")
        )
    return parts


def _open_root(root: Path) -> int:
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(
            Problem("", None, "unreadable", f"cannot open the state directory: {exc.strerror}", "")
        ) from None


def _why(root: Path, parent_fd: int, name: str, relpath: str, exc: OSError, wanted: str) -> Problem:
    """The Problem for `name` (in `parent_fd`, at `relpath`) that could not be opened as
    `wanted` ("a folder" or "a regular file")."""
    try:
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return Problem(relpath, None, "missing", "no such file or folder", "")
    except OSError as inner:
        return _unreadable(relpath, inner)
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=parent_fd)
        except OSError as inner:  # swapped again since the stat
            return _unreadable(relpath, inner)
        return symlink_problem(root, relpath, target)
    is_wanted = stat.S_ISDIR if wanted == "a folder" else stat.S_ISREG
    if not is_wanted(info.st_mode):
        return not_regular(relpath, info.st_mode, wanted)
    return _unreadable(relpath, exc)


def _unreadable(relpath: str, exc: OSError) -> Problem:
    return Problem(
        relpath,
        None,
        "unreadable",
        f"cannot read: {exc.strerror or exc}",
        "check its permissions (the HUD's user must be able to read it)",
    )


def symlink_problem(root: Path, relpath: str, target: str) -> Problem:
    """A symlink below the root: never followed; `symlink-escape` when it points outside."""
    where = os.path.normpath(os.path.join(root, os.path.dirname(relpath), target))
    inside = os.path.realpath(where).startswith(os.path.join(os.path.realpath(root), ""))
    if inside:
        return Problem(
            relpath,
            None,
            "symlink",
            f"is a symlink (to {target}); symlinks are not followed",
            "replace the link with the file or folder itself",
        )
    return Problem(
        relpath,
        None,
        "symlink-escape",
        f"symlink points outside the state directory (to {target}); not followed",
        "replace the link with the file itself, or remove it",
    )


def not_regular(relpath: str, mode: int, wanted: str = "a regular file") -> Problem:
    """A path of the wrong file type (a FIFO, a device, a folder where a file belongs)."""
    return Problem(
        relpath,
        None,
        "not-a-file" if wanted == "a regular file" else "not-a-folder",
        f"is {type_name(mode)}, not {wanted}; not read",
        f"replace it with {wanted}, or remove it",
    )


def too_large(relpath: str, size: int | None, cap: int) -> Problem:
    what = f"file is {size:,} bytes" if size is not None else "file grew"
    return Problem(
        relpath,
        None,
        "too-large",
        f"{what}, over the {cap:,} byte cap; not read",
        "large outputs belong under artifacts/, referenced by sha256 from evidence",
    )


def _walk(root: Path, relfolder: str, create: bool, mode: int = 0o755) -> int:
    """A descriptor of `relfolder` reached one name at a time (symlinks refused)."""
    fd = _open_root(root)
    done: list[str] = []
    try:
        for part in _parts(relfolder):
            done.append(part)
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise Refused(
                        Problem("/".join(done), None, "missing", "no such folder", "")
                    ) from None
                with suppress(FileExistsError):
                    os.mkdir(part, mode, dir_fd=fd)
                    os.fsync(fd)  # the new name survives a crash
                next_fd = _open_dir_at(root, fd, part, "/".join(done))
            except OSError as exc:
                raise Refused(_why(root, fd, part, "/".join(done), exc, "a folder")) from None
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_dir_at(root: Path, parent_fd: int, name: str, relpath: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        raise Refused(_why(root, parent_fd, name, relpath, exc, "a folder")) from None


@contextmanager
def folder(root: Path, relfolder: str, *, create: bool = False) -> Iterator[int]:
    """A descriptor of `relfolder` under `root`, closed on exit; raises `Refused`.

    With `create`, missing folders are made (mode 0755) one at a time, each through
    its parent's descriptor: a folder swapped for a symlink mid-way is refused. Within
    `held_folders`, a folder opened before is not walked to again (reads only)."""
    held = None if create else _HELD.get()
    fd = _take_held(held, root, relfolder) if held is not None else None
    if fd is not None and held is not None:
        try:
            yield fd
        finally:
            _give_back(held, root, relfolder, fd)
        return
    fd = _walk(root, relfolder, create)
    try:
        yield fd
    finally:
        os.close(fd)


HELD_FOLDERS = 32
"""At most this many folders are held open per root (`held_folders`)."""
_HELD: ContextVar[dict[str, dict[str, int]] | None] = ContextVar("held", default=None)


@contextmanager
def held_folders() -> Iterator[None]:
    """While in effect (in this context only), a folder a read walks to stays open and
    later reads in it start from its descriptor: a batch that reads many files of a
    few folders (a check's task) opens each folder once, not once per file. Each is
    still opened through its parent's descriptor without following a symlink (a path
    a folder cannot be opened on is walked as ever, to say why); the least recently
    used is closed beyond `HELD_FOLDERS`, and all of them on exit. A folder replaced
    meanwhile is read as it was when opened: for a batch, not a live view."""
    held: dict[str, dict[str, int]] = {}
    token = _HELD.set(held)
    try:
        yield
    finally:
        _HELD.reset(token)
        for fds in held.values():
            for fd in fds.values():
                os.close(fd)


def _take_held(held: dict[str, dict[str, int]], root: Path, relfolder: str) -> int | None:
    """The held descriptor of `relfolder` (opened now, through its held parent, if not
    yet), lent out of `held` until `_give_back`; None when it cannot be opened so.
    Raises `Refused` for a path with an empty, '.' or '..' part, as a walk does."""
    _parts(relfolder)
    fds = held.setdefault(str(root), {})
    fd = fds.pop(relfolder, None)
    if fd is None and _folder_fd(root, fds, relfolder) is not None:
        fd = fds.pop(relfolder)
    return fd


def _give_back(held: dict[str, dict[str, int]], root: Path, relfolder: str, fd: int) -> None:
    fds = held.setdefault(str(root), {})
    parts = relfolder.split("/") if relfolder else []
    for depth in range(len(parts)):  # its parents are used last too (for its siblings)
        parent = "/".join(parts[:depth])
        if parent in fds:
            fds[parent] = fds.pop(parent)
    if relfolder in fds:  # opened again while lent (a nested read of the same folder)
        os.close(fd)
    else:
        fds[relfolder] = fd  # the most recently used last
    while len(fds) > HELD_FOLDERS:
        os.close(fds.pop(next(iter(fds))))


def list_folder(root: Path, relfolder: str) -> list[os.DirEntry[str]] | Problem:
    """The entries of `relfolder` (their `is_dir(follow_symlinks=False)` is exact)."""
    try:
        with folder(root, relfolder) as fd, os.scandir(fd) as entries:
            return list(entries)
    except Refused as refused:
        return refused.problem
    except OSError as exc:
        return _unreadable(relfolder, exc)


def walk_tree(root: Path, top: str, enter: Callable[[str], bool]) -> Iterator[str]:
    """Every path under the folder `top` of `root` (relative to `root`): a folder `enter`
    accepts is gone into, anything else yielded; a folder that cannot be listed is
    yielded itself (`top` only when it is not missing: reading it says why). Depth
    first: a folder's entries in listing order, then its subfolders, the last found
    first, so each subfolder's paths come together. Each folder is opened through its
    parent's descriptor, never following a symlink (one is yielded, never entered);
    a parent's descriptor is held until its last subfolder is opened."""
    try:
        top_fd = _walk(root, top, False)
    except Refused as refused:
        if top and refused.problem.code != "missing":
            yield top
        return
    held: dict[str, list[int]] = {}
    """Folders with subfolders still to open: [descriptor, how many]."""
    stack: list[tuple[str, str | None]] = [(top, None)]
    try:
        while stack:
            rel, parent = stack.pop()
            fd = top_fd if parent is None else _open_child(held, parent, rel)
            if fd is None:
                yield rel  # not listable: applying it says why
                continue
            if fd < 0:
                continue  # gone since its parent was listed
            try:
                with os.scandir(fd) as listing:
                    entries = list(listing)
            except OSError:
                os.close(fd)
                if rel:
                    yield rel
                continue
            subfolders = 0
            for entry in entries:
                path = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_dir(follow_symlinks=False) and enter(path):
                    stack.append((path, rel))
                    subfolders += 1
                else:
                    yield path
            if subfolders:
                held[rel] = [fd, subfolders]
            else:
                os.close(fd)
    finally:
        for fd, _ in held.values():
            os.close(fd)


def _open_child(held: dict[str, list[int]], parent: str, rel: str) -> int | None:
    """The folder `rel` opened through its held parent (released once its last
    subfolder is opened): its descriptor, -1 when it is gone, None when it cannot be
    opened as a folder."""
    entry = held[parent]
    try:
        return os.open(rel.rpartition("/")[2], _DIR_FLAGS, dir_fd=entry[0])
    except FileNotFoundError:
        return -1
    except OSError:
        return None
    finally:
        entry[1] -= 1
        if not entry[1]:
            os.close(held.pop(parent)[0])


def lstat_files(root: Path, relpaths: Iterable[str]) -> dict[str, os.stat_result]:
    """The lstat of each of these paths that is a regular file now, each through its
    folder's descriptor (symlinks on the way refused); a folder is opened once through
    its parent while paths under it come in a row (pass them sorted)."""
    found: dict[str, os.stat_result] = {}
    fds: dict[str, int] = {}
    try:
        for rel in relpaths:
            parent, _, name = rel.rpartition("/")
            for gone in [f for f in fds if f and not (parent + "/").startswith(f + "/")]:
                os.close(fds.pop(gone))
            fd = _folder_fd(root, fds, parent)
            if fd is None:
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found[rel] = info
    finally:
        for fd in fds.values():
            os.close(fd)
    return found


def _folder_fd(root: Path, fds: dict[str, int], rel: str) -> int | None:
    """The descriptor of the folder `rel`, opened through its parent's (kept in `fds`)."""
    if rel in fds:
        return fds[rel]
    if not rel:
        try:
            fds[""] = _open_root(root)
        except Refused:
            return None
        return fds[""]
    parent, _, name = rel.rpartition("/")
    if name in ("", ".", ".."):
        return None
    parent_fd = _folder_fd(root, fds, parent)
    if parent_fd is None:
        return None
    try:
        fds[rel] = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError:
        return None
    return fds[rel]


class NotCaptured(Exception):
    """A read of bytes a `Captured` file does not hold (before where it was read from)."""


class Readable:
    """A regular file below the root, opened (`OpenFile`) or read ahead (`Captured`)."""

    relpath: str
    info: os.stat_result

    def pread(self, size: int, offset: int) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        """Nothing to release by default."""

    def __enter__(self) -> Readable:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def read_capped(self, cap: int, offset: int = 0) -> bytes | Problem:
        """Every byte from `offset` to the end, or `too-large` past `cap` bytes."""
        expected = self.info.st_size - offset
        if expected > cap:
            return too_large(self.relpath, self.info.st_size, cap)
        chunks: list[bytes] = []
        total = 0
        step = max(min(expected + 1, cap + 1), 1)
        try:
            while chunk := self.pread(min(step, cap + 1 - total), offset + total):
                chunks.append(chunk)
                total += len(chunk)
                if total > cap:
                    return too_large(self.relpath, None, cap)
                step = min(FIRST_READ, cap + 1 - total) or 1
        except OSError as exc:
            return _unreadable(self.relpath, exc)
        return b"".join(chunks)


@dataclass(slots=True)
class OpenFile(Readable):
    """An open regular file below the root: its descriptor and `fstat` (caller closes)."""

    relpath: str
    fd: int
    info: os.stat_result

    def pread(self, size: int, offset: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def close(self) -> None:
        os.close(self.fd)


@dataclass(slots=True)
class Captured(Readable):
    """A file's bytes read ahead off the event loop (`data` = its bytes from `start`),
    served by `open_file` in its place while `serving` is in effect."""

    relpath: str
    info: os.stat_result
    data: bytes
    start: int = 0
    cut: bool = False
    """True when the file held more than was read (a log's next step): read it again."""

    def pread(self, size: int, offset: int) -> bytes:
        if offset < self.start:
            raise NotCaptured(self.relpath)
        begin = offset - self.start
        return self.data[begin : begin + size]


_SERVED: ContextVar[dict[tuple[str, str], Captured | Problem] | None] = ContextVar(
    "served", default=None
)


@contextmanager
def serving(root: Path, files: dict[str, Captured | Problem]) -> Iterator[None]:
    """While in effect (in this context only), `open_file` answers from `files` (read
    ahead by `capture`) for the paths they hold, and from the disk for the others.
    Nested, the files of each level are served (files under other roots, say)."""
    served = dict(_SERVED.get() or {})
    served.update({(str(root), relpath): found for relpath, found in files.items()})
    token = _SERVED.set(served)
    try:
        yield
    finally:
        _SERVED.reset(token)


def is_serving() -> bool:
    """Whether files read ahead are being served in this context (`serving`)."""
    return bool(_SERVED.get())


def capture(
    root: Path, relpath: str, start: Callable[[Readable], int], budget: int
) -> Captured | Problem:
    """Read a file ahead: from `start(opened)` on, at most `budget` bytes (`cut` if more).
    `start` may read the open file (to verify what is already known of it)."""
    opened = open_on_disk(root, relpath)
    if isinstance(opened, Problem):
        return opened
    with opened:
        offset = start(opened)
        wanted = max(opened.info.st_size - offset, 0)
        try:
            data = opened.pread(min(wanted, budget), offset) if wanted else b""
        except OSError as exc:
            return _unreadable(relpath, exc)
        return Captured(relpath, opened.info, data, offset, cut=wanted > budget)


def open_file(root: Path, relpath: str) -> Readable | Problem:
    """Open a regular file below `root` for reading without following any symlink.

    Never blocks: a FIFO, device, socket or folder is a `not-a-file` Problem naming
    its type; a symlink (at any depth) is `symlink` or `symlink-escape`. While
    `serving`, a file read ahead comes from memory instead."""
    served = _SERVED.get()
    if served is not None:
        found = served.get((str(root), relpath))
        if found is not None:
            return found
    return open_on_disk(root, relpath)


def open_on_disk(root: Path, relpath: str) -> OpenFile | Problem:
    """`open_file` from the disk, never from what is served: for a caller that needs the
    descriptor itself (a lock, a hash of the file as it is now)."""
    parent, _, name = relpath.rpartition("/")
    try:
        with folder(root, parent) as parent_fd:
            try:
                fd = os.open(name, _FILE_FLAGS, dir_fd=parent_fd)
            except OSError as exc:
                return _why(root, parent_fd, name, relpath, exc, "a regular file")
    except Refused as refused:
        return refused.problem
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return _unreadable(relpath, exc)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return not_regular(relpath, info.st_mode)
    return OpenFile(relpath, fd, info)


def read_file(root: Path, relpath: str, cap: int) -> bytes | Problem:
    """A regular file's bytes, at most `cap` of them, or the Problem that stops it."""
    opened = open_file(root, relpath)
    if isinstance(opened, Problem):
        return opened
    with opened:
        return opened.read_capped(cap)


def lstat(root: Path, relpath: str) -> os.stat_result | None:
    """The file's own `stat` (a symlink's, not its target's), through the confined
    parent folder; None when it or a folder on its way is missing or refused."""
    if not relpath:
        try:
            return os.stat(root)
        except OSError:
            return None
    parent, _, name = relpath.rpartition("/")
    try:
        with folder(root, parent) as parent_fd:
            return os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except (Refused, OSError):
        return None


def hash_file(root: Path, relpath: str, limit: int) -> tuple[str, int] | Problem:
    """(sha256 hex, size) of a regular file, reading at most `limit` + 1 bytes: a file
    longer than `limit` hashes only that far, and its size says it is longer."""
    opened = open_on_disk(root, relpath)
    if isinstance(opened, Problem):
        return opened
    digest = hashlib.sha256()
    size = 0
    with opened:
        try:
            while size <= limit and (
                chunk := opened.pread(min(FIRST_READ, limit + 1 - size), size)
            ):
                digest.update(chunk)
                size += len(chunk)
        except OSError as exc:
            return _unreadable(relpath, exc)
    return digest.hexdigest(), size


def link_problem(root: Path, relpath: str) -> Problem | None:
    """The Problem of `relpath` when it is itself a symlink (never followed), else None."""
    parent, _, name = relpath.rpartition("/")
    try:
        with folder(root, parent) as parent_fd:
            return symlink_problem(root, relpath, os.readlink(name, dir_fd=parent_fd))
    except (Refused, OSError):
        return None
