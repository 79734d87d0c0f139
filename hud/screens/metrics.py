"""Metrics (`M` on the overview, or the palette): coordination metrics over a window, across
the directory or for one mission, each with a sparkline of its time buckets; across the
directory, bar plots compare the missions.

The human edit times are read in a thread worker (`store.analysis.metrics.edit_times`: history
files); the rest is counted on the event loop from the index, as `hud metrics` counts it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from hud.host import Starting
from hud.metric_rows import metric_rows
from hud.screens.base import HudScreen
from store.analysis.metrics import MetricsReport, directory_metrics, edit_times
from widgets.footer import HudFooter
from widgets.header import HudHeader
from widgets.metrics import Bar, MetricLine, MetricsPanel, bar_plot
from widgets.safe_text import safe

WINDOWS = (
    ("1h", timedelta(hours=1)),
    ("24h", timedelta(hours=24)),
    ("7d", timedelta(days=7)),
    ("30d", timedelta(days=30)),
)
"""The windows `w` steps through; 24h first, as `hud metrics`."""
RECOUNT_SECONDS = 5.0
"""Changes are counted in at most this often (a count walks every mission's ledger)."""
EDITS_READ = "metrics-edits"
"""The worker group of the edit-time reads (tests wait for it to be idle)."""


class MetricsScreen(HudScreen):
    """Every metric over the window: the directory's total, or one mission's (`m`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="metrics.back"),
        Binding("w", "window", "Window", id="metrics.window"),
        Binding("m", "mission(1)", "Next mission", id="metrics.mission"),
        Binding("M", "mission(-1)", "Prev mission", id="metrics.mission_prev"),
    ]
    AUTO_FOCUS = "#metrics"
    DEFAULT_CSS = "MetricsScreen #metrics-title { height: auto; padding: 0 1; }"

    def __init__(self) -> None:
        super().__init__()
        self.window = 1
        """Index into WINDOWS."""
        self.mission_id: str | None = None
        """The mission shown; None: the whole directory."""
        self.report: MetricsReport | None = None
        self._edits: dict[str, list[datetime]] | None = None
        self._touched: set[str] | None = None
        """Missions whose edit times to read again (None: all)."""
        self._scheduled = False
        """A read is to come or under way: changes meanwhile join it."""

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Static(id="metrics-title")
        yield MetricsPanel(id="metrics")
        yield HudFooter()

    def workspace_changed(self, touched: set[str] | None) -> None:
        """Count again, at most every RECOUNT_SECONDS; the edit times of the missions
        touched (of all, at first) are read again first. A tick (only time passed)
        touches no file: it brings a recount, no read."""
        super().workspace_changed(touched)
        if isinstance(self.hud.index, Starting):
            return
        if not self.hud.ticking:
            self._touched = (
                None if touched is None or self._touched is None else self._touched | touched
            )
        if not self._scheduled:
            self._scheduled = True
            if self._edits is None:
                self._read_edits()
            else:
                self.set_timer(RECOUNT_SECONDS, self._read_edits)

    def _read_edits(self) -> None:
        root, touched = self.hud.root, self._touched
        missions = sorted(self.hud.workspace.missions if touched is None else touched)
        self._touched = set()
        if not missions and self._edits is not None:  # nothing to read: only a recount
            self._edits_read({})
            return

        def read() -> None:
            edits = edit_times(root, missions)
            self.app.call_from_thread(self._edits_read, edits)

        self.run_worker(read, thread=True, group=EDITS_READ)

    def _edits_read(self, edits: dict[str, list[datetime]]) -> None:
        self._edits = {**(self._edits or {}), **edits}
        self.recount()
        self._scheduled = self._touched is None or bool(self._touched)  # changed meanwhile
        if self._scheduled:
            self.set_timer(RECOUNT_SECONDS, self._read_edits)

    def recount(self) -> None:
        """Count the metrics over the window and show them."""
        if self._edits is None:
            return
        now = self.hud.now()
        since = now - WINDOWS[self.window][1]
        self.report = directory_metrics(self.hud.workspace, since, now, edits=self._edits)
        self.show()

    def show(self) -> None:
        """Show the counted metrics: the directory's, or the chosen mission's."""
        report = self.report
        if report is None:
            return
        if self.mission_id not in report.missions:
            self.mission_id = None
        metrics = report.missions[self.mission_id] if self.mission_id else report.total
        lines = [
            MetricLine(name, metrics.series.get(series, ()) if series else (), value)
            for name, series, value in metric_rows(metrics)
        ]
        self.query_one(MetricsPanel).show(lines, () if self.mission_id else mission_plots(report))
        self.query_one("#metrics-title", Static).update(self._title(report))

    def _title(self, report: MetricsReport) -> Text:
        title = Text("Metrics", style="bold")
        if self.mission_id is None:
            title.append(f" · all {len(report.missions)} missions")
        else:
            title.append(" · mission ").append_text(safe(self.mission_id))
        bucket = round(report.bucket_seconds / 60)
        title.append(f" · last {WINDOWS[self.window][0]}, one bar per {bucket} min", style="dim")
        return title

    def action_window(self) -> None:
        self.window = (self.window + 1) % len(WINDOWS)
        self.recount()

    def action_mission(self, step: int) -> None:
        """Show the next (or previous) mission's metrics; past the last, the total."""
        if self.report is None:
            return
        choices: list[str | None] = [None, *self.report.missions]
        index = choices.index(self.mission_id) if self.mission_id in choices else 0
        self.mission_id = choices[(index + step) % len(choices)]
        self.show()


def mission_plots(report: MetricsReport) -> list[Text]:
    """The missions side by side: where humans were needed, where tools failed."""
    missions = report.missions.items()
    return [
        bar_plot(
            "human escalation by mission (steps that needed a human)",
            [Bar(m, metrics.escalation.count, metrics.escalation.of) for m, metrics in missions],
        ),
        bar_plot(
            "tool errors by mission (calls that ended in error or unknown)",
            [Bar(m, metrics.tool_errors.count, metrics.tool_errors.of) for m, metrics in missions],
        ),
    ]
