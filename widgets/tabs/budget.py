"""Budget: a gauge per limit, burn rate, projected exhaustion vs the deadline, spend plot."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.widgets import Static

from store.derivation.derive import MIN_RATE_SECONDS, Budget, Limit
from store.format.text import amount, duration, rate
from widgets.gauge import percent_bar
from widgets.status import theme_style
from widgets.tabs.common import (
    DocumentScroll,
    FocusOnShow,
    ThemeAware,
    heading,
    join_lines,
    moment,
)

if TYPE_CHECKING:
    from store.derivation.view import UsagePoint

_EIGHTHS = " ▁▂▃▄▅▆▇█"
_NAME_WIDTH = 7


def until(when: datetime, now: datetime) -> str:
    seconds = (when - now).total_seconds()
    return f"in {duration(seconds)}" if seconds >= 0 else f"{duration(-seconds)} ago"


def series(
    points: Sequence[UsagePoint], field: str, width: int
) -> tuple[list[float], datetime, datetime] | None:
    """The cumulative `field` sampled at `width` even moments (last value carried forward)."""
    if not points or width < 1:
        return None
    start, end = points[0].at, points[-1].at
    span = (end - start).total_seconds()
    if span <= 0:
        return [float(getattr(points[-1], field))] * width, start, end
    values: list[float] = []
    index = 0
    current = float(getattr(points[0], field))
    for column in range(width):
        edge = span * (column + 1) / width
        while index < len(points) and (points[index].at - start).total_seconds() <= edge + 1e-9:
            current = float(getattr(points[index], field))
            index += 1
        values.append(current)
    return values, start, end


def plot(values: Sequence[float], height: int) -> list[str]:
    """Columns of block characters, `height` rows, scaled from 0 to the largest value."""
    top = max((v for v in values if math.isfinite(v)), default=0.0)
    rows = []
    for row in range(height - 1, -1, -1):
        line = []
        for value in values:
            level = 0 if top <= 0 or not math.isfinite(value) else round(value / top * height * 8)
            eighths = min(8, max(0, level - row * 8))
            line.append(_EIGHTHS[eighths])
        rows.append("".join(line))
    return rows


def short_moment(when: datetime, now: datetime) -> str:
    """`13:25Z` on the day of `now`, else the date too."""
    full = moment(when, seconds=False)
    return full[11:] if when.date() == now.date() else full


def limit_lines(
    limit: Limit,
    deadline: datetime | None,
    now: datetime,
    bar_width: int,
    variables: Mapping[str, str] | None,
    width: int = 78,
) -> list[Text]:
    """The gauge line, then burn rate and projection (and the deadline warning)."""
    name = limit.name
    first = Text(name.ljust(_NAME_WIDTH), style="bold")
    first.append_text(percent_bar(limit.fraction, bar_width, variables))
    first.append(f"  {amount(name, limit.used)} of {amount(name, limit.limit)}")
    second = Text(" " * _NAME_WIDTH)
    alert = theme_style("$error bold", variables)
    if limit.used >= limit.limit:
        second.append("✗ exhausted", style=alert)
        return [first, second]
    if name == "time":
        if limit.exhausted_at is None:
            second.append("elapsed until the halt: the clock stopped", style="dim")
            return [first, second]
        second.append("elapsed since the first event · ends ", style="dim")
        second.append(f"{short_moment(limit.exhausted_at, now)} ({until(limit.exhausted_at, now)})")
        return [first, second]
    if limit.per_hour is None:  # said once, above the gauges (`budget_text`)
        return [first]
    if limit.per_hour <= 0:
        second.append("burn 0/h: nothing spent lately", style="dim")
    else:
        second.append(f"burn {rate(name, limit.per_hour)}")
    lines = [first, second]
    if limit.exhausted_at is not None:
        second.append(" · runs out ")
        second.append(f"{short_moment(limit.exhausted_at, now)} ({until(limit.exhausted_at, now)})")
        if deadline is not None and limit.exhausted_at < deadline:
            warning = Text("⚠ before the deadline", style=alert)
            if second.cell_len + 2 + warning.cell_len <= width:
                second.append("  ")
                second.append_text(warning)
            else:
                lines.append(Text(" " * _NAME_WIDTH).append_text(warning))
    return lines


def budget_text(
    budget: Budget,
    usage: Sequence[UsagePoint],
    now: datetime,
    width: int = 78,
    *,
    plot_height: int = 3,
    variables: Mapping[str, str] | None = None,
) -> Text:
    """Every limit as a gauge with burn rate and projection, the deadline, spend plots."""
    width = max(30, width)
    parts: list[Text] = []
    title = Text("Budget", style="bold")
    if budget.deadline is not None:
        title.append("   deadline ", style="dim")
        title.append(f"{moment(budget.deadline, seconds=False)} ({until(budget.deadline, now)})")
    parts.append(title)
    alert = theme_style("$error bold", variables)
    if budget.deadline is not None and budget.deadline <= now:
        parts.append(
            Text(
                f"⚠ the deadline passed {duration((now - budget.deadline).total_seconds())} ago",
                style=alert,
            )
        )
    elif (first := budget.first_out) is not None and first.exhausted_at is not None:
        warning = Text("⚠ projected to run out before the deadline: ", style=alert)
        warning.append(f"{first.name} at {moment(first.exhausted_at, seconds=False)}", style=alert)
        parts.append(warning)
    elif budget.deadline is not None and not budget.rate_unknown:
        rated = [lim for lim in budget.limits if lim.projected]
        if rated and all(lim.used < lim.limit for lim in rated):
            parts.append(Text("✓ no limit is projected to run out before the deadline", "dim"))
    if budget.rate_unknown:
        parts.append(
            Text(
                "burn rate unknown yet: too little usage history "
                f"(needs {duration(MIN_RATE_SECONDS)})",
                style="dim",
            )
        )
    parts.append(Text())
    if not budget.limits:
        parts.append(Text("No budget limits: constraints.toml has no [budget].", style="dim"))
    bar_width = min(40, max(12, width - 40))
    for limit in budget.limits:
        parts.extend(limit_lines(limit, budget.deadline, now, bar_width, variables, width))
    fields = [("usd", "Spend (USD, cumulative)"), ("tokens", "Tokens (cumulative)")]
    if plot_height > 3:
        fields.append(("steps", "Steps (cumulative)"))
    for field, caption in fields:
        sampled = series(usage, field, width - 2)
        parts.append(Text())
        head = heading(caption)
        if sampled is None:
            parts.append(head)
            parts.append(Text("  no usage events yet", style="dim"))
            continue
        if len(usage) < 2:
            parts.append(head)
            only = amount(field, float(getattr(usage[-1], field)))
            parts.append(Text(f"  one usage event so far: {only}", style="dim"))
            continue
        values, start, end = sampled
        head.append(
            f"  {amount(field, values[0])} → {amount(field, values[-1])}"
            f" over {duration((end - start).total_seconds())}",
            style="not underline",
        )
        parts.append(head)
        for row in plot(values, plot_height):
            parts.append(Text(row, style=theme_style("$accent", variables)))
        axis = Text(moment(start, seconds=False), style="dim")
        right = moment(end, seconds=False)
        gap = max(1, len(values) - len(axis) - len(right))
        axis.append(" " * gap + right, style="dim")
        parts.append(axis)
    return join_lines(parts)


class _Shown(NamedTuple):
    budget: Budget
    usage: tuple[UsagePoint, ...]
    now: datetime


class BudgetView(ThemeAware, FocusOnShow, DocumentScroll):
    """Gauges, burn rates, projections and plots; laid out for the width it has."""

    DEFAULT_CSS = """
    BudgetView { padding: 0 1; }
    BudgetView > Static { height: auto; }
    """

    def __init__(self, *, id: str | None = "budget-view") -> None:
        super().__init__(id=id)
        self._args: _Shown | None = None
        self._shown: Text | None = None
        self.doc = Static(id="budget-doc")

    def compose(self) -> ComposeResult:
        yield self.doc

    def on_resize(self, event: events.Resize) -> None:
        self.rerender()

    def show(self, budget: Budget, usage: Sequence[UsagePoint], now: datetime) -> None:
        """Render; nothing is redrawn when the text would not change."""
        self._args = _Shown(budget, tuple(usage), now)
        self.rerender()

    def rerender(self) -> None:
        if self._args is None:
            return
        width = (self.scrollable_content_region.width or 78) - 1
        height = self.size.height or 20
        text = budget_text(
            self._args.budget,
            self._args.usage,
            self._args.now,
            width,
            plot_height=6 if height >= 36 else 3,
            variables=self.variables,
        )
        if text == self._shown:
            return
        self._shown = text
        self.doc.update(text)

    @property
    def shown_text(self) -> str:
        return self._shown.plain if self._shown is not None else ""
