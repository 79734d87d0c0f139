"""The verified prefixes of one state directory's logs, and its missions' documents as
parsed (`store.cache.documents`): one sealed pack in the cache.

`get` answers from the pack as it was read (once, lazily), until the first `flush`;
`remember` keeps a snapshot of a log the caller read and verified itself (no IO, on the
thread that owns the reader); `flush` (IO, off the event loop) turns the snapshots into
entries, checking each file is still what was read, writes the pack again, atomically,
and lets the entries go (a HUD holds none of them once its scan is done). Thread-safe:
the scan's parts share one index. Documents go the same way: `document`, while open,
`remember_document`, kept at the next `flush`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import msgspec

from store.cache import documents
from store.cache.documents import DocumentEntry
from store.cache.entry import LogEntry, Snapshot
from store.cache.sealed import Cache
from store.format.confined import open_on_disk
from store.format.load import Loaded
from store.format.problems import Problem

PACK_VERSION = 4


class Pack(msgspec.Struct, frozen=True):
    """The sealed payload: the state directory it is of, an entry per log path and one
    per document path."""

    root: str
    entries: dict[str, msgspec.Raw]
    """Each an encoded `LogEntry`, decoded only when asked for (`get`): a pack of 10,000
    entries held encoded takes 20 MB less than decoded."""
    documents: dict[str, msgspec.Raw]
    """Each an encoded `DocumentEntry`, decoded only when asked for (`document`): the
    pack is read before the scan's first chunk, which needs a few of them."""
    version: int = PACK_VERSION


class PrefixIndex:
    """The cached verified prefixes of the logs of the state directory `root`."""

    def __init__(self, cache: Cache, root: Path, keep: bool = True) -> None:
        self.cache = cache
        self.root = root
        self.keep = keep
        """False: the pack is read, never written (a read-only or served HUD)."""
        self.real = os.path.realpath(root)
        self.name = "prefix-" + hashlib.sha256(self.real.encode()).hexdigest()[:32]
        self._entries: dict[str, msgspec.Raw] | None = None
        self._documents: dict[str, msgspec.Raw] = {}
        self._pending: dict[str, Snapshot] = {}
        self._pending_documents: dict[str, msgspec.Raw] = {}
        self._used: set[str] = set()
        self._dirty = False
        """Entries put since the pack was last written."""
        self._known: dict[str, tuple[int, int]] = {}
        """(inode, offset) of each entry asked for (`get`) or put: what `stale` compares,
        kept once the entries themselves are let go."""
        self._open = True
        """True until the first `flush`: `get` answers from the pack (the scan); after it,
        the entries are let go (memory) and `get` answers nothing (no IO on a caller's
        thread: a log new since the scan is read whole)."""
        self._lock = threading.Lock()

    def _loaded(self) -> dict[str, msgspec.Raw]:
        """The entries (the lock held; `_prepare` has read them)."""
        if self._entries is None:
            self._entries = {}
        return self._entries

    def _prepare(self) -> None:
        """Read the pack when it is not in memory (IO, the lock not held: `stale`, which
        the event loop calls, never waits for a read)."""
        if self._entries is None:
            entries, kept = self._read()
            with self._lock:
                if self._entries is None:
                    self._entries, self._documents = entries, kept

    def _read(self) -> tuple[dict[str, msgspec.Raw], dict[str, msgspec.Raw]]:
        payload = self.cache.unseal(self.name)
        if payload is None:
            return {}, {}
        try:
            pack = msgspec.msgpack.decode(payload, type=Pack)
        except msgspec.DecodeError:
            return {}, {}
        if pack.version != PACK_VERSION or pack.root != self.real:
            return {}, {}
        return pack.entries, pack.documents

    @property
    def open(self) -> bool:
        """True until the first `flush`: the pack's entries answer (the scan)."""
        return self._open

    def get(self, relpath: str) -> LogEntry | None:
        """The entry of the log at `relpath`, if the pack has one (`reusable` decides
        whether it stands for the file now)."""
        if self._open:
            self._prepare()
        with self._lock:
            self._used.add(relpath)
            kept = self._loaded().get(relpath) if self._open else None
        if kept is None:
            return None
        try:
            entry = msgspec.msgpack.decode(kept, type=LogEntry)
        except msgspec.DecodeError:
            return None
        if entry.relpath != relpath:
            return None
        with self._lock:
            self._known.setdefault(relpath, (entry.inode, entry.offset))
        return entry

    def document(self, relpath: str) -> DocumentEntry | None:
        """The document at `relpath` as the pack has it parsed, until the first `flush`
        (`DocumentEntry.stands_for` decides whether it is the file now)."""
        if self._open:
            self._prepare()
        with self._lock:
            self._used.add(relpath)
            kept = self._documents.get(relpath) if self._open else None
        if kept is None:
            return None
        try:
            entry = msgspec.msgpack.decode(kept, type=DocumentEntry)
        except msgspec.DecodeError:
            return None
        return entry if entry.relpath == relpath else None

    def remember_document(self, info: os.stat_result, loaded: Loaded[Any], raw: Any) -> None:
        """Keep a document read after `info` was taken (its lstat then), parsed as `raw`,
        for the next `flush` (no IO). Encoded now: its holder may let `raw` go."""
        if not self.keep:
            return
        made = documents.entry(info, loaded, raw)
        if made is None:
            return
        encoded = msgspec.Raw(msgspec.msgpack.encode(made))
        with self._lock:
            self._used.add(loaded.relpath)
            self._pending_documents[loaded.relpath] = encoded

    def put(self, entry: LogEntry) -> None:
        self._prepare()
        with self._lock:
            self._used.add(entry.relpath)
            self._loaded()[entry.relpath] = msgspec.Raw(msgspec.msgpack.encode(entry))
            self._known[entry.relpath] = (entry.inode, entry.offset)
            self._dirty = True

    def stale(self, relpath: str, inode: int | None, offset: int) -> bool:
        """True when the pack (or a snapshot waiting) has not got this much of this log."""
        with self._lock:
            waiting = self._pending.get(relpath)
            known = (waiting.inode, waiting.offset) if waiting else self._known.get(relpath)
        return known != (inode, offset)

    def remember(self, snapshot: Snapshot | None) -> None:
        """Keep a snapshot for the next `flush` (None: nothing to keep)."""
        if snapshot is not None:
            with self._lock:
                self._used.add(snapshot.relpath)
                self._pending[snapshot.relpath] = snapshot

    def settle(self, collect: bool = True) -> list[LogEntry]:
        """Turn what was remembered into entries (IO: each file's stat now), put them in
        the index and return them (`collect`: a worker process hands them to its parent).
        Each snapshot goes once its entry is made: at 10,000 logs, none is held twice."""
        self._prepare()
        with self._lock:
            pending, self._pending = self._pending, {}
            kept, self._pending_documents = self._pending_documents, {}
        if kept:
            with self._lock:
                self._documents.update(kept)
                self._dirty = True
        settled = []
        while pending:
            _relpath, snapshot = pending.popitem()
            opened = open_on_disk(self.root, snapshot.relpath)
            if isinstance(opened, Problem):
                continue
            with opened:
                entry = snapshot.entry(opened.info)
            if entry is not None:
                self.put(entry)
                if collect:
                    settled.append(entry)
        return settled

    def flush(self, prune: bool = False) -> int:
        """Write what was remembered into the pack (IO), then let the entries go (they
        are read again by the next flush that writes); returns the entries written.
        `prune`: keep only the logs asked for or remembered in this process (the caller
        scanned the whole directory)."""
        self.settle(collect=False)
        with self._lock:
            entries, kept = self._loaded(), self._documents
            if prune:
                used = {rel: e for rel, e in entries.items() if rel in self._used}
                parsed = {rel: d for rel, d in kept.items() if rel in self._used}
                if len(used) < len(entries) or len(parsed) < len(kept):
                    entries, kept = used, parsed
                    self._dirty = True
            dirty, self._dirty = self._dirty, False
            self._entries, self._documents, self._open = None, {}, False
        if not dirty or not self.keep:
            return 0
        payload = msgspec.msgpack.encode(Pack(self.real, entries, kept))
        return len(entries) if self.cache.seal(self.name, payload) else 0
