"""Native missions (`missions/<id>/`) as a source: one row per mission.

Owns the mission index (`missions`) and the files of no mission (`unknown`); every
path no other source owns comes here. Reading logs ahead in steps, scrubbing and
artifact hashes stay with the workspace, which drives them for this source.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.derivation.mission import MissionState
from store.derivation.summary import summarize
from store.format.confined import link_problem, list_folder, lstat, not_regular, read_file
from store.format.layout import (
    KNOWN_DIRS,
    SIGNERS_FILE_RE,
    TRUST_FILE_RE,
    Kind,
    Located,
    classify,
    is_transient,
    safe_mission_id,
    safe_request_id,
)
from store.format.load import known_documents
from store.format.problems import WORKSPACE_ROW, Problem
from store.format.records import Settings
from store.format.row import MissionSummary
from store.sources.base import Quiet
from store.trust.policy import floor_of, workspace_id
from store.trust.signers import MAX_SIGNERS_BYTES

if TYPE_CHECKING:  # the cache (and msgspec) loads only for an owner that uses one
    from store.cache.prefix import PrefixIndex


def owner_row(rel: str) -> str:
    """The row a path's problem belongs to: its mission, else WORKSPACE_ROW."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 1 and parts[0] == "missions" else WORKSPACE_ROW


class NativeSource(Quiet):
    """Every mission of the state directory, and the files that belong to none."""

    kind = "mission"

    def __init__(self, root: Path, in_project: Callable[[], bool]) -> None:
        self.root = root
        self.in_project = in_project
        """True when the root is a project's folder (another source's folder is in it)."""
        self.missions: dict[str, MissionState] = {}
        self.unknown: dict[str, Problem] = {}
        self.notices: list[Problem] = []
        self.signers: dict[str, bytes | Problem] = {}
        """The root trust files (`layout.TRUST_FILE_RE`: `signers/` files, workspace.toml,
        policy.toml) as read, by path."""
        self.index: PrefixIndex | None = None
        """The verified-prefix cache (`store.cache`), when the owner uses one: logs are
        resumed from it and remembered into it."""
        self.bare = False
        """No `missions/` folder at the top: unless another source lives here, this is
        not a state directory, and its loose entries are one problem, not one each."""

    def present(self) -> bool:
        return bool(self.missions or self.unknown)

    def owns(self, rel: str) -> bool:
        return True  # the last source asked: what no other source reads

    def apply(self, paths: Iterable[str]) -> set[str]:
        touched: set[str] = set()
        paths = list(paths)
        index = self.index
        parsed: dict[str, Any] = {}
        unread: dict[str, os.stat_result] = {}
        if index is not None:
            from store.sources.native import cached

            parsed, unread = cached.parsed_documents(index, self.root, paths)
        fresh: dict[str, Any] = {}
        with known_documents(self.root, parsed, fresh):
            for rel in paths:
                if TRUST_FILE_RE.match(rel):
                    touched |= self._apply_signers(rel)
                    continue
                mission = self._apply_one(rel)
                if mission is not None:
                    touched.add(mission)
        if index is not None and unread:
            cached.remember_documents(index, self.missions, unread, fresh)
        for mission_id in touched:
            state = self.missions.get(mission_id)
            if state is not None:
                self.notices += state.notices
                state.notices.clear()
                if not state.exists():
                    del self.missions[mission_id]
        return touched

    def remember(self, mission_ids: Iterable[str] | None = None) -> None:
        """Hand the cache the logs of these missions (None: all) its readers verified
        whole, when it has not got them as they are (no IO)."""
        if self.index is None:
            return
        from store.sources.native import cached

        for mission_id in self.missions if mission_ids is None else mission_ids:
            mission = self.missions.get(mission_id)
            if mission is not None:
                cached.remember(self.index, mission)

    def row_ids(self) -> set[str]:
        return set(self.missions)

    def row(self, row_id: str, now: datetime, settings: Settings) -> MissionSummary | None:
        mission = self.missions.get(row_id)
        return summarize(mission, now, settings) if mission is not None else None

    def problems_by_row(self) -> dict[str, list[Problem]]:
        found: dict[str, list[Problem]] = {}
        for problem in self.unknown.values():
            owner = owner_row(problem.path)
            if owner != WORKSPACE_ROW:
                found.setdefault(owner, []).append(problem)
        for mission_id, mission in self.missions.items():
            found.setdefault(mission_id, []).extend(mission.problems())
        return found

    def loose_problems(self) -> list[Problem]:
        loose = [p for p in self.unknown.values() if owner_row(p.path) == WORKSPACE_ROW]
        loose += [p for p in self.signers.values() if isinstance(p, Problem)]
        for found in (workspace_id(self.signers), floor_of(self.signers)):
            if isinstance(found, Problem) and found not in loose:
                loose.append(found)
        if self.bare and loose and not self.missions:
            return [not_a_state_dir(len(loose))]
        return loose

    def detail(self, row_id: str) -> str | None:
        return self.kind if row_id in self.missions else None

    def take(self, part: NativeSource) -> tuple[NativeSource, set[str]]:
        self.missions.update(part.missions)
        self.unknown.update(part.unknown)
        for mission in part.missions.values():
            mission.signers = self.signers
            mission.signers_changed()
        touched = set(part.missions)
        for rel, found in part.signers.items():
            self.signers[rel] = found
            touched |= self._naming(rel)
        self.bare |= part.bare  # the part that indexed the top knows
        return self, touched

    # ---- indexing one path -------------------------------------------------------------

    def _apply_one(self, rel: str) -> str | None:
        if is_transient(rel) or not rel or rel == "hud.toml":
            return None  # hud.toml and the root itself: the workspace's
        located = classify(rel)
        if located is not None and self._artifact_folder(located):
            known = self.missions.get(located.mission or "")
            if known is not None:
                known.forget_artifact(rel)
            return self._unknown(rel)  # a layout folder, as a fresh walk enters it
        if located is None:
            return self._unknown(rel)
        self.unknown.pop(rel, None)
        assert located.mission is not None  # the layout's patterns admit safe ids only
        mission = self.mission(located.mission)
        if self.index is not None:
            from store.sources.native.cached import resume_log

            resume_log(self.index, mission, located)
        mission.apply(located)
        return located.mission

    def _artifact_folder(self, located: Located) -> bool:
        """True for a folder under a mission's `artifacts/` (`run-1` of `run-1/out.txt`):
        part of the layout, never an artifact itself (a watcher reports it on its own)."""
        if located.kind is not Kind.ARTIFACT:
            return False
        info = lstat(self.root, located.relpath)
        return info is not None and stat.S_ISDIR(info.st_mode)

    def mission(self, mission_id: str) -> MissionState:
        """The mission's state, created empty when it is new."""
        state = self.missions.get(mission_id)
        if state is None:
            state = self.missions[mission_id] = MissionState(self.root, mission_id)
            state.signers = self.signers
        return state

    def _apply_signers(self, rel: str) -> set[str]:
        """(Re)read a root trust file (`signers/`, workspace.toml, policy.toml); returns the
        missions whose policy reads it."""
        self.unknown.pop(rel, None)
        if lstat(self.root, rel) is None:
            self.signers.pop(rel, None)
        else:
            self.signers[rel] = read_file(self.root, rel, MAX_SIGNERS_BYTES)
        return self._naming(rel)

    def _naming(self, rel: str) -> set[str]:
        """The missions whose policy reads the root file `rel` (a signers file their
        constraints name, workspace.toml, policy.toml), told it changed."""
        every = not SIGNERS_FILE_RE.match(rel)
        touched = {m.id for m in self.missions.values() if every or rel in m.signer_paths()}
        for mission_id in touched:
            self.missions[mission_id].signers_changed()
        return touched

    def _unknown(self, rel: str) -> str | None:
        """Index a path that is no record: an unknown file or folder, a symlink, a layout
        folder (a problem only if it cannot be listed), or a path that is gone."""
        parts = rel.split("/")
        mission = self.missions.get(parts[1]) if len(parts) > 1 and parts[0] == "missions" else None
        if len(parts) == 1:  # the top changed: is it (still) a state directory?
            self.bare = lstat(self.root, "missions") is None
        if parts[0] != "missions" and self.in_project():
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
            mission = mission or self.mission(parts[1])
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


_REQUEST_FILE = re.compile(r"^missions/[^/]+/approvals/([^/]+)\.(?:json|toml)$")
_LAYOUT_HINT = "move or remove it; see docs/format.md for the state directory layout"


def not_a_state_dir(entries: int) -> Problem:
    """The one problem of a folder that holds other things than a state directory."""
    return Problem(
        ".",
        None,
        "not-a-state-dir",
        f"not a state directory: no missions/ folder (nor another source's), "
        f"and {entries} {'entry' if entries == 1 else 'entries'} of something else",
        "open the HUD on a state directory, or create missions/ here to make it one",
        "warn",
    )
