"""The overview's mission table: rows keyed by mission id, sorted by urgency then recency.

Columns are laid out by priority (`widgets.columns`): the mission id takes the width of
the longest id shown (never less than `ID_LEAST`, cut in the middle to a form no other
id shares, `widgets.words.apart`), the title what the other columns leave. Titles repeat
(seven missions "Cut over to gateway v2"), ids never do.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
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
    """One row per mission; `show` updates the rows it is given and re-sorts.

    Rows come a chunk at a time while a large directory is read, so nothing here is
    redone for every row at each chunk: the order is kept sorted (a changed row moves by
    bisection), the widths the columns want are counted per width, and a row's cells are
    drawn when it is shown (`row_cells`), again only when its summary or the layout
    changed them (the Budget column's width, a cut id).
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(column_widths(80, {}), id=id)
        self.summaries: dict[str, MissionSummary] = {}
        self._keys: dict[str, tuple[int, int, str]] = {}
        """Each row's sort key (its id last), computed when its summary arrives."""
        self._sorted: list[tuple[int, int, str]] = []
        """Every row's sort key, in order."""
        self.now = datetime.now(UTC)
        self.variables: Mapping[str, str] = {}
        self._plain: dict[str, str] = {}
        """Each mission id as plain, visible text."""
        self._widths: dict[str, tuple[int, int, int]] = {}
        """The width of each row's Mission, Step and Title cells."""
        self._wanted: tuple[Counter[int], ...] = (Counter(), Counter(), Counter())
        """How many rows want each width, for Mission, Step and Title."""
        self._cut: dict[str, str] = {}
        """The ids too long for the Mission column, as it shows them (`apart`)."""
        self._drawn: dict[str, tuple[MissionSummary, str]] = {}
        """The summary and age each row's cells were drawn with."""
        self._drawn_with: Mapping[str, str] = {}
        """The theme's variables the rows were drawn with."""

    def on_resize(self) -> None:
        self._render_rows(set())

    @property
    def selected_mission(self) -> str | None:
        return self.cursor_key

    def cell(self, mission: str, column: str) -> Text:
        return self.cells(mission)[KEYS.index(column)]

    def row_cells(self, key: str) -> tuple[Text, ...]:
        summary = self.summaries[key]
        self._drawn[key] = (summary, age(summary.last_activity, self.now))
        return self.cells_for(summary)

    def cells_for(self, summary: MissionSummary) -> tuple[Text, ...]:
        budget_width = self.columns[KEYS.index("budget")].width
        return (
            status_text(summary.status.value, self.variables),
            Text(self._cut.get(summary.id) or self._plain[summary.id], style="bold"),
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
        self.now = now
        if self.variables != self._drawn_with:  # another theme: every row
            self._drawn_with = self.variables
            self._drawn.clear()
            self.redraw(self.summaries)
        changed = {
            mission
            for mission, summary in given.items()
            if self._drawn.get(mission) != (summary, age(summary.last_activity, now))
        }
        if complete:
            for gone in [mission for mission in self.summaries if mission not in given]:
                self._drop(gone)
        for summary in given.values():
            self._take(summary, sort=not complete)
        if complete:
            self._sorted = sorted(self._keys.values())
        self._render_rows(changed)

    def _take(self, summary: MissionSummary, *, sort: bool) -> None:
        """Hold `summary`'s row (its sort key moved into place when `sort`); a row held
        with this very summary already costs nothing (the scan's end shows every row)."""
        mission = summary.id
        if self.summaries.get(mission) is summary:
            return
        key = summary.sort_key()
        before = self._keys.get(mission)
        if before != key:
            self._keys[mission] = key
            if sort:
                if before is not None:
                    del self._sorted[bisect_left(self._sorted, before)]
                insort(self._sorted, key)
        self.summaries[mission] = summary
        plain = self._plain.get(mission)
        if plain is None:
            plain = self._plain[mission] = safe(mission).plain
        widths = (
            len(plain),
            step_text(summary, self.variables).cell_len,
            safe(summary.title).cell_len,
        )
        if self._widths.get(mission) != widths:
            self._count(self._widths.get(mission), -1)
            self._count(widths, 1)
            self._widths[mission] = widths

    def _drop(self, mission: str) -> None:
        del self.summaries[mission]
        self._drawn.pop(mission, None)
        del self._keys[mission]
        del self._plain[mission]
        self._count(self._widths.pop(mission), -1)

    def _count(self, widths: tuple[int, ...] | None, step: int) -> None:
        for wanted, width in zip(self._wanted, widths or (), strict=False):
            wanted[width] += step
            if not wanted[width]:
                del wanted[width]

    def _render_rows(self, changed: set[str]) -> None:
        """Put the rows in order and draw again those `changed` (and the layout changed)."""
        changed |= self._fit()
        self.update({}, [key[2] for key in self._sorted])
        self.redraw(changed)

    def _fit(self) -> set[str]:
        """Lay the columns out for the rows held and the width, and fit the ids to their
        column; the rows whose cells that changed."""
        natural = {
            column: max(wanted, default=0)
            for column, wanted in zip(("mission", "step", "title"), self._wanted, strict=True)
        }
        columns = column_widths(self.size.width or 80, natural)
        budget = KEYS.index("budget")
        redrawn: set[str] = set()
        if columns != self.columns:
            if columns[budget] != self.columns[budget]:
                redrawn = set(self.summaries)
            self.set_columns(columns)
        room = self.columns[KEYS.index("mission")].width
        if self._cut or natural["mission"] > room:  # an id is, or was, cut
            forms = apart(self._plain.values(), room)
            cut = {m: forms[plain] for m, plain in self._plain.items() if forms[plain] != plain}
            redrawn |= {m for m in cut.keys() | self._cut.keys() if cut.get(m) != self._cut.get(m)}
            self._cut = cut
        return redrawn & self.summaries.keys()
