"""Read a loopx project: `.loopx/registry.json`, then each goal's state file (in its
repo) and runtime files (under the registry's `common_runtime_root`, wherever it is).

Every read goes through a `Read` (store.format.confined's, or one that captures the bytes off
the event loop): no symlink is followed below the root it reads from, files are
capped, and a bad file is a Problem with its path and line, never an exception.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from store.format.load import parse_json
from store.format.problems import Problem
from store.sources.loopx import FOLDER
from store.sources.loopx.goal import Goal, Run
from store.sources.loopx.records import (
    EVENT_VERSIONS,
    LEASE_VERSIONS,
    REGISTRY_VERSIONS,
    Lease,
    Registry,
    RegistryGoal,
    RolloutEvent,
    RunEntry,
    RunRecord,
)
from store.sources.loopx.state import parse_state

Read = Callable[[Path, str, int], bytes | Problem]
"""(root, path relative to it, cap) -> the file's bytes, or why not."""

REGISTRY = f"{FOLDER}/registry.json"
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_STATE_BYTES = 4 * 1024 * 1024
MAX_LOG_BYTES = 32 * 1024 * 1024
MAX_RUNS = 50
"""Runs read per goal: the latest ones (the index says which)."""
MAX_LINE_PROBLEMS = 50
WATCH_PREFIX = "@loopx"
"""Changed paths under a followed folder outside the state directory: `@loopx<n>/...`."""

_M = TypeVar("_M", bound=BaseModel)
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(slots=True)
class LoopxProject:
    """What `.loopx/` and the files it names hold."""

    runtime_root: Path | None = None
    goals: dict[str, Goal] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    """Problems of no goal: the registry's."""
    followed: list[Path] = field(default_factory=list)
    """Folders outside the state directory that were read (the watcher watches them)."""
    state_files: set[str] = field(default_factory=set)
    """Goal state files inside the state directory (relative): changes to them are ours."""


class _Loader:
    def __init__(self, root: Path, read: Read, follow: Callable[[Path], bool]) -> None:
        self.root = root
        self.read = read
        self.follow = follow
        self.project = LoopxProject()

    def shown(self, base: Path, rel: str) -> str:
        """A path as problems show it: relative when inside the state directory."""
        full = base / rel
        try:
            return full.relative_to(self.root).as_posix()
        except ValueError:
            return str(full)

    def reached(self, folder: Path, why: str, line: int | None) -> bool:
        """True when `folder` may be read: inside the state directory, or followed."""
        if folder == self.root or self.root in folder.parents:
            return True
        if not self.follow(folder):
            self.project.problems.append(
                Problem(
                    REGISTRY,
                    line,
                    "loopx-not-followed",
                    f"{why} {folder} is outside the state directory and hud.toml's "
                    "loopx_roots do not list it: not read",
                    "add the folder (or one above it) to loopx_roots in hud.toml",
                    "warn",
                )
            )
            return False
        if folder not in self.project.followed:
            self.project.followed.append(folder)
        return True

    def bytes(self, base: Path, rel: str, cap: int) -> bytes | Problem:
        found = self.read(base, rel, cap)
        return replace(found, path=self.shown(base, rel)) if isinstance(found, Problem) else found


def load(root: Path, read: Read, follow: Callable[[Path], bool]) -> LoopxProject | None:
    """The loopx project at `root`, None when there is no `.loopx/registry.json`."""
    loader = _Loader(root, read, follow)
    data = loader.bytes(root, REGISTRY, MAX_JSON_BYTES)
    if isinstance(data, Problem):
        if data.code == "missing":
            return None
        loader.project.problems.append(data)
        return loader.project
    registry = _record(REGISTRY, None, parse_json(REGISTRY, data), Registry)
    if isinstance(registry, Problem):
        loader.project.problems.append(registry)
        return loader.project
    text = data.decode("utf-8", errors="replace")
    if registry.schema_version not in REGISTRY_VERSIONS:
        loader.project.problems.append(
            _unknown_version(REGISTRY, _line_of(text, "schema_version"), registry.schema_version)
        )
    runtime = _runtime_root(loader, registry, text)
    for entry in registry.goals:
        goal = _goal(loader, entry, runtime, text)
        if goal is not None:
            loader.project.goals[goal.id] = goal
    return loader.project


def _runtime_root(loader: _Loader, registry: Registry, text: str) -> Path | None:
    line = _line_of(text, "common_runtime_root")
    if not registry.common_runtime_root:
        loader.project.problems.append(
            Problem(
                REGISTRY,
                line,
                "loopx-runtime-root",
                "no common_runtime_root: rollout logs, runs and leases are not read",
                "`loopx bootstrap` writes it",
                "warn",
            )
        )
        return None
    runtime = Path(os.path.normpath(loader.root / os.path.expanduser(registry.common_runtime_root)))
    loader.project.runtime_root = runtime
    return runtime if loader.reached(runtime, "common_runtime_root", line) else None


def _goal(loader: _Loader, entry: RegistryGoal, runtime: Path | None, text: str) -> Goal | None:
    line = _line_of(text, json.dumps(entry.id))
    if not _SAFE.match(entry.id):
        loader.project.problems.append(
            Problem(
                REGISTRY,
                line,
                "loopx-goal-id",
                f"goal id {entry.id!r} is not a safe name",
                "loopx goal ids are one path segment of letters, digits, '.', '_', '-'",
            )
        )
        return None
    repo = Path(os.path.normpath(loader.root / os.path.expanduser(entry.repo or ".")))
    goal = Goal(
        entry,
        loader.shown(repo, entry.state_file),
        loader.shown(runtime, f"goals/{entry.id}") if runtime else "",
    )
    _state(loader, goal, repo, _line_of(text, json.dumps(entry.state_file)) or line)
    if runtime is not None:
        _events(loader, goal, runtime)
        _leases(loader, goal, runtime)
        _runs(loader, goal, runtime)
    return goal


def _state(loader: _Loader, goal: Goal, repo: Path, line: int | None) -> None:
    rel = os.path.normpath(goal.entry.state_file) if goal.entry.state_file else ""
    if not rel or os.path.isabs(rel) or rel == ".." or rel.startswith("../"):
        goal.problems.append(
            Problem(
                REGISTRY,
                line,
                "loopx-state-file-escapes",
                f"goal {goal.entry.id}: state_file {goal.entry.state_file!r} is not a path "
                f"inside its repo {goal.entry.repo!r}: not read",
                "state_file is relative to the goal's repo, e.g. "
                f".codex/goals/{goal.entry.id}/ACTIVE_GOAL_STATE.md",
            )
        )
        return
    if not loader.reached(repo, f"goal {goal.entry.id}'s repo", line):
        return
    if repo == loader.root or loader.root in repo.parents:
        loader.project.state_files.add(loader.shown(repo, rel))
    data = loader.bytes(repo, rel, MAX_STATE_BYTES)
    if isinstance(data, Problem):
        if data.code == "missing":
            data = Problem(
                data.path,
                None,
                "loopx-state-missing",
                f"goal {goal.entry.id}'s state file is missing (registry line {line})",
                "`loopx bootstrap --goal-id ...` writes it; or fix state_file in the registry",
            )
        goal.problems.append(data)
        return
    goal.state = parse_state(goal.state_path, data)
    goal.problems += goal.state.problems


def _lines(loader: _Loader, goal: Goal, base: Path, rel: str) -> Iterator[tuple[int, Any]]:
    """Each JSON line of a log (line number, value); bad lines become the goal's
    problems (at most MAX_LINE_PROBLEMS per file). A missing log has no lines."""
    data = loader.bytes(base, rel, MAX_LOG_BYTES)
    if isinstance(data, Problem):
        if data.code != "missing":
            goal.problems.append(data)
        return
    shown = loader.shown(base, rel)
    bad = 0
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        value = parse_json(shown, raw, number)
        if isinstance(value, Problem) or not isinstance(value, dict):
            bad += 1
            if bad <= MAX_LINE_PROBLEMS:
                goal.problems.append(
                    value
                    if isinstance(value, Problem)
                    else Problem(
                        shown,
                        number,
                        "loopx-log",
                        "line is not a JSON object",
                        "loopx writes one JSON object a line",
                    )
                )
            continue
        yield number, value


def _events(loader: _Loader, goal: Goal, runtime: Path) -> None:
    rel = f"goals/{goal.entry.id}/rollout-event-log.jsonl"
    shown = loader.shown(runtime, rel)
    versions: set[str] = set()
    for number, value in _lines(loader, goal, runtime, rel):
        event = _record(shown, number, value, RolloutEvent)
        if isinstance(event, Problem):
            goal.problems.append(event)
            continue
        if event.schema_version not in EVENT_VERSIONS and event.schema_version not in versions:
            versions.add(event.schema_version)
            goal.problems.append(_unknown_version(shown, number, event.schema_version))
        goal.events.append(event)


def _leases(loader: _Loader, goal: Goal, runtime: Path) -> None:
    for todo in goal.state.todos:
        if not _SAFE.match(todo.todo_id):
            continue
        rel = f"goals/{goal.entry.id}/task-leases/{todo.todo_id}.json"
        shown = loader.shown(runtime, rel)
        data = loader.bytes(runtime, rel, MAX_JSON_BYTES)
        if isinstance(data, Problem):
            if data.code != "missing":
                goal.problems.append(data)
            continue
        lease = _record(shown, None, parse_json(shown, data), Lease)
        if isinstance(lease, Problem):
            goal.problems.append(lease)
            continue
        if lease.schema_version not in LEASE_VERSIONS:
            goal.problems.append(_unknown_version(shown, None, lease.schema_version))
        goal.leases[todo.todo_id] = lease


def _runs(loader: _Loader, goal: Goal, runtime: Path) -> None:
    folder = f"goals/{goal.entry.id}/runs"
    index = f"{folder}/index.jsonl"
    shown = loader.shown(runtime, index)
    entries = []
    for number, value in _lines(loader, goal, runtime, index):
        entry = _record(shown, number, value, RunEntry)
        if isinstance(entry, Problem):
            goal.problems.append(entry)
        else:
            entries.append((number, entry))
    for number, entry in entries[-MAX_RUNS:]:
        name = os.path.basename(entry.json_path)  # absolute where loopx wrote it: relocated
        record = None
        if _SAFE.match(name) and name.endswith(".json"):
            data = loader.bytes(runtime, f"{folder}/{name}", MAX_JSON_BYTES)
            parsed = parse_json(shown, data) if isinstance(data, bytes) else data
            found = _record(loader.shown(runtime, f"{folder}/{name}"), None, parsed, RunRecord)
            if isinstance(found, Problem):
                if found.code != "missing":
                    goal.problems.append(found)
            else:
                record = found
        goal.runs.append(Run(entry, number, record))


def _record(path: str, line: int | None, value: Any, model: type[_M]) -> _M | Problem:
    """`value` as a `model`, or the Problem that says why not."""
    if isinstance(value, Problem):
        return value
    if not isinstance(value, dict):
        return Problem(path, line, "loopx-record", "not a JSON object", "loopx writes objects")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return Problem(
            path,
            line,
            "loopx-record",
            f"{where}: {first['msg']}",
            f"not what loopx writes for a {model.__name__}",
        )


def _unknown_version(path: str, line: int | None, version: str) -> Problem:
    return Problem(
        path,
        line,
        "loopx-schema-version",
        f"unknown schema_version {version!r}: read as far as it goes",
        "the HUD knows loopx 0.5.x and 2.1.x layouts (docs/loopx.md)",
        "warn",
    )


def _line_of(text: str, needle: str) -> int | None:
    """The first line of `text` that holds `needle` (JSON keeps no positions)."""
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None
