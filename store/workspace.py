"""The in-memory index of a state directory, updated incrementally, with derived state.

`Workspace.scan()` builds the index once; `apply(paths)` updates only what those
paths affect and returns the missions that changed. Logs are never held whole in
memory: each mission keeps running aggregates (latest state per step, usage series,
recent events) and a `LogReader` whose line index lets a viewer read any window.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from store.artifacts import ArtifactCheck
from store.confined import (
    Captured,
    Readable,
    capture,
    link_problem,
    list_folder,
    lstat,
    not_regular,
    serving,
)
from store.derive import (
    Budget,
    RequestStatus,
    budget_use,
    mission_status,
    request_status,
)
from store.layout import (
    KNOWN_DIRS,
    Kind,
    classify,
    is_transient,
    safe_mission_id,
    safe_request_id,
)
from store.load import MAX_DOCUMENT_BYTES, LogReader, load_document, verify_prefix
from store.loopexec import FOLDER as LOOPEXEC_FOLDER
from store.loopexec import LoopexecDir
from store.mission import MissionState
from store.problems import Problem
from store.records import Settings
from store.row import MissionStatus, MissionSummary
from store.scrub import Scrubbed
from store.small.layout import SMALL_DIR
from store.small.workspace import SmallWorkspace

Clock = Callable[[], datetime]
WORKSPACE_ROW = "workspace"
"""Where `problems_by_row` puts the problems of no row: settings, files of no mission."""


LOG_STEP = 4 * 1024 * 1024
"""A log is read ahead this much at a time (about 20,000 lines): the event loop folds no
more than that in one step, and keys are handled between steps."""
READ_AHEAD = 64 * 1024 * 1024
"""What one step reads ahead in all; paths past it wait for the next step."""


def utc_now() -> datetime:
    return datetime.now(UTC)


_LOGS = (Kind.EVENTS, Kind.EVIDENCE)


def _log_start(reader: LogReader, rel: str, ahead: ReadAhead) -> Callable[[Readable], int]:
    """Where to read a log ahead from; a log that changed without growing is verified
    first (its bytes already read must hash the same), and read from 0 if they do not."""

    def start(opened: Readable) -> int:
        if reader.needs_verifying(opened.info):
            if verify_prefix(opened, reader.offset, reader.digest.copy().hexdigest()):
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
    rewritten: set[str] = field(default_factory=set)
    """Logs whose bytes already read changed in place (`verify_prefix`): read again."""
    more: set[str] = field(default_factory=set)
    """Paths for the next step: past the step's budget, or logs with more to read (known
    once `apply_read` is done)."""


class Workspace:
    """Every mission of one STATE_DIR, with problems and derived status."""

    def __init__(self, root: Path | str, clock: Clock = utc_now) -> None:
        self.root = Path(root).resolve()
        self.clock = clock
        self.missions: dict[str, MissionState] = {}
        self.settings = Settings.model_validate({"schema": 1})
        self.settings_problems: list[Problem] = []
        self.unknown: dict[str, Problem] = {}
        self.bare = False
        """No `missions/` folder at the top: unless SMALL or loopexec live here, this is
        not a state directory, and its loose entries are one problem, not one each."""
        self.notices: list[Problem] = []
        """What watching saw that a fresh scan cannot (a log rewritten or replaced), for
        the owner to show once and clear."""
        self.small = SmallWorkspace(self.root)
        """The SMALL workspace in `.small/` (or the root itself, when it is a .small)."""
        self.loopexec = LoopexecDir(self.root)
        """loopexec runs in `.loopexec/`."""

    # ---- building and updating -------------------------------------------------------

    def scan(self) -> set[str]:
        """Index the whole directory; returns every mission id."""
        return self.apply(self.walk())

    def walk(self, top: str = "") -> Iterable[str]:
        """Every path under the root (or its folder `top`), relative; unknown folders
        are not entered, and a folder that cannot be listed is yielded itself (applying
        it reports why)."""
        stack = [top]
        while stack:
            folder = stack.pop()
            entries = list_folder(self.root, folder)
            if isinstance(entries, Problem):
                if folder and entries.code != "missing":
                    yield folder
                continue
            for entry in entries:
                rel = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False) and _entered(rel):
                    stack.append(rel)
                else:
                    yield rel

    def absorb(self, part: Workspace) -> set[str]:
        """Take over the missions (and their unknown files) a partial scan built.

        Lets a large scan run in chunks off the event loop: each chunk indexes some
        missions in a Workspace of its own, and the owner absorbs it when it is done.
        """
        self.missions.update(part.missions)
        self.unknown.update(part.unknown)
        self.bare |= part.bare  # the part that indexed the top knows
        touched = set(part.missions)
        if part.small.present:  # a SMALL workspace or loopexec runs it indexed
            self.small = part.small
            touched.add(part.small.id)
        if not part.loopexec.empty:
            self.loopexec = part.loopexec
            touched |= set(part.loopexec.problems_by_id())
        return touched

    def use_small(self, small: SmallWorkspace | None) -> None:
        """Start from a SMALL workspace read elsewhere (store.small.prefetch), checked
        against the disk now: a file whose bytes changed since is read again."""
        if small is not None and small.root == self.root:
            self.small = small
            small.load()

    def is_external(self, rel: str) -> bool:
        """True for a path of the SMALL workspace or the loopexec folder."""
        return self._adapter(rel) is not None

    def apply(self, relpaths: Iterable[str]) -> set[str]:
        """Bring the index up to date for these paths; returns the missions touched.
        Reads the disk: off the event loop, use `read_ahead` and `apply_read`."""
        touched = self._apply(self._with_folder_contents(relpaths))
        for mission_id in touched:
            mission = self.missions.get(mission_id)
            if mission is not None:
                mission.take_artifact_checks(mission.hash_artifacts(mission.unchecked_artifacts()))
        return touched

    def _apply(self, relpaths: Iterable[str]) -> set[str]:
        touched: set[str] = set()
        for rel in relpaths:
            adapter = self._adapter(rel)
            if adapter is not None:
                touched |= adapter.apply(rel)
                continue
            if not rel:
                touched |= self._root_changed()
            mission = self._apply_one(rel)
            if mission is not None:
                touched.add(mission)
        for mission_id in touched:
            state = self.missions.get(mission_id)
            if state is not None:
                self.notices += state.notices
                state.notices.clear()
                if not state.exists():
                    del self.missions[mission_id]
        return touched

    def _root_changed(self) -> set[str]:
        """The root itself changed (recreated, or watched anew): forget everything; the
        walk that follows reads it all again, as a fresh scan does. Returns the ids of
        the rows there were."""
        rows = set(self.missions) | set(self.external_summaries())
        self.missions.clear()
        self.unknown.clear()
        self.bare = False
        self.small = SmallWorkspace(self.root)
        self.loopexec = LoopexecDir(self.root)
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
        with serving(self.root, ahead.files):
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

    def readers(self) -> Iterator[LogReader]:
        """Every mission's log readers (for the scrub)."""
        for mission in self.missions.values():
            yield from (r for r in (mission.events, mission.evidence) if r is not None)

    def take_scrub(self, scrubbed: Scrubbed) -> set[str]:
        """Fold a scrub pass back: logs found unchanged are marked verified; the paths of
        logs rewritten in place (still as the scrub saw them) are returned, to be read
        again (`read_ahead`, `apply_read`) from the start."""
        again = set()
        for reader in self.readers():
            signature = scrubbed.verified.get(reader.relpath)
            if signature is not None and signature[0] == reader.inode:
                reader.verified = signature
            seen = scrubbed.rewritten.get(reader.relpath)
            if seen is not None and (seen.inode, seen.generation) == (
                reader.inode,
                reader.generation,
            ):
                reader.rewrite_seen = True
                again.add(reader.relpath)
        return again

    def _holds_data(self, rel: str) -> bool:
        """True for a path whose bytes `apply` reads (a record, a SMALL or loopexec file,
        hud.toml); False for artifacts, folders and files outside the layout."""
        if rel == "hud.toml" or self.is_external(rel):
            return True
        located = classify(rel)
        return located is not None and located.kind is not Kind.ARTIFACT

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
            if not rel or _entered(rel):  # "" is the root: everything
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
        """True when the root is a project's folder: it holds .small/ or .loopexec/."""
        return any((self.root / name).is_dir() for name in (SMALL_DIR, LOOPEXEC_FOLDER))

    def _adapter(self, rel: str) -> SmallWorkspace | LoopexecDir | None:
        """The SMALL workspace or loopexec folder that owns `rel`, if one does."""
        if self.small.owns(rel):
            return self.small
        if self.loopexec.owns(rel):
            return self.loopexec
        return None

    def _apply_one(self, rel: str) -> str | None:
        if is_transient(rel):
            return None
        if rel == "hud.toml" or not rel:
            self.load_settings()
            return None
        located = classify(rel)
        if located is None:
            return self._unknown(rel)
        self.unknown.pop(rel, None)
        assert located.mission is not None  # the layout's patterns admit safe ids only
        self._mission(located.mission).apply(located)
        return located.mission

    def _mission(self, mission_id: str) -> MissionState:
        state = self.missions.get(mission_id)
        if state is None:
            state = self.missions[mission_id] = MissionState(self.root, mission_id)
        return state

    def _unknown(self, rel: str) -> str | None:
        """Index a path that is no record: an unknown file or folder, a symlink, a layout
        folder (a problem only if it cannot be listed), or a path that is gone."""
        parts = rel.split("/")
        mission = self.missions.get(parts[1]) if len(parts) > 1 and parts[0] == "missions" else None
        if len(parts) == 1:  # the top changed: is it (still) a state directory?
            self.bare = lstat(self.root, "missions") is None
        if parts[0] != "missions" and self._project_dir():
            self.unknown.pop(rel, None)  # a project's own files, beside .small or .loopexec
            return None
        info = lstat(self.root, rel)
        if info is None:  # gone (or a folder on its way is)
            self.unknown.pop(rel, None)
            if mission is not None:
                mission.forget_prefix(rel)
                return mission.id
            return None
        problem = self._path_problem(rel, parts, info)
        if len(parts) > 2 and parts[0] == "missions" and safe_mission_id(parts[1]):
            if mission is None and problem is None:
                return None
            mission = mission or self._mission(parts[1])
            mission.set_path_problem(rel, problem)
            return mission.id
        if problem is None:
            self.unknown.pop(rel, None)
        else:
            self.unknown[problem.path] = problem
        return None

    def _path_problem(self, rel: str, parts: list[str], info: os.stat_result) -> Problem | None:
        if stat.S_ISLNK(info.st_mode):
            return link_problem(self.root, rel)
        if len(parts) >= 2 and parts[0] == "missions" and not safe_mission_id(parts[1]):
            return Problem(
                f"missions/{parts[1]}",
                None,
                "unsafe-mission-id",
                f"mission folder name {parts[1]!r} is not a safe id",
                "rename it to lower-case letters, digits, '.', '_' or '-' "
                "(at most 64, starting with a letter or digit)",
            )
        request = _REQUEST_FILE.match(rel)
        if request and not safe_request_id(request.group(1)):
            return Problem(
                rel,
                None,
                "unsafe-request-id",
                f"request id {request.group(1)!r} is not a safe id; it cannot be decided",
                "the agent must name requests with letters, digits, '.', '_' or '-' (no '..')",
            )
        if not stat.S_ISDIR(info.st_mode) and KNOWN_DIRS.match(rel):
            return not_regular(rel, info.st_mode, "a folder")  # where the layout has one
        if not stat.S_ISDIR(info.st_mode):
            return Problem(
                rel, None, "unknown-file", "file is not part of the layout", _LAYOUT_HINT, "warn"
            )
        if not KNOWN_DIRS.match(rel):
            return Problem(
                rel,
                None,
                "unknown-folder",
                "folder is not part of the layout",
                _LAYOUT_HINT,
                "warn",
            )
        listed = list_folder(self.root, rel)  # a layout folder: fine if it can be listed
        if not isinstance(listed, Problem) or listed.code == "missing":
            return None
        hidden = "pending requests may be hidden in it" if rel.endswith("/approvals") else ""
        return Problem(
            rel,
            None,
            listed.code,
            f"{listed.message}; the files in it are not checked"
            + (f" ({hidden})" if hidden else ""),
            listed.hint,
        )

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

    def problems_by_row(self) -> dict[str, list[Problem]]:
        """Every problem under the overview row it belongs to (a mission, the SMALL
        workspace, a loopexec run), or under WORKSPACE_ROW: settings and loose files."""
        found: dict[str, list[Problem]] = {WORKSPACE_ROW: self.loose_problems()}
        for problem in self.entry_problems():
            parts = problem.path.split("/")
            owner = parts[1] if len(parts) > 1 and parts[0] == "missions" else WORKSPACE_ROW
            found.setdefault(owner, []).append(problem)
        for mission_id, mission in self.missions.items():
            found.setdefault(mission_id, []).extend(mission.problems())
        for row_id, problems in self.external_problems().items():
            found.setdefault(row_id, []).extend(problems)
        return {row: problems for row, problems in found.items() if problems}

    def entry_problems(self) -> list[Problem]:
        """The problems of unknown files and folders; in a folder that holds only such
        (something else than a state directory), one problem that says so."""
        if self.bare and self.unknown and not self.small.present and self.loopexec.empty:
            return [not_a_state_dir(len(self.unknown))]
        return list(self.unknown.values())

    def loose_problems(self) -> list[Problem]:
        """Problems of no row that are not unknown files: hud.toml's, and loopexec's own
        files that name no run."""
        return self.settings_problems + self.loopexec.loose_problems()

    # ---- SMALL and loopexec: overview rows beside the native missions -------------------

    def external_summaries(self) -> dict[str, MissionSummary]:
        """Overview rows of the SMALL workspace (`small:<dir>`) and loopexec runs."""
        now = self.clock()
        rows = self.loopexec.summaries(now, self.settings)
        small = self.small.summary(now, self.settings)
        if small is not None:
            rows[small.id] = small
        return rows

    def external_problems(self) -> dict[str, list[Problem]]:
        """The problems of each SMALL or loopexec row, by its id."""
        found = self.loopexec.problems_by_id()
        if self.small.present:
            found[self.small.id] = self.small.problems()
        return found


_REQUEST_FILE = re.compile(r"^missions/[^/]+/approvals/([^/]+)\.(?:json|toml)$")
_LAYOUT_HINT = "move or remove it; see docs/format.md for the state directory layout"


def not_a_state_dir(entries: int) -> Problem:
    """The one problem of a folder that holds other things than a state directory."""
    return Problem(
        ".",
        None,
        "not-a-state-dir",
        f"not a state directory: no missions/ folder (nor .small/ or .loopexec/), "
        f"and {entries} {'entry' if entries == 1 else 'entries'} of something else",
        "open the HUD on a state directory, or create missions/ here to make it one",
        "warn",
    )


def _entered(folder: str) -> bool:
    """True for a folder the walk goes into: one of the layout's, SMALL's or loopexec's."""
    return bool(KNOWN_DIRS.match(folder)) or folder in (SMALL_DIR, LOOPEXEC_FOLDER)


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
