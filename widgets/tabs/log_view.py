"""What the Execution and Evidence tabs share: a window of log lines, a status line, a
table of them, the highlighted line in full, each repainted only when it changed, and
`/` to filter the rows by the words in them."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import DataTable, Static

from store.format.problems import Problem
from widgets.filter import FilterField, Filtering, matches
from widgets.keyed_table import KeyedTable
from widgets.keys import KeyHints
from widgets.tabs.common import FocusOnShow, ThemeAware, problems_block

Line = tuple[int, Any]
"""(line number, record or Problem) of one log line."""
Row = tuple[str, tuple[Text, ...]]
"""(key, cells) of one table row."""


class LogView(Filtering, KeyHints, ThemeAware, FocusOnShow, Vertical):
    """Base of a log tab. Subclasses make `table`, `status` and `detail`, compose
    `filter_field` above the table, bind `filter_bindings` and define `refresh_rows`,
    `status_text` and `detail_for`."""

    WINDOW: ClassVar[int] = 1000
    """How many of the log's last lines are kept."""
    table: KeyedTable
    status: Static
    detail: Static

    def __init__(self, *, id: str | None) -> None:
        super().__init__(id=id)
        self._buffer: deque[Line] = deque()
        self._cells: dict[int, Any] = {}
        self._total = 0
        self._chain_broken_at: int | None = None
        self._seq_broken_at: int | None = None
        self._unverified_from: int | None = None
        self._file_problems: tuple[Problem, ...] = ()
        self._status_shown: Text | None = None
        # A Static starts empty. Updating it with "" before it is mounted leaves Textual
        # (8.2) believing a layout is pending, and its auto height then never grows.
        self._detail_shown: Text | None = Text("")

    def focus_target(self) -> Widget:
        return self.table

    def filter_target(self) -> Widget:
        return self.table

    def filter_changed(self) -> None:
        self.refresh_rows()

    def keys_changed(self) -> None:
        self._status_shown = None
        self.update_status()

    def compose_filter(self) -> FilterField:
        return FilterField(placeholder="filter: words in the rows")

    def filtered(self, rows: list[Row]) -> list[Row]:
        """The rows that hold every word of the filter."""
        needle = self.needle
        if not needle:
            return rows
        return [(key, cells) for key, cells in rows if matches(needle, *(c.plain for c in cells))]

    def show(
        self,
        lines: Iterable[Line],
        *,
        reset: bool = False,
        total: int | None = None,
        chain_broken_at: int | None = None,
        seq_broken_at: int | None = None,
        unverified_from: int | None = None,
        file_problems: Sequence[Problem] = (),
    ) -> None:
        """Append these log lines, keeping the last `WINDOW` (after dropping what was kept,
        with `reset`); lines from `unverified_from` on (`LogReader.unverified_from`) are
        marked unverified; `file_problems` (the log's own: not a regular file, unreadable)
        stand under the status line."""
        if unverified_from != self._unverified_from:
            self._cells.clear()
            self._unverified_from = unverified_from
        if reset:
            self._buffer.clear()
            self._cells.clear()
            self.forget()
        for line, record in lines:
            if len(self._buffer) >= self.WINDOW:
                gone, _ = self._buffer.popleft()
                self._cells.pop(gone, None)
            self._buffer.append((line, record))
            self.kept(line, record)
        self._total = total if total is not None else (self._buffer[-1][0] if self._buffer else 0)
        self._chain_broken_at = chain_broken_at
        self._seq_broken_at = seq_broken_at
        self._file_problems = tuple(file_problems)
        self.refresh_rows()

    def kept(self, line: int, record: Any) -> None:
        """A line now kept: a subclass notes what its rows need of it."""

    def forget(self) -> None:
        """The lines kept are dropped (a reset): a subclass drops what it noted of them."""

    @property
    def lines(self) -> list[Line]:
        """The lines kept (the last `WINDOW`)."""
        return list(self._buffer)

    def refresh_rows(self) -> None:
        raise NotImplementedError

    def status_text(self) -> Text:
        raise NotImplementedError

    def detail_for(self, line: int, record: Any) -> Text:
        raise NotImplementedError

    def relayout(self) -> None:
        """The table's columns changed (narrow/wide): cells are built again."""
        self._cells.clear()
        self.refresh_rows()

    def rerender(self) -> None:
        """The theme changed: everything is rendered again."""
        self._cells.clear()
        self._status_shown = None
        self._detail_shown = None
        self.refresh_rows()

    def update_status(self) -> None:
        text = self.status_text()
        if self._file_problems:
            text = Text("\n").join((text, problems_block(self._file_problems, self.variables)))
        if text != self._status_shown:
            self._status_shown = text
            self.status.update(text)

    def update_detail(self) -> None:
        key = self.table.selected_key
        text = Text("")
        if key is not None:
            line = int(key)
            record = next((r for n, r in reversed(self._buffer) if n == line), None)
            if record is not None:
                text = self.detail_for(line, record)
        if text != self._detail_shown:
            self._detail_shown = text
            self.detail.update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.update_detail()
