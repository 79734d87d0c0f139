"""`hud metrics DIR [--since DURATION] [--json]`: coordination metrics over a window.

Handoff success, state conflicts, stale-context failures, rework, tool error rates,
authorization rejection, recovery time, human escalation, approval latency, time spent
waiting for a human and human edits, across the directory and per mission, over the last
DURATION (`90s`, `30m`, `24h`, `7d`; default 24h). How each is counted: docs/metrics.md.
`--json` adds a series per metric (equal time buckets over the window).

Exit 0; 2 cannot run (no such directory, a bad duration).
"""

from __future__ import annotations

import argparse
import re
from datetime import timedelta
from pathlib import Path

from cli.commands import SUMMARIES
from cli.reading import plain
from hud.metric_rows import metric_rows
from hud.output import printable, say
from store.analysis.metrics import MetricsReport, directory_metrics
from store.index.workspace import Workspace
from widgets.json_text import json_text

EXIT_OK, EXIT_CANNOT_RUN = 0, 2
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str) -> timedelta:
    """`90s`, `30m`, `24h`, `7d`, `2w` as a timedelta."""
    found = re.fullmatch(r"([0-9]+)([smhdw])", text.strip())
    if found is None or int(found.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 30m, 24h or 7d")
    return timedelta(seconds=int(found.group(1)) * _UNITS[found.group(2)])


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n", 1)[1] if __doc__ else SUMMARIES["metrics"]
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument(
        "--since", type=duration, default=timedelta(hours=24), help="the window (default 24h)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        say(f"hud metrics: {args.dir}: no such directory", err=True)
        return EXIT_CANNOT_RUN
    workspace = Workspace(args.dir)
    workspace.scan()
    now = workspace.clock()
    report = directory_metrics(workspace, now - args.since, now)
    say(json_text(plain(report)) if args.json else render(report))
    return EXIT_OK


def render(report: MetricsReport) -> str:
    lines = [
        f"metrics from {report.since.isoformat(timespec='seconds')} "
        f"to {report.until.isoformat(timespec='seconds')}, {len(report.missions)} missions"
    ]
    lines += [f"  {name:<24}{value}" for name, _, value in metric_rows(report.total)]
    for mission, since in sorted(report.partial.items()):
        lines.append(
            f"  ({printable(mission)}: counted from {since.isoformat()}, older marks dropped)"
        )
    for mission, metrics in report.missions.items():
        lines.append(printable(mission))
        lines += [
            f"  {name:<24}{value}" for name, _, value in metric_rows(metrics) if value != "none"
        ]
    return "\n".join(lines)
