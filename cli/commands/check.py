"""`hud check DIR [--json]`: every invariant, grouped by mission; exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hud.output import printable, say
from store.format.problems import Problem
from store.index.check import Report, check
from widgets.json_text import json_text
from widgets.words import plural

if TYPE_CHECKING:  # rich loads only for a progress bar or the text report: --json starts sooner
    from rich.progress import Progress

EXIT_VALID, EXIT_ERRORS, EXIT_CANNOT_RUN = 0, 1, 2


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = "Verify every invariant of a state directory."
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores)")
    parser.add_argument(
        "--cached",
        action="store_true",
        help="read each log from the end of its prefix verified before (the user's cache); "
        "without it, every byte is verified",
    )


class _LazyProgress:
    """A progress bar on stderr that appears only once a check runs longer than 1 s."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.bar: Progress | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < 1.0 or not sys.stderr.isatty():
                return
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

            self.bar = Progress(
                "checking",
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.bar.add_task("check", total=total)
        self.bar.update(self.bar.task_ids[0], completed=done, total=total)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run(args: argparse.Namespace) -> int:
    root: Path = args.dir
    if not root.is_dir():
        say(f"hud check: {root}: no such directory", err=True)
        return EXIT_CANNOT_RUN
    gc.freeze()  # one check, then exit: what start-up made is never garbage; no collection
    # walks it again, in this process, in its workers or the last one at exit
    progress = _LazyProgress()
    try:
        report = check(root, progress=progress, jobs=args.jobs, cached=args.cached)
    finally:
        progress.stop()
    say(json_text(report.to_json()) if args.json else render(report))
    return EXIT_ERRORS if report.errors else EXIT_VALID


def _problem_lines(problem: Problem) -> list[str]:
    label = "error" if problem.severity == "error" else "warn "
    lines = [f"  {label}  {printable(problem.where)}  {printable(problem.message)}"]
    if problem.hint:
        lines.append(f"         fix: {printable(problem.hint)}")
    return lines


def render(report: Report) -> str:
    """The human-readable report: workspace problems, then each mission's."""
    lines = [f"state directory {printable(report.root)}"]
    if report.workspace_problems:
        lines.append("workspace")
        for problem in report.workspace_problems:
            lines.extend(_problem_lines(problem))
    for mission_id, mission in sorted(report.missions.items()):
        lines.append(f"{printable(mission_id)}  {mission.status.value}  {printable(mission.title)}")
        if mission.verdicts:
            lines.append(
                "  SMALL v1.0.0: "
                + ", ".join(f"{check} {verdict}" for check, verdict in mission.verdicts.items())
            )
        for problem in mission.problems:
            lines.extend(_problem_lines(problem))
    if report.cached:
        lines.append(
            f"{plural(report.cached, 'log')} read from the end of a prefix verified before "
            "(--cached): run without it to verify every byte"
        )
    verdict = "invalid" if report.errors else "valid"
    lines.append(
        f"{plural(len(report.missions), 'mission')}, {plural(report.errors, 'error')}, "
        f"{plural(report.warnings, 'warning')}: {verdict}"
    )
    return "\n".join(lines)
