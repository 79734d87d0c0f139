"""Coordination metrics as rows: the metric's name, a sparkline of it over the window, and
its value (`hud metrics` words it the same way); below them, bar plots that compare the
missions. Renders what it is given; reads nothing.

A value wider than the room beside its sparkline (80 columns) is shown one part per line
(`median 58s` / `p90 1m03s` / `max 2m10s (5)` / `1 not recovered`), never cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from widgets.gauge import blocks
from widgets.safe_text import safe
from widgets.tabs.common import DocumentScroll
from widgets.words import middle


class MetricLine(NamedTuple):
    name: str
    series: tuple[float, ...]
    """One value per time bucket, oldest first; empty: the metric has no series."""
    value: str


NAME_WIDTH, SPARK_WIDTH = 24, 28
"""The cells of a row's name, and of its sparkline with the margin after it."""
PART = re.compile(r"(?<=[,;:]) ")
"""Where a value splits into parts: after `, `, `; ` and `: `."""


def value_lines(value: str, room: int) -> list[str]:
    """`value` as shown in `room` cells: whole when it fits, else one part per line."""
    if len(value) <= room:
        return [value]
    return [part.rstrip(",;:") for part in PART.split(value)]


class MetricRow(Horizontal):
    DEFAULT_CSS = """
    MetricRow { height: auto; }
    MetricRow > .metric-name { width: 24; }
    MetricRow > Sparkline { width: 26; margin-right: 2; }
    MetricRow > .metric-value { width: 1fr; height: auto; }
    """

    def __init__(self, name: str) -> None:
        super().__init__()
        self.label = Static(Text(name), classes="metric-name")
        self.spark = Sparkline([], summary_function=max)
        self.value = Static(classes="metric-value")

    def compose(self) -> ComposeResult:
        yield self.label
        yield self.spark
        yield self.value

    def show(self, line: MetricLine, room: int) -> None:
        """Show `line`, its value in `room` cells (`value_lines`)."""
        self.spark.data = list(line.series)
        self.spark.visible = bool(line.series)
        value = Text("\n").join(safe(part) for part in value_lines(line.value, room))
        if line.value == "none":
            value.stylize("dim")
        self.value.update(value)


class Bar(NamedTuple):
    """One bar of a plot: `hits` of `of` for `label`."""

    label: str
    hits: int
    of: int


def bar_plot(title: str, bars: Sequence[Bar], width: int = 30, most: int = 8) -> Text:
    """A horizontal bar plot under `title`: the `most` bars of the highest rate (`hits` of
    `of`), highest first, each bar's length its rate (1 of 1 is the full `width`, 2 of 3
    two thirds of it); `none` when no bar has a hit."""
    shown = sorted(
        (bar for bar in bars if bar.hits),
        key=lambda bar: (-bar.hits / bar.of, -bar.hits, bar.label),
    )
    plot = Text(title, style="bold")
    if not shown:
        return plot.append("\n  none", style="dim")
    label_width = min(24, max(len(bar.label) for bar in shown[:most]))
    for bar in shown[:most]:
        plot.append("\n  ")
        plot.append_text(safe(middle(bar.label, label_width).ljust(label_width)))
        plot.append(" " + blocks(min(1.0, bar.hits / bar.of), width, least=1).ljust(width))
        plot.stylize("bold", len(plot) - width, len(plot))
        plot.append(f" {bar.hits} of {bar.of}")
    if len(shown) > most:
        plot.append(f"\n  and {len(shown) - most} more", style="dim")
    return plot


class MetricsPanel(DocumentScroll):
    """One row per metric, in the order first shown; then the plots, if any."""

    DEFAULT_CSS = """
    MetricsPanel { padding: 0 1; height: 1fr; }
    MetricsPanel > #metric-plots { margin-top: 1; height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: dict[str, MetricRow] = {}
        self.shown: tuple[MetricLine, ...] = ()
        self._plots: tuple[Text, ...] = ()
        self.plots = Static(id="metric-plots")

    def compose(self) -> ComposeResult:
        yield self.plots

    def on_resize(self) -> None:
        self.show(self.shown, self._plots)

    def show(self, lines: Sequence[MetricLine], plots: Sequence[Text] = ()) -> None:
        self.shown = tuple(lines)
        self._plots = tuple(plots)
        room = (self.size.width or 80) - NAME_WIDTH - SPARK_WIDTH - 2 - 2  # padding, scrollbar
        for line in lines:
            row = self.rows.get(line.name)
            if row is None:
                row = self.rows[line.name] = MetricRow(line.name)
                self.mount(row, before=self.plots)
            row.show(line, room)
        self.plots.update(Text("\n\n").join(plots))
        self.plots.display = bool(plots)

    @property
    def shown_text(self) -> str:
        """Each row as `name  value` (for tests)."""
        return "\n".join(f"{line.name}  {line.value}" for line in self.shown)
