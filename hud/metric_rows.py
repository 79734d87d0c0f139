"""The coordination metrics as rows of text (name, series, value), shared by `hud metrics`
(`cli.commands.metrics`) and the metrics screen (`hud.screens.metrics`): no Textual."""

from __future__ import annotations

from hud.output import printable
from store.analysis.metrics import Metrics, Ratio, Spread


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
