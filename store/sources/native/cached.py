"""A mission's logs from the verified-prefix cache (`store.cache`), and back into it.

`resume_log` starts a new log reader at the end of the log's cached prefix, with the
mission's fold restored as it was there, when the cache's rules allow (`reusable`): the
reader then reads only what came after. `remember` hands the cache a snapshot of each
log of a mission that its reader read and verified itself, for the next `flush`.
"""

from __future__ import annotations

from store.cache.entry import clean, resume, reusable, snapshot
from store.cache.prefix import PrefixIndex
from store.cache.state import StateError, decode_state
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.format.confined import OpenFile, open_file
from store.format.layout import Kind, Located
from store.format.problems import Problem

MIN_BYTES = 32 * 1024
"""A log shorter than this (about 150 lines) is read whole each time: reading it costs
less than restoring its fold from the cache (bench/reopen.py)."""
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
    mission.restore(state)
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
