"""Coordination metrics as rows: the metric's name, a sparkline of it over the window, and
its value (`hud metrics` words it the same way); below them, bar plots that compare the
missions. Renders what it is given; reads nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from widgets.gauge import blocks
from widgets.safe_text import safe
from widgets.tabs.common import DocumentScroll


class MetricLine(NamedTuple):
    name: str
    series: tuple[float, ...]
    """One value per time bucket, oldest first; empty: the metric has no series."""
    value: str


class MetricRow(Horizontal):
    DEFAULT_CSS = """
    MetricRow { height: 1; }
    MetricRow > .metric-name { width: 24; }
    MetricRow > Sparkline { width: 26; margin-right: 2; }
    MetricRow > .metric-value { width: 1fr; }
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

    def show(self, line: MetricLine) -> None:
        self.spark.data = list(line.series)
        self.spark.visible = bool(line.series)
        value = safe(line.value)
        if line.value == "none":
            value.stylize("dim")
        self.value.update(value)


class Bar(NamedTuple):
    """One bar of a plot: `hits` of `of` for `label`."""

    label: str
    hits: int
    of: int


def bar_plot(title: str, bars: Sequence[Bar], width: int = 30, most: int = 8) -> Text:
    """A horizontal bar plot under `title`: the `most` bars with the most hits, most first,
    each bar's length its hits against the most; `none` when no bar has a hit."""
    shown = sorted((bar for bar in bars if bar.hits), key=lambda bar: (-bar.hits, bar.label))
    plot = Text(title, style="bold")
    if not shown:
        return plot.append("\n  none", style="dim")
    top = shown[0].hits
    label_width = min(24, max(len(bar.label) for bar in shown[:most]))
    for bar in shown[:most]:
        plot.append("\n  ")
        plot.append_text(safe(bar.label[:label_width].ljust(label_width)))
        plot.append(" " + blocks(bar.hits / top, width, least=1), style="bold")
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
        self.plots = Static(id="metric-plots")

    def compose(self) -> ComposeResult:
        yield self.plots

    def show(self, lines: Sequence[MetricLine], plots: Sequence[Text] = ()) -> None:
        self.shown = tuple(lines)
        for line in lines:
            row = self.rows.get(line.name)
            if row is None:
                row = self.rows[line.name] = MetricRow(line.name)
                self.mount(row, before=self.plots)
            row.show(line)
        self.plots.update(Text("\n\n").join(plots))
        self.plots.display = bool(plots)

    @property
    def shown_text(self) -> str:
        """Each row as `name  value` (for tests)."""
        return "\n".join(f"{line.name}  {line.value}" for line in self.shown)
