"""The invariants behind `hud check`: every problem in a state directory, by mission.

Large workspaces are checked in parallel: missions are split into many tasks of similar
size (the size of their files), which worker processes take heaviest first as they
finish one; each task builds its part of the index and reports back.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from store.format.confined import held_folders
from store.format.layout import TRUST_FILE_RE
from store.format.problems import Problem
from store.format.row import MissionStatus
from store.index.workspace import WORKSPACE_ROW, Workspace, group_by_mission

if TYPE_CHECKING:  # multiprocessing loads only for a parallel check (~10 ms of a start),
    from concurrent.futures import ProcessPoolExecutor  # the cache only for --cached

    from store.cache.entry import LogEntry
    from store.cache.prefix import PrefixIndex

PARALLEL_BYTES = 16 * 1024 * 1024
TASKS_PER_JOB = 64
"""Missions are checked in this many tasks per process: small tasks keep every process
busy to the end, each costs a fresh index and one pickled result."""
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class MissionReport:
    status: MissionStatus
    title: str
    problems: list[Problem]
    verdicts: dict[str, str] = field(default_factory=dict)
    """A SMALL workspace's verdict per check: schema, lint, strict, verify."""
    effective_policy: dict[str, object] | None = None
    """A native mission's approval rules in force (`store.trust.policy.EffectivePolicy`)."""


@dataclass(slots=True)
class Report:
    """What `hud check` found: workspace-level problems and one report per mission."""

    root: str
    workspace_problems: list[Problem] = field(default_factory=list)
    missions: dict[str, MissionReport] = field(default_factory=dict)
    cached: int = 0
    """Logs whose prefix was taken from the cache, not read again (`--cached` only)."""

    def all_problems(self) -> list[Problem]:
        found = list(self.workspace_problems)
        for report in self.missions.values():
            found.extend(report.problems)
        return found

    @property
    def errors(self) -> int:
        return sum(1 for p in self.all_problems() if p.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for p in self.all_problems() if p.severity == "warn")

    def to_json(self) -> dict[str, object]:
        return {
            "root": self.root,
            "valid": self.errors == 0,
            "errors": self.errors,
            "warnings": self.warnings,
            **({"cached_logs": self.cached} if self.cached else {}),
            "problems": [p.to_json() for p in self.workspace_problems],
            "missions": {
                mission_id: {
                    "status": report.status.value,
                    "title": report.title,
                    "problems": [p.to_json() for p in report.problems],
                    **({"verdicts": report.verdicts} if report.verdicts else {}),
                    **(
                        {"effective_policy": report.effective_policy}
                        if report.effective_policy is not None
                        else {}
                    ),
                }
                for mission_id, report in sorted(self.missions.items())
            },
        }


Checked = tuple[dict[str, MissionReport], list[Problem]]
"""A report per row, and the problems of no row."""


_INDEXES: dict[str, PrefixIndex | None] = {}
"""The verified-prefix cache of each root this process checks `--cached` (read once)."""


def _index(root: str) -> PrefixIndex | None:
    if root not in _INDEXES:
        from store.cache import open_cache
        from store.cache.prefix import PrefixIndex

        cache = open_cache(Path(root))
        _INDEXES[root] = PrefixIndex(cache, Path(root)) if cache is not None else None
    return _INDEXES[root]


@dataclass(slots=True)
class TaskResult:
    """What a task reports: a report per row, the problems of no row, and (`--cached`)
    the logs verified whole for the cache and how many prefixes were taken from it."""

    reports: dict[str, MissionReport]
    loose: list[Problem]
    entries: list[LogEntry] = field(default_factory=list)
    trusted: int = 0


def _check_paths(root: str, paths: list[str], cached: bool = False) -> TaskResult:
    """Index these paths and report each row in them (runs in a worker process). The
    `signers/` files among them are read for the missions' signatures: their problems
    are the parent's to report (it reads them too), not each task's. `cached`: logs
    resume from the verified-prefix cache (`store.cache`) where its rules allow. Each
    folder is opened once for the task (`held_folders`), not once for each file in it."""
    index = _index(root) if cached else None
    workspace = Workspace(root, cache=index)
    with held_folders():
        workspace.load_settings()
        workspace.apply(paths)
        reports, loose = _reports(workspace)
    loose = [p for p in loose if not TRUST_FILE_RE.match(p.path)]
    if index is None:
        return TaskResult(reports, loose)
    return TaskResult(reports, loose, index.settle(), workspace.trusting())


def _reports(workspace: Workspace) -> Checked:
    """A report per row of every source, and the problems of no row (settings apart):
    the same rows and problems the HUD shows (`Workspace.row`, `problems_by_row`)."""
    loose = [problem for source in workspace.sources for problem in source.loose_problems()]
    found = workspace.problems_by_row(workspace.settings_problems + loose)
    found.pop(WORKSPACE_ROW, None)
    reports = {}
    for row_id, row in workspace.rows().items():
        problems = found.pop(row_id, [])
        native = workspace.missions.get(row_id)
        rules = native.effective_policy.to_json() if native is not None else None
        verdicts = workspace.verdicts(row_id)
        reports[row_id] = MissionReport(row.status, row.title, problems, verdicts, rules)
    for problems in found.values():  # files in the folder of no row
        loose.extend(problems)
    return reports, loose


def _size(root: str, rel: str) -> int:
    try:
        return os.lstat(os.path.join(root, rel)).st_size
    except OSError:
        return 0


def _chunks(weights: dict[str, int], count: int) -> list[list[str]]:
    """Split missions into `count` groups of similar total weight, heaviest group first."""
    groups: list[list[str]] = [[] for _ in range(count)]
    totals = [0] * count
    for mission_id in sorted(weights, key=weights.__getitem__, reverse=True):
        index = totals.index(min(totals))
        groups[index].append(mission_id)
        totals[index] += weights[mission_id]
    order = sorted(range(count), key=totals.__getitem__, reverse=True)
    return [groups[index] for index in order if groups[index]]


Task = tuple[list[str], int]
"""The paths of some missions, and their weight (bytes) for the progress bar."""


def _results(
    root: str, tasks: list[Task], jobs: int, cached: bool
) -> Iterator[tuple[TaskResult, int]]:
    """Each task's result and weight: in this process when jobs is 1, else as they finish.

    This process is one of the `jobs`: it forks `jobs - 1` workers, which take the tasks
    heaviest first, while it takes them lightest first (a task no worker has started yet)
    until they meet. It runs the lightest task before it forks: what every task builds
    on first use (the records' validators, modules imported when first needed) is then
    built once and inherited, not built again in each worker. The collector leaves the
    objects they share alone (`gc.freeze`), so a worker's collection does not write to
    (and copy) every page of them."""
    if jobs == 1:
        for paths, weight in tasks:
            yield _check_paths(root, paths, cached), weight
        return
    from concurrent.futures import as_completed

    *rest, (paths, weight) = tasks
    yield _check_paths(root, paths, cached), weight
    frozen = gc.get_freeze_count() > 0  # by the caller (`hud check`): they stay frozen
    gc.freeze()
    try:
        with _pool(jobs - 1) as pool:
            futures = {pool.submit(_check_paths, root, task[0], cached): task for task in rest}
            for future, (paths, weight) in reversed(list(futures.items())):
                if not future.cancel():  # a worker has it: the rest are theirs
                    break
                del futures[future]
                yield _check_paths(root, paths, cached), weight
            for future in as_completed(futures):
                yield future.result(), futures[future][1]
    finally:
        if not frozen:
            gc.unfreeze()


def _pool(workers: int) -> ProcessPoolExecutor:
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers)


def check(
    root: Path, progress: Progress | None = None, jobs: int | None = None, cached: bool = False
) -> Report:
    """Check every invariant of the state directory at `root`: every byte of every log,
    unless `cached` (`hud check --cached`): then a log whose verified prefix the cache
    holds is read from its end (`store.cache`; `Report.cached` counts them), and the
    logs verified whole go into the cache."""
    workspace = Workspace(root)
    missions, other = group_by_mission(workspace.walk())
    workspace.apply(other)
    reports, loose = _reports(workspace)
    report = Report(str(workspace.root), workspace.settings_problems + loose, reports)
    weights = {m: sum(_size(report.root, p) for p in paths) for m, paths in missions.items()}
    total = sum(weights.values())
    jobs = jobs or os.cpu_count() or 1
    if total < PARALLEL_BYTES or len(missions) < 2:
        jobs = 1  # not worth starting processes
    signers = [p for p in other if TRUST_FILE_RE.match(p)]  # every task checks signatures
    tasks = [
        ([*signers, *(p for m in group for p in missions[m])], sum(weights[m] for m in group))
        for group in _chunks(weights, min(len(weights), jobs * TASKS_PER_JOB))
    ]
    done = 0
    seen = set(report.workspace_problems)
    _INDEXES.pop(report.root, None)  # read afresh: a flush lets its entries go
    index = _index(report.root) if cached else None
    for task, weight in _results(report.root, tasks, jobs, cached):
        report.missions.update(task.reports)
        report.cached += task.trusted
        if index is not None:
            for entry in task.entries:
                index.put(entry)
        for problem in task.loose:
            if problem not in seen:
                seen.add(problem)
                report.workspace_problems.append(problem)
        done += weight
        if progress:
            progress(done, total)
    if index is not None:
        index.flush()  # (no pruning: the logs reused in workers are not seen here)
    return report
