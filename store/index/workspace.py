"""The in-memory index of a state directory, updated incrementally, with derived state.

`Workspace.scan()` builds the index once; `apply(paths)` updates only what those
paths affect and returns the missions that changed. Logs are never held whole in
memory: each mission keeps running aggregates (latest state per step, usage series,
recent events) and a `LogReader` whose line index lets a viewer read any window.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from store.derivation.artifacts import ArtifactCheck
from store.derivation.derive import (
    Budget,
    RequestStatus,
    budget_use,
    mission_status,
    request_status,
)
from store.derivation.mission import MissionState
from store.format.confined import (
    Captured,
    Readable,
    capture,
    lstat,
    lstat_files,
    serving,
    walk_tree,
)
from store.format.layout import KNOWN_DIRS, Kind, classify, is_transient, lease_path
from store.format.load import MAX_DOCUMENT_BYTES, LogReader, load_document
from store.format.problems import WORKSPACE_ROW, Problem
from store.format.records import Settings
from store.format.row import MissionStatus, MissionSummary
from store.index.scrub import Scrubbed
from store.sources.base import Captures, Source
from store.sources.registry import KINDS, STATE_FOLDERS, Context, SourceKind, sources_for

if TYPE_CHECKING:
    from store.cache.prefix import PrefixIndex  # the cache loads only to be used
    from store.sources.registry import LoopexecDir, LoopxSource, SmallWorkspace

Clock = Callable[[], datetime]
_S = TypeVar("_S", bound=Source)
__all__ = [
    "WORKSPACE_ROW",
    "ReadAhead",
    "Workspace",
    "group_by_mission",
    "utc_now",
]


LOG_STEP = 4 * 1024 * 1024
"""A log is read ahead this much at a time (about 20,000 lines): the event loop folds no
more than that in one step, and keys are handled between steps."""
READ_AHEAD = 64 * 1024 * 1024
"""What one step reads ahead in all; paths past it wait for the next step."""
CATCH_UP_STATS = 2048
"""`changed_since` stats this many files at a time."""
RACY_NS = 1_000_000_000
"""A file changed this shortly before the scan began may have been read before the
change (its time lags the clock by a tick): `changed_since` counts it as changed (as the
cache's documents count theirs: `store.cache.documents.RACY_NS`)."""


def _kind_named(name: str) -> SourceKind[Any]:
    return next(kind for kind in KINDS if kind.name == name)


def utc_now() -> datetime:
    return datetime.now(UTC)


_LOGS = (Kind.EVENTS, Kind.EVIDENCE)


def _log_start(reader: LogReader, rel: str, ahead: ReadAhead) -> Callable[[Readable], int]:
    """Where to read a log ahead from; a log that changed without growing is verified
    first (its bytes already read must hash the same), and read from 0 if they do not."""

    def start(opened: Readable) -> int:
        if reader.needs_verifying(opened.info):
            if reader.intact(opened):
                return reader.resume_offset(opened.info)
            ahead.rewritten.add(rel)
            return 0
        return reader.resume_offset(opened.info)

    return start


def _from_start(_opened: Readable) -> int:
    return 0


@dataclass(slots=True)
class ReadAhead:
    """Files read off the event loop for one `Workspace.apply_read` step."""

    paths: list[str] = field(default_factory=list)
    """The paths this step applies (folders expanded)."""
    files: dict[str, Captured | Problem] = field(default_factory=dict)
    """What each path that holds data read as (or why it could not be)."""
    checks: dict[str, dict[str, ArtifactCheck]] = field(default_factory=dict)
    """Artifacts hashed for this step, by mission."""
    served: Captures = field(default_factory=dict)
    """Files sources read beyond the paths (`Source.read_ahead`), other roots included."""
    rewritten: set[str] = field(default_factory=set)
    """Logs whose bytes already read changed in place (`verify_prefix`): read again."""
    more: set[str] = field(default_factory=set)
    """Paths for the next step: past the step's budget, or logs with more to read (known
    once `apply_read` is done)."""


class Workspace:
    """Every source of one STATE_DIR (store.sources), with problems and derived status."""

    def __init__(
        self, root: Path | str, clock: Clock = utc_now, cache: PrefixIndex | None = None
    ) -> None:
        self.root = Path(root).resolve()
        self.clock = clock
        self.cache = cache
        """The verified-prefix cache (`store.cache`; `cached` makes one): logs whose
        prefix it holds are read from there on, the rest are remembered into it."""
        self.settings = Settings.model_validate({"schema": 1})
        self.settings_problems: list[Problem] = []
        self.sources: list[Source] = self._new_sources()
        """The sources this directory holds, in routing order (`KINDS`): the first that
        owns a path reads it; native missions last. Another kind's source is made when a
        path of its folders is applied (`_holding`)."""
        self.native = self._holding(KINDS.native)
        self.native.index = cache

    @classmethod
    def cached(cls, root: Path | str, clock: Clock = utc_now, keep: bool = True) -> Workspace:
        """A workspace over the user's verified-prefix cache (none when there is no cache
        folder to use: every log is then read whole); `keep` False: read it, never write
        it (a read-only or served HUD)."""
        from store.cache import open_cache
        from store.cache.prefix import PrefixIndex

        cache = open_cache(Path(root))
        index = PrefixIndex(cache, Path(root).resolve(), keep) if cache is not None else None
        return cls(root, clock, index)

    def part(self) -> Workspace:
        """An empty workspace of the same root, clock and cache, for a scan to build part
        of the index in (`absorb`)."""
        return Workspace(self.root, self.clock, self.cache)

    def flush_cache(self, prune: bool = False) -> int:
        """Write the logs verified since the last flush into the cache (IO: off the event
        loop); `prune`: forget the logs this process never read (after a whole scan)."""
        return self.cache.flush(prune) if self.cache is not None else 0

    def remember(self, paths: Iterable[str]) -> None:
        """Hand the cache these logs, verified whole, if it has not got them as they are
        (after the scrub confirmed the prefixes they held on trust; no IO)."""
        self.native.remember(group_by_mission(paths)[0])

    @property
    def missions(self) -> dict[str, MissionState]:
        """The native missions, by id."""
        return self.native.missions

    @property
    def unknown(self) -> dict[str, Problem]:
        """Files of the state directory no source reads, by path."""
        return self.native.unknown

    @property
    def notices(self) -> list[Problem]:
        """What watching saw that a fresh scan cannot (a log rewritten or replaced), for
        the owner to show once and clear."""
        return self.native.notices

    @notices.setter
    def notices(self, notices: list[Problem]) -> None:
        self.native.notices = notices

    @property
    def small(self) -> SmallWorkspace:
        """The SMALL workspace in `.small/` (or the root itself, when it is a .small)."""
        return self._holding(KINDS.small).workspace

    @property
    def loopexec(self) -> LoopexecDir:
        """loopexec runs in `.loopexec/`."""
        return self._holding(KINDS.loopexec).dir

    @property
    def loopx(self) -> LoopxSource:
        """loopx goals named by `.loopx/registry.json`."""
        return self._holding(KINDS.loopx)

    def _context(self) -> Context:
        return Context(self.root, self._project_dir, lambda: self.settings)

    def _new_sources(self) -> list[Source]:
        return sources_for(self._context())

    def _held(self, kind: SourceKind[Any]) -> Source | None:
        """This directory's source of `kind`, if it holds one yet."""
        return next((source for source in self.sources if source.kind == kind.name), None)

    def _holding(self, kind: SourceKind[_S]) -> _S:
        """The source of `kind`, typed as its kind names it (`_hold`)."""
        return cast("_S", self._hold(kind))

    def _hold(self, kind: SourceKind[Any]) -> Source:
        """The source of `kind`, made now (and kept, in routing order) if there is none."""
        held = self._held(kind)
        if held is None:
            held = kind.make(self._context())
            rank = KINDS.index(kind)  # one insert: a scan thread may route paths meanwhile
            before = [s for s in self.sources if KINDS.index(_kind_named(s.kind)) < rank]
            self.sources.insert(len(before), held)
        return held

    # ---- building and updating -------------------------------------------------------

    def scan(self) -> set[str]:
        """Index the whole directory; returns every mission id."""
        return self.apply(self.walk())

    def walk(self, top: str = "") -> Iterable[str]:
        """Every path under the root (or its folder `top`), relative; unknown folders
        are not entered, and a folder that cannot be listed is yielded itself (applying
        it reports why)."""
        return walk_tree(self.root, top, self._entered)

    def changed_since(self, walked: set[str], since_ns: int) -> set[str]:
        """What may have changed since `since_ns` (the wall clock, as file times are) under
        the root a walk (`walk`) found as `walked` then: every path walked now that was
        not then, or then and not now, that is not a regular file, or whose mtime or
        ctime is not RACY_NS older than `since_ns` (a write always moves ctime, a file's
        time may lag the clock it is compared with by a tick). IO: a walk, and an lstat
        of each file through its folder's descriptor."""
        now = sorted(self.walk())
        limit = since_ns - RACY_NS
        changed = walked.symmetric_difference(now)
        for start in range(0, len(now), CATCH_UP_STATS):  # (a few stats held at a time)
            some = now[start : start + CATCH_UP_STATS]
            found = lstat_files(self.root, some)
            for rel in some:
                info = found.get(rel)
                if info is None or max(info.st_mtime_ns, info.st_ctime_ns) >= limit:
                    changed.add(rel)
        return changed

    def absorb(self, part: Workspace) -> set[str]:
        """Take over the missions (and their unknown files) a partial scan built.

        Lets a large scan run in chunks off the event loop: each chunk indexes some
        missions in a Workspace of its own, and the owner absorbs it when it is done.
        """
        touched: set[str] = set()
        for theirs in part.sources:
            mine = self._hold(_kind_named(theirs.kind))
            kept, rows = mine.take(theirs)
            self.sources[self.sources.index(mine)] = kept
            touched |= rows
        return touched

    def use_prefetched(self, state: object) -> None:
        """Start from a source's state read elsewhere (the SMALL prefetch child), checked
        against the disk now: the source it belongs to takes it (made now if its folder
        is there)."""
        for kind in KINDS:
            if self._held(kind) is not None or self._on_disk(kind):
                self._hold(kind).use(state)

    def is_external(self, rel: str) -> bool:
        """True for a path a source other than the native missions reads."""
        return self._kind_of(rel) is not KINDS.native

    def apply(self, relpaths: Iterable[str]) -> set[str]:
        """Bring the index up to date for these paths; returns the missions touched.
        Reads the disk: off the event loop, use `read_ahead` and `apply_read`."""
        touched = self._apply(self._with_folder_contents(relpaths))
        for mission_id in touched:
            mission = self.missions.get(mission_id)
            if mission is not None:
                mission.take_artifact_checks(mission.hash_artifacts(mission.unchecked_artifacts()))
        self.native.remember(touched)
        return touched

    def _apply(self, relpaths: Iterable[str]) -> set[str]:
        """Each source applies the paths it owns; settings first (sources read them)."""
        paths = [rel for rel in relpaths if not is_transient(rel)]
        touched = self._root_changed() if "" in paths else set()
        if "" in paths or "hud.toml" in paths:
            self.load_settings()
        owned: dict[str, list[str]] = {}
        for rel in paths:
            owned.setdefault(self._kind_of(rel).name, []).append(rel)
        for kind in KINDS:  # in routing order, as the sources are asked
            if kind.name in owned:
                touched |= self._hold(kind).apply(owned[kind.name])
        return touched

    def _root_changed(self) -> set[str]:
        """The root itself changed (recreated, or watched anew): forget everything; the
        walk that follows reads it all again, as a fresh scan does. Returns the ids of
        the rows there were."""
        rows = self.row_ids()
        notices = self.notices
        self.sources = self._new_sources()
        self.native = self._holding(KINDS.native)
        self.native.index = self.cache
        self.notices = notices
        return rows

    def read_ahead(self, relpaths: Iterable[str]) -> ReadAhead:
        """Read the files these paths need, for `apply_read` (run it off the event loop).

        Folders are listed and expanded here; each document is read whole (up to its
        cap), each log from where its reader stands, at most LOG_STEP bytes. Paths past
        READ_AHEAD bytes in all wait for the next step (`ReadAhead.more`). Only reads
        the index (where each log reader stands): nothing here changes it."""
        ahead = ReadAhead()
        budget = READ_AHEAD
        for rel in dict.fromkeys(self._with_folder_contents(relpaths)):
            if budget <= 0:
                ahead.more.add(rel)
                continue
            ahead.paths.append(rel)
            if is_transient(rel) or not self._holds_data(rel):
                continue
            located = classify(rel)
            if located is not None and located.kind in _LOGS:  # a log: one step of it
                reader = self._reader_of(rel)
                start = _from_start if reader is None else _log_start(reader, rel, ahead)
                step = min(LOG_STEP, budget) + (reader.held_back if reader is not None else 0)
                found = capture(self.root, rel, start, step)
            else:  # cap + 1: one byte more says "over the cap"
                found = capture(self.root, rel, _from_start, MAX_DOCUMENT_BYTES + 1)
            ahead.files[rel] = found
            if isinstance(found, Captured):
                budget -= len(found.data)
        for kind in KINDS:  # a source not made yet reads ahead as a new one of its kind
            owned = [rel for rel in ahead.paths if self._kind_of(rel) is kind]
            if owned:
                source = self._held(kind) or kind.make(self._context())
                ahead.served.update(source.read_ahead(owned))
        for mission_id in group_by_mission(ahead.paths)[0]:
            mission = self.missions.get(mission_id)
            if mission is not None:
                ahead.checks[mission_id] = mission.hash_artifacts(mission.unchecked_artifacts())
        return ahead

    def apply_read(self, ahead: ReadAhead) -> set[str]:
        """`apply` with the files `read_ahead` read: the disk is not read again."""
        for rel in ahead.rewritten:
            reader = self._reader_of(rel)
            if reader is not None:
                reader.rewrite_seen = True
        with ExitStack() as stack:
            for root in {root for root, _rel in ahead.served}:
                files = {rel: found for (at, rel), found in ahead.served.items() if at == root}
                stack.enter_context(serving(Path(root), files))
            stack.enter_context(serving(self.root, ahead.files))
            touched = self._apply(ahead.paths)
        for mission_id in touched:
            mission = self.missions.get(mission_id)
            if mission is not None:
                mission.take_artifact_checks(ahead.checks.get(mission_id, {}))
                ahead.more.update(mission.unchecked_artifacts())  # cited in this step
        for rel, found in ahead.files.items():  # a log not read to its end: another step
            reader = self._reader_of(rel)
            if isinstance(found, Captured) and reader and reader.offset < found.info.st_size:
                ahead.more.add(rel)
        return touched

    def held_leases(self) -> list[str]:
        """The lease files (`store.derivation.lease`) of undecided requests whose waiter held
        them when last tested: a process that dies drops its lock without a file change."""
        return [
            lease_path(mission.id, request_id)
            for mission in self.missions.values()
            for request_id, held in mission.leases.items()
            if held and request_id not in mission.decisions
        ]

    def readers(self) -> Iterator[LogReader]:
        """Every mission's log readers (for the scrub)."""
        for mission in self.missions.values():
            yield from (r for r in (mission.events, mission.evidence) if r is not None)

    def trusting(self) -> int:
        """How many logs hold a prefix taken from the cache that the scrub has not hashed
        again yet (the HUD says "cached, not verified" while there are any)."""
        return sum(reader.trusted is not None for reader in self.readers())

    def take_scrub(self, scrubbed: Scrubbed) -> set[str]:
        """Fold a scrub pass back: logs found unchanged are marked verified; the paths of
        logs rewritten in place (still as the scrub saw them) are returned, to be read
        again (`read_ahead`, `apply_read`) from the start."""
        again = set()
        for reader in self.readers():
            signature = scrubbed.verified.get(reader.relpath)
            if signature is not None and signature[0] == reader.inode:
                reader.verified = signature
                confirmed = scrubbed.confirmed.get(reader.relpath)
                if confirmed is not None:
                    reader.confirm(*confirmed)
            seen = scrubbed.rewritten.get(reader.relpath)
            if seen is not None and (seen.inode, seen.generation) == (
                reader.inode,
                reader.generation,
            ):
                reader.rewrite_seen = True
                again.add(reader.relpath)
        return again

    def _holds_data(self, rel: str) -> bool:
        """True for a path whose bytes `apply` reads and the workspace captures (a record,
        a SMALL or loopexec file, hud.toml); False for artifacts, leases (only their lock
        is tested), folders, files outside the layout, and loopx's paths: its `read_ahead`
        captures every file it reads, in any root (`@loopx<n>/...` paths name files of
        other roots)."""
        if rel == "hud.toml":
            return True
        kind = self._kind_of(rel)
        if kind is not KINDS.native:
            return kind is not KINDS.loopx
        located = classify(rel)
        return located is not None and located.kind not in (Kind.ARTIFACT, Kind.LEASE)

    def _reader_of(self, rel: str) -> LogReader | None:
        """The log reader that indexes `rel`, if a mission has one."""
        located = classify(rel)
        mission = self.missions.get(located.mission or "") if located is not None else None
        if mission is None or located is None:
            return None
        return (
            mission.events
            if located.kind is Kind.EVENTS
            else mission.evidence
            if located.kind is Kind.EVIDENCE
            else None
        )

    def _with_folder_contents(self, relpaths: Iterable[str]) -> Iterable[str]:
        """The paths, each layout folder among them followed by everything in it.

        A folder made or moved in is one watcher event: files written into it before
        the watcher watched it, or that came with it, have no event of their own.
        """
        for rel in relpaths:
            yield rel
            if not rel or self._entered(rel):  # "" is the root: everything
                info = lstat(self.root, rel)
                if info is not None and stat.S_ISDIR(info.st_mode):
                    yield from self.walk(rel)
                yield from self._indexed_under(rel)

    def _indexed_under(self, folder: str) -> list[str]:
        """What the index holds under a mission's folder: a folder moved away is one
        watcher event, and its files must be found gone."""
        parts = folder.split("/")
        mission = self.missions.get(parts[1]) if len(parts) > 1 and parts[0] == "missions" else None
        if mission is None:
            return []
        prefix = folder + "/"
        return [rel for rel in mission.indexed_paths() if rel.startswith(prefix)]

    def _project_dir(self) -> bool:
        """True when the root is a project's folder: it holds a project source's folder
        (.small/, .loopexec/, ...)."""
        return any(self._on_disk(kind) for kind in KINDS if kind.project)

    def _on_disk(self, kind: SourceKind[Any]) -> bool:
        """True when one of the kind's folders is under the root."""
        return any((self.root / folder).is_dir() for folder in kind.folders)

    def _kind_of(self, rel: str) -> SourceKind[Any]:
        """The kind of the first source that owns `rel` (the native missions own the
        rest); a source not made yet owns the paths its kind `claims`."""
        for kind in KINDS:
            held = self._held(kind)
            if held.owns(rel) if held is not None else kind.claims(rel):
                return kind
        return KINDS.native

    def _entered(self, folder: str) -> bool:
        """True for a folder the walk goes into: one of the layout's or a source's."""
        return bool(KNOWN_DIRS.match(folder)) or folder in STATE_FOLDERS

    def load_settings(self) -> None:
        """(Re)load hud.toml, or fall back to defaults when it is absent."""
        if lstat(self.root, "hud.toml") is None:
            self.settings = Settings.model_validate({"schema": 1})
            self.settings_problems = []
            return
        loaded = load_document(self.root, "hud.toml", Settings)
        self.settings_problems = loaded.problems
        if loaded.record is not None:
            self.settings = loaded.record

    # ---- derived ---------------------------------------------------------------------

    def status(self, mission_id: str) -> MissionStatus:
        return mission_status(self.missions[mission_id], self.clock(), self.settings)

    def budget(self, mission_id: str) -> Budget:
        return budget_use(self.missions[mission_id], self.clock())

    def request_status(self, mission_id: str, request_id: str) -> RequestStatus:
        return request_status(self.missions[mission_id], request_id, self.clock())

    def pending_requests(self) -> list[tuple[str, str]]:
        """(mission, request) of every pending request across missions."""
        now = self.clock()
        return [
            (mission.id, request_id)
            for mission in self.missions.values()
            for request_id in mission.requests
            if request_status(mission, request_id, now) is RequestStatus.PENDING
        ]

    def problems(self) -> list[Problem]:
        """Every problem in the workspace."""
        return [problem for group in self.problems_by_row().values() for problem in group]

    def problems_by_row(self, loose: list[Problem] | None = None) -> dict[str, list[Problem]]:
        """Every problem under the overview row it belongs to (a mission, the SMALL
        workspace, a loopexec run, ...), or under WORKSPACE_ROW: settings and loose files
        (`loose_problems()`, unless the caller has them already)."""
        loose = self.loose_problems() if loose is None else list(loose)
        found: dict[str, list[Problem]] = {WORKSPACE_ROW: loose}
        for source in self.sources:
            for row_id, problems in source.problems_by_row().items():
                found.setdefault(row_id, []).extend(problems)
        return {row: problems for row, problems in found.items() if problems}

    def loose_problems(self) -> list[Problem]:
        """Problems of no row: hud.toml's, then each source's (files that name no run,
        files of no mission)."""
        return self.settings_problems + [p for s in self.sources for p in s.loose_problems()]

    # ---- rows: one per mission, SMALL workspace, loopexec run, ... ----------------------

    def row_ids(self) -> set[str]:
        """The id of every overview row, of every source."""
        return {row_id for source in self.sources for row_id in source.row_ids()}

    def row(self, row_id: str) -> MissionSummary | None:
        """The overview row `row_id` as its source derives it now, None if there is none."""
        return self._row(row_id, self.clock())

    def _row(self, row_id: str, now: datetime) -> MissionSummary | None:
        return next((row for s in self.sources if (row := s.row(row_id, now, self.settings))), None)

    def rows(self) -> dict[str, MissionSummary]:
        """Every overview row, by id, all derived as of one reading of the clock."""
        now = self.clock()
        found = (self._row(row_id, now) for row_id in self.row_ids())
        return {row.id: row for row in found if row is not None}

    def external_summaries(self) -> dict[str, MissionSummary]:
        """The rows of every source but the native missions."""
        return {row_id: row for row_id, row in self.rows().items() if row_id not in self.missions}

    def detail_of(self, row_id: str) -> str | None:
        """The kind of detail screen that renders a row (`Source.detail`)."""
        return next((kind for s in self.sources if (kind := s.detail(row_id))), None)

    def documents(self, row_id: str) -> tuple[str, ...]:
        """A row's human-writable files (`Source.documents`), the only ones a human edits."""
        return next((found for s in self.sources if (found := s.documents(row_id))), ())

    def verdicts(self, row_id: str) -> dict[str, str]:
        """A row's verdict per check (SMALL's), for `hud check`."""
        return next((found for s in self.sources if (found := s.verdicts(row_id))), {})

    def watch_paths(self) -> dict[str, Path]:
        """Folders outside the root the watcher must watch too, by path prefix."""
        return {prefix: path for s in self.sources for prefix, path in s.watch_paths().items()}


def group_by_mission(paths: Iterable[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Paths under `missions/<id>/`, by mission id; and all other paths."""
    missions: dict[str, list[str]] = {}
    other: list[str] = []
    for rel in paths:
        parts = rel.split("/", 2)
        if len(parts) >= 3 and parts[0] == "missions":
            missions.setdefault(parts[1], []).append(rel)
        else:
            other.append(rel)
    return missions, other
