"""Row-cursor DataTables: keys that all do what they say, and a flexible column.

Textual's DataTable binds home, end, left and right to horizontal scrolling, which in a
row table that fits its width does nothing; these tables bind only what moves the row
cursor (ids shared with `widgets.row_table.RowTable`, so one `[keys]` remap serves
every table), and enter only where selecting a row does something.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey


class RowCursorTable(DataTable[Text], inherit_bindings=False):
    """A DataTable with a row cursor; `selectable` when enter on a row opens something."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="table.page_down"),
        Binding("home,g", "scroll_top", "First", show=False, id="table.first"),
        Binding("end,G", "scroll_bottom", "Last", show=False, id="table.last"),
        Binding("enter", "select_cursor", "Open", id="table.select"),
    ]

    def __init__(self, *, id: str | None = None, selectable: bool = False) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.selectable = selectable

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.selectable or action != "select_cursor"


class FlexTable(RowCursorTable):
    """Columns from `COLUMNS` as (key, label, width); width 0 marks the flexible one."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = ()

    def on_mount(self) -> None:
        for key, label, width in self.COLUMNS:
            self.add_column(label, key=key, width=width or 20)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        if not self.columns:
            return
        flexible = next(key for key, _, width in self.COLUMNS if not width)
        fixed = sum(width + 2 for _, _, width in self.COLUMNS if width)
        column = self.columns[ColumnKey(flexible)]
        spare = self.size.width - fixed - 3 - self.styles.scrollbar_size_vertical  # bar or not
        column.width = max(12, spare)
        column.auto_width = False
        self.refresh()
