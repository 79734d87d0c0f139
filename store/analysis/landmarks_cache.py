"""The Replay tab's landmarks of a log in the user's cache folder, with the prefix they
were made from: the tab opened again on a long log has them at once, instead of reading
every line again (`hud.replaying`).

`kept(reader, landmarks)` takes landmarks fed every line of a reader that read and
verified them itself (`store.cache.entry.clean`), with the prefix's length and sha256;
`save(cache, root, kept)` seals them (IO). `load(cache, root, reader)` gives them back
for a reader that holds that very prefix: resumed from the cache at it (its trusted
span, `LogReader.resume`), or read and hashed to it. The scrub that hashes a trusted
prefix again vouches for both; when it finds a change the log is read anew and the
landmarks start again from its first line. Sealed as every cache file is
(`store.cache.sealed`): a file that does not verify or decode, or of another version,
is None.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from store.analysis.landmarks import Fed, Landmarks
from store.cache.entry import clean
from store.cache.logs import log_name
from store.cache.sealed import Cache
from store.format.confined import open_on_disk
from store.format.load import LogReader
from store.format.problems import Problem

VERSION = 1
"""Bumped whenever `Kept` or `Fed` change: older files are refused."""


class Kept(msgspec.Struct, frozen=True):
    """Landmarks fed the `offset` bytes of a log (sha256 `digest`), every line of them."""

    version: int
    relpath: str
    inode: int
    offset: int
    digest: str
    fed: Fed


def kept(reader: LogReader, landmarks: Landmarks) -> Kept | None:
    """The landmarks to keep, when they were fed every line of what `reader` read and
    verified itself (no IO)."""
    if not clean(reader) or reader.inode is None or landmarks.lines != reader.line_no:
        return None
    digest = reader.digest.copy().hexdigest()
    return Kept(VERSION, reader.relpath, reader.inode, reader.offset, digest, landmarks.dump())


def save(cache: Cache, root: Path, found: Kept) -> bool:
    """Seal `found` for the next `load` of its log, unless the file is another one now (IO)."""
    name = _name(root, found.relpath, found.inode)
    return name is not None and cache.seal(name, msgspec.msgpack.encode(found))


def load(cache: Cache, root: Path, reader: LogReader) -> Landmarks | None:
    """The landmarks kept for the prefix `reader` holds (see the module's docstring), None
    when none were (IO)."""
    if reader.inode is None:
        return None
    held = reader.trusted or (reader.offset, reader.digest.copy().hexdigest())
    name = _name(root, reader.relpath, reader.inode)
    payload = cache.unseal(name) if name is not None else None
    if payload is None:
        return None
    try:
        found = msgspec.msgpack.decode(payload, type=Kept)
    except msgspec.DecodeError:
        return None
    if (
        found.version != VERSION
        or (found.relpath, found.inode) != (reader.relpath, reader.inode)
        or (found.offset, found.digest) != held
        or found.fed.lines > len(reader.line_starts)
    ):
        return None
    return Landmarks.load(found.fed)


def _name(root: Path, relpath: str, inode: int) -> str | None:
    """The sealed file's name, of the log's device and inode (None: it is not that inode
    now, or cannot be opened)."""
    opened = open_on_disk(root, relpath)
    if isinstance(opened, Problem):
        return None
    with opened:
        info = opened.info
    if info.st_ino != inode:
        return None
    return "marks-" + log_name(root, relpath, info.st_dev, info.st_ino).removeprefix("log-")
