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

from hud.commands import SUMMARIES
from hud.commands.output import printable, say
from hud.commands.reading import plain
from store.analysis.metrics import Metrics, MetricsReport, Ratio, Spread, directory_metrics
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


def metric_rows(metrics: Metrics) -> list[tuple[str, str, str]]:
    """(name, its series in `metrics.series` or "" when none, value) for each metric."""
    tools = ", ".join(
        f"{printable(tool)} {ratio.count} of {ratio.of}"
        for tool, ratio in metrics.tools.items()
        if ratio.count
    )
    handoffs = _ratio(metrics.handoffs)
    if metrics.handoffs_open:
        handoffs += f"; {metrics.handoffs_open} open"
    waiting = _seconds(metrics.waiting_seconds) if metrics.waiting_seconds else "none"
    errors = _ratio(metrics.tool_errors, "calls") + (f": {tools}" if tools else "")
    return [
        ("handoff success", "handoffs", handoffs),
        ("state conflicts", "conflicts", _count(metrics.conflicts)),
        ("stale-context failures", "stale_context", _count(metrics.stale_context)),
        ("rework", "rework", _ratio(metrics.rework, "successes")),
        ("duplicate effects", "duplicate_effects", _count(metrics.duplicate_effects)),
        ("tool errors", "tool_errors", errors),
        ("authorization rejected", "rejections", _ratio(metrics.rejections, "requests")),
        ("recovery time", "", _spread(metrics.recovery, "not recovered")),
        ("human escalation", "escalations", _ratio(metrics.escalation, "steps")),
        ("approval latency", "approval_latency", _spread(metrics.approval_latency)),
        ("waiting for a human", "waiting_seconds", waiting),
        ("human edits", "human_edits", _count(metrics.human_edits)),
    ]


def _count(value: int) -> str:
    return str(value) if value else "none"


def _ratio(ratio: Ratio, of: str = "") -> str:
    if ratio.rate is None:
        return "none"
    return f"{ratio.count} of {ratio.of}{' ' + of if of else ''} ({ratio.rate:.0%})"


def _spread(spread: Spread, still: str = "") -> str:
    if spread.median is None or spread.p90 is None or spread.max is None:
        return f"{spread.open} {still}" if spread.open else "none"
    text = (
        f"median {_seconds(spread.median)}, p90 {_seconds(spread.p90)}, "
        f"max {_seconds(spread.max)} ({spread.count})"
    )
    return text + (f"; {spread.open} {still}" if spread.open else "")


def _seconds(value: float) -> str:
    """`45s`, `2m05s`, `1h02m`, `3d04h`."""
    whole = round(value)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"
