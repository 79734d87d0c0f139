"""The overview's mission table: rows keyed by mission id, sorted by urgency then recency.

Columns are laid out by priority (`widgets.columns`): the mission id takes the width of
the longest id shown (never less than `ID_LEAST`, cut in the middle to a form no other
id shares, `widgets.words.apart`), the title what the other columns leave. Titles repeat
(seven missions "Cut over to gateway v2"), ids never do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.text import Text

from widgets.columns import ID_LEAST, Fit, fit_widths
from widgets.gauge import percent_bar, relative_time
from widgets.row_table import GAP, Column, RowTable
from widgets.safe_text import safe
from widgets.status import status_text
from widgets.words import apart

if TYPE_CHECKING:
    from store.format.row import MissionSummary

COLUMNS: tuple[Fit, ...] = (
    Fit("status", "Status", 11, 11),
    Fit("mission", "Mission", ID_LEAST, give=1),
    Fit("title", "Title", 7, give=4, fill=True),
    Fit("step", "Step", 8, 30, give=5),
    Fit("pending", "Appr", 4, 4),
    Fit("budget", "Budget", 6, 16, give=6),
    Fit("last", "Last", 4, 5, give=3),
    Fit("problems", "Prob", 4, 4),
)
KEYS = tuple(column.key for column in COLUMNS)


def age(when: datetime | None, now: datetime) -> str:
    """Time since `when`, to the minute: an idle screen changes at most once a minute."""
    if when is None:
        return "—"
    seconds = (now - when).total_seconds()
    return "<1m" if 0 <= seconds < 60 else relative_time(seconds)


def column_widths(width: int, natural: Mapping[str, int]) -> list[Column]:
    """Columns for a table `width` cells wide, from the widths the cells want."""
    room = width - GAP * len(COLUMNS) - 1
    widths = fit_widths(COLUMNS, natural, room)
    return [Column(column.key, column.label, widths[column.key]) for column in COLUMNS]


def step_text(summary: MissionSummary, variables: Mapping[str, str]) -> Text:
    """`v2 ▶ build`: the plan version and the current step with its state."""
    step = Text(f"v{summary.plan_version} " if summary.plan_version else "", style="dim")
    if summary.current_step is not None:
        step.append_text(status_text(summary.step_state or "", variables, word=False))
        step.append(" ")
        step.append_text(safe(summary.current_step))
    elif not summary.plan_version:
        step.append("—")
    return step


class MissionTable(RowTable):
    """One row per mission; `show` updates the rows it is given and re-sorts."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(column_widths(80, {}), id=id)
        self.summaries: dict[str, MissionSummary] = {}
        self._order_keys: dict[str, tuple[int, int, str]] = {}
        """Each row's sort key, computed when its summary arrives (not at every sort)."""
        self.now = datetime.now(UTC)
        self.variables: Mapping[str, str] = {}
        self._ids: dict[str, str] = {}
        """Each mission id as the Mission column shows it."""
        self._fitted: tuple[frozenset[str], int] | None = None
        """The ids and the width `_ids` were fitted for."""
        self._widths: dict[str, tuple[int, int]] = {}
        """The width of each row's Step and Title cells."""
        self._plain: dict[str, str] = {}
        """Each mission id as plain, visible text."""
        self._shown_for: frozenset[str] = frozenset()
        """The rows `_plain` and `_widths` are for."""

    def on_resize(self) -> None:
        self._render_rows(self.summaries.values())

    @property
    def selected_mission(self) -> str | None:
        return self.cursor_key

    def cell(self, mission: str, column: str) -> Text:
        return self.cells(mission)[KEYS.index(column)]

    def cells_for(self, summary: MissionSummary) -> tuple[Text, ...]:
        budget_width = self.columns[KEYS.index("budget")].width
        return (
            status_text(summary.status.value, self.variables),
            Text(self._ids[summary.id], style="bold"),
            safe(summary.title),
            step_text(summary, self.variables),
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
        given = list(summaries)
        if self._fit(given):
            given = list(self.summaries.values())
        rows = {summary.id: self.cells_for(summary) for summary in given}
        self.update(rows, sorted(self._order_keys, key=self._order_keys.__getitem__))

    def _fit(self, given: Iterable[MissionSummary]) -> bool:
        """Lay the columns out for the rows shown (`given` changed) and the width, and
        fit the ids to their column; True when anything changed (every row is then
        drawn again)."""
        for summary in given:
            self._widths[summary.id] = (
                step_text(summary, self.variables).cell_len,
                safe(summary.title).cell_len,
            )
        ids = frozenset(self.summaries)
        if ids != self._shown_for:
            self._shown_for = ids
            self._widths = {m: w for m, w in self._widths.items() if m in ids}
            self._plain = {mission: safe(mission).plain for mission in ids}
        natural = {
            "mission": max(map(len, self._plain.values()), default=0),
            "step": max((step for step, _ in self._widths.values()), default=0),
            "title": max((title for _, title in self._widths.values()), default=0),
        }
        columns = column_widths(self.size.width or 80, natural)
        relaid = columns != self.columns
        if relaid:
            self.set_columns(columns)
        room = self.columns[KEYS.index("mission")].width
        if (ids, room) == self._fitted and not relaid:
            return False
        self._fitted = (ids, room)
        forms = apart(self._plain.values(), room)
        self._ids = {mission: forms[plain] for mission, plain in self._plain.items()}
        return True
