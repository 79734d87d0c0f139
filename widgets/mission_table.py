"""The overview's mission table: rows updated by key, never rebuilt wholesale."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from store.summary import MissionSummary
from widgets.gauge import percent_bar, relative_time
from widgets.safe_text import safe
from widgets.status import status_text

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
WIDE = 120


def age(when: datetime | None, now: datetime) -> str:
    """Time since `when`, to the minute: an idle screen changes at most once a minute."""
    if when is None:
        return "—"
    seconds = (now - when).total_seconds()
    return "<1m" if 0 <= seconds < 60 else relative_time(seconds)


class MissionTable(DataTable[Text]):
    """One row per mission, keyed by mission id, sorted by urgency then recency."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._rows: dict[str, tuple[Text, ...]] = {}
        self._sort_keys: dict[str, tuple[int, float, str]] = {}
        self._order: list[str] = []
        self._summaries: dict[str, MissionSummary] = {}
        self._now = datetime.now(UTC)
        self._width = 0
        self.variables: Mapping[str, str] = {}

    def on_mount(self) -> None:
        self._layout_columns(self.size.width or 80)

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._layout_columns(self.size.width)

    def _layout_columns(self, width: int) -> None:
        self._width = width
        wide = width >= WIDE
        fixed = sum((w if wide else n) + 2 for _, _, n, w in COLUMNS if _ != "title")
        title = max(12, width - fixed - 2 - 1)
        widths = {
            key: title if key == "title" else (broad if wide else narrow)
            for key, _, narrow, broad in COLUMNS
        }
        if not self.columns:
            for key, label, *_ in COLUMNS:
                self.add_column(label, key=key, width=widths[key])
            return
        for key, width in widths.items():
            self.columns[ColumnKey(key)].width = width
        self._rows = dict.fromkeys(self._rows, ())
        self.show(self._summaries.values(), self._now, complete=True)
        self.refresh(layout=True)

    def cells(self, summary: MissionSummary, now: datetime) -> tuple[Text, ...]:
        step = Text(f"v{summary.plan_version} " if summary.plan_version else "", style="dim")
        if summary.current_step is not None:
            step.append_text(status_text(summary.step_state or "", self.variables, word=False))
            step.append(" ")
            step.append_text(safe(summary.current_step))
        elif not summary.plan_version:
            step.append("—")
        budget_width = self.columns[ColumnKey("budget")].width
        problems = Text(str(summary.problems) if summary.problems else "", style="bold")
        return (
            status_text(summary.status.value, self.variables),
            safe(summary.title),
            step,
            Text(str(summary.pending) if summary.pending else "", style="bold reverse"),
            percent_bar(summary.budget_fraction, budget_width, self.variables),
            Text(age(summary.last_activity, now)),
            problems,
        )

    def show(self, summaries: Iterable[MissionSummary], now: datetime, *, complete: bool) -> None:
        """Update rows for these missions; with `complete`, also drop rows not among them."""
        given = {summary.id: summary for summary in summaries}
        self._now = now
        if complete:
            self._summaries = dict(given)
        else:
            self._summaries.update(given)
        if complete:
            for gone in [m for m in self._rows if m not in given]:
                self.remove_row(gone)
                del self._rows[gone]
                del self._sort_keys[gone]
                self._summaries.pop(gone, None)
        keys = [key for key, *_ in COLUMNS]
        for mission_id, summary in given.items():
            cells = self.cells(summary, now)
            old = self._rows.get(mission_id)
            if old is None and mission_id not in self.rows:
                self.add_row(*cells, key=mission_id)
            else:
                kept = []
                for index, cell in enumerate(cells):
                    if old and old[index] == cell:
                        kept.append(old[index])  # the object the table holds
                    else:
                        self.update_cell(mission_id, keys[index], cell)
                        kept.append(cell)
                cells = tuple(kept)
            self._rows[mission_id] = cells
            self._sort_keys[mission_id] = summary.sort_key()
        self._resort()

    def _resort(self) -> None:
        """Order rows by urgency then recency, keeping the cursor on its mission."""
        order = sorted(self._rows, key=lambda m: self._sort_keys[m])
        if order == self._order:
            return
        selected = self.selected_mission if self._order else None
        self._order = order
        # DataTable.sort hands the key function a row's cells, not its key: find the
        # mission by the identity of its first cell, which this table created.
        position = {id(self._rows[mission][0]): index for index, mission in enumerate(order)}
        self.sort(key=lambda cells: position[id(cells[0])])
        if selected is not None:
            self.move_cursor(row=self.get_row_index(selected), animate=False)

    @property
    def selected_mission(self) -> str | None:
        if not self.row_count:
            return None
        key: RowKey = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return str(key.value)
