"""A mission's logs from the verified-prefix cache (`store.cache`), and back into it.

`resume_log` starts a new log reader at the end of the log's cached prefix, with the
mission's fold restored as it was there, when the cache's rules allow (`reusable`): the
reader then reads only what came after. `remember` hands the cache a snapshot of each
log of a mission that its reader read and verified itself, for the next `flush`.

`parsed_documents` gives the documents among a batch of paths that the cache holds as
they are on disk now (`store.cache.documents`: device, inode, size, mtime and ctime all
as when parsed), for `store.format.load.known_documents` to answer from, and the stat
of the others; `remember_documents` hands the cache those the mission then parsed.
Only while the scan reads the disk itself (the pack open, nothing served).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from store.cache import documents
from store.cache.entry import clean, resume, reusable, snapshot
from store.cache.prefix import PrefixIndex
from store.cache.state import StateError, decode_state
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.format.confined import OpenFile, is_serving, open_file
from store.format.layout import Kind, Located, classify
from store.format.load import Loaded
from store.format.problems import Problem

MIN_BYTES = 32 * 1024
"""A log shorter than this (about 150 lines) is read whole each time: restoring its fold
costs as much as reading it. A 20-line log (4 KiB), measured interleaved, mission by
mission: read and folded 259 us; restored 257 us (the state decoded 137, the log opened
and its last line hashed 37, the reader's poll from its end 52)."""
DOCUMENT_SUFFIXES = (".toml", ".json")
AGGREGATES = {Kind.EVENTS: EVENT_AGGREGATES, Kind.EVIDENCE: EVIDENCE_AGGREGATES}


def resume_log(index: PrefixIndex, mission: MissionState, located: Located) -> bool:
    """Set the mission's reader of the log `located` names at the end of its cached
    prefix, its fold restored (IO: only from the disk, never from what is served: a log
    read ahead is read from where its capture starts). False: nothing was reused."""
    kind, rel = located.kind, located.relpath
    names = AGGREGATES.get(kind)
    current = mission.events if kind is Kind.EVENTS else mission.evidence
    if names is None or current is not None:
        return False
    entry = index.get(rel)  # (the scan reads the pack, in its thread, before any fold)
    if entry is None:
        return False
    opened = open_file(mission.root, rel)
    if isinstance(opened, Problem):
        return False
    with opened:
        if not isinstance(opened, OpenFile) or not reusable(entry, opened):
            return False
    try:
        state = decode_state(entry.state)
    except StateError:
        return False
    if tuple(state) != names:
        return False
    reader = mission.reader(kind, rel)
    resume(reader, entry)
    for name, value in state.items():  # decoded afresh: taken as it is (`restore` copies)
        setattr(mission, name, value)
    if kind is Kind.EVENTS:
        mission.events = reader
    else:
        mission.evidence = reader
    return True


def remember(index: PrefixIndex, mission: MissionState) -> None:
    """Snapshot the mission's logs that its readers verified whole, when the cache has
    not got them as they are and they are long enough to be worth it (no IO)."""
    for kind, reader in ((Kind.EVENTS, mission.events), (Kind.EVIDENCE, mission.evidence)):
        if (
            reader is not None
            and reader.offset >= MIN_BYTES
            and clean(reader)
            and index.stale(reader.relpath, reader.inode, reader.offset)
        ):
            index.remember(snapshot(reader, mission.saved(AGGREGATES[kind])))


Parsed = dict[str, tuple[type[BaseModel], Loaded[Any]]]
"""Documents the cache holds as they are now, by path (`store.format.load.Known`)."""


def parsed_documents(
    index: PrefixIndex, root: Path, paths: Iterable[str]
) -> tuple[Parsed, dict[str, os.stat_result]]:
    """The documents among `paths` the cache holds as the files are now, decoded; and the
    lstat of the others that may be kept once read (`documents.settled`). IO: one lstat
    per document, through its folder's descriptor."""
    wanted: dict[str, type[BaseModel]] = {}
    if index.open and not is_serving():
        for rel in paths:
            if not rel.endswith(DOCUMENT_SUFFIXES):
                continue  # (classify costs more than this)
            located = classify(rel)
            model = documents.MODELS.get(located.kind) if located is not None else None
            if model is not None:
                wanted[rel] = model
    if not wanted:
        return {}, {}
    found = documents.stats(root, list(wanted))
    now = time.time_ns()
    parsed: Parsed = {}
    unread: dict[str, os.stat_result] = {}
    for rel, info in found.items():
        kept = index.document(rel)
        if kept is not None and kept.stands_for(info):
            try:
                parsed[rel] = (wanted[rel], kept.loaded(wanted[rel]))
                continue
            except StateError:
                pass
        if documents.settled(info, now):
            unread[rel] = info
    return parsed, unread


def remember_documents(
    index: PrefixIndex,
    missions: Mapping[str, MissionState],
    unread: dict[str, os.stat_result],
    fresh: Mapping[str, Any],
) -> None:
    """Hand the cache the documents the missions parsed from files stat'ed as `unread`
    says, before they were read, with their parsed values (`fresh`; no IO)."""
    by_mission: dict[str, list[str]] = {}
    for rel in unread:
        by_mission.setdefault(rel.split("/", 2)[1], []).append(rel)
    for mission_id, rels in by_mission.items():
        mission = missions.get(mission_id)
        if mission is None:
            continue
        held = {loaded.relpath: loaded for loaded in mission.documents()}
        for rel in rels:
            loaded = held.get(rel)
            if loaded is not None:
                index.remember_document(unread[rel], loaded, fresh.get(rel, loaded.raw))
