"""The overview's mission table: rows keyed by mission id, sorted by urgency then recency.

The Mission column shows the id, then the title: titles repeat (seven missions "Cut over
to gateway v2"), ids never do, so every row shows its id, cut if it must be to a form
no other id shares (`widgets.words.apart`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.text import Text

from widgets.gauge import percent_bar, relative_time
from widgets.row_table import Column, RowTable
from widgets.safe_text import safe
from widgets.status import status_text
from widgets.words import apart

if TYPE_CHECKING:
    from store.row import MissionSummary

# (key, label, narrow width, wide width); the title column takes what is left.
COLUMNS: tuple[tuple[str, str, int, int], ...] = (
    ("status", "Status", 11, 11),
    ("title", "Mission", 0, 0),
    ("step", "Plan·step", 14, 30),
    ("pending", "Appr", 4, 4),
    ("budget", "Budget", 8, 16),
    ("last", "Last", 4, 5),
    ("problems", "Prob", 4, 4),
)
KEYS = tuple(key for key, *_ in COLUMNS)
WIDE = 120
TITLE_ROOM = 4
"""Cells of the Mission column an id leaves for the title at least."""


def age(when: datetime | None, now: datetime) -> str:
    """Time since `when`, to the minute: an idle screen changes at most once a minute."""
    if when is None:
        return "—"
    seconds = (now - when).total_seconds()
    return "<1m" if 0 <= seconds < 60 else relative_time(seconds)


def column_widths(width: int) -> list[Column]:
    """Columns for a table `width` cells wide: the title takes what the others leave."""
    wide = width >= WIDE
    fixed = sum(
        (broad if wide else narrow) + 2 for key, _, narrow, broad in COLUMNS if key != "title"
    )
    title = max(12, width - fixed - 2 - 1)
    return [
        Column(key, label, title if key == "title" else (broad if wide else narrow))
        for key, label, narrow, broad in COLUMNS
    ]


class MissionTable(RowTable):
    """One row per mission; `show` updates the rows it is given and re-sorts."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(column_widths(80), id=id)
        self.summaries: dict[str, MissionSummary] = {}
        self._order_keys: dict[str, tuple[int, int, str]] = {}
        """Each row's sort key, computed when its summary arrives (not at every sort)."""
        self.now = datetime.now(UTC)
        self.variables: Mapping[str, str] = {}
        self._ids: dict[str, str] = {}
        """Each mission id as the Mission column shows it, padded to the longest."""
        self._fitted: tuple[frozenset[str], int] | None = None
        """The ids and the room `_ids` were fitted for."""

    def on_resize(self) -> None:
        columns = column_widths(self.size.width)
        if columns != self.columns:
            self.set_columns(columns)
            self._render_rows(self.summaries.values())

    @property
    def selected_mission(self) -> str | None:
        return self.cursor_key

    def cell(self, mission: str, column: str) -> Text:
        return self.cells(mission)[KEYS.index(column)]

    def cells_for(self, summary: MissionSummary) -> tuple[Text, ...]:
        step = Text(f"v{summary.plan_version} " if summary.plan_version else "", style="dim")
        if summary.current_step is not None:
            step.append_text(status_text(summary.step_state or "", self.variables, word=False))
            step.append(" ")
            step.append_text(safe(summary.current_step))
        elif not summary.plan_version:
            step.append("—")
        budget_width = self.columns[KEYS.index("budget")].width
        mission = Text(self._ids[summary.id] + " ", style="bold")
        mission.append_text(safe(summary.title))
        return (
            status_text(summary.status.value, self.variables),
            mission,
            step,
            Text(f" {summary.pending} ", style="bold reverse") if summary.pending else Text(""),
            percent_bar(summary.budget_fraction, budget_width, self.variables),
            Text(age(summary.last_activity, self.now)),
            Text(str(summary.problems) if summary.problems else "", style="bold"),
        )

    def show(self, summaries: Iterable[MissionSummary], now: datetime, *, complete: bool) -> None:
        """Update rows for these missions; with `complete`, also drop rows not among them."""
        given = {summary.id: summary for summary in summaries}
        keys = {mission: summary.sort_key() for mission, summary in given.items()}
        self.now = now
        if complete:
            self.summaries = given
            self._order_keys = keys
        else:
            self.summaries.update(given)
            self._order_keys.update(keys)
        self._render_rows(given.values())

    def _render_rows(self, summaries: Iterable[MissionSummary]) -> None:
        if self._fit_ids():
            summaries = self.summaries.values()
        rows = {summary.id: self.cells_for(summary) for summary in summaries}
        self.update(rows, sorted(self._order_keys, key=self._order_keys.__getitem__))

    def _fit_ids(self) -> bool:
        """Fit the ids shown to the rows and the width; True when they changed."""
        room = max(8, self.columns[KEYS.index("title")].width - TITLE_ROOM)
        fitted = (frozenset(self.summaries), room)
        if fitted == self._fitted:
            return False
        self._fitted = fitted
        shown = {mission: safe(mission).plain for mission in self.summaries}
        forms = apart(shown.values(), room)
        longest = max(map(len, forms.values()), default=0)
        self._ids = {mission: forms[plain].ljust(longest) for mission, plain in shown.items()}
        return True
