"""A lean keyed table for live data: one line per row, re-rendered only when it changed.

Textual's DataTable clears every cell's render cache on any update, so a table that
changes many times a second repaints every visible cell each time. This Line-API
table caches each row's rendered strip by (row version, width, cursor, theme) and
repaints only what changed; rows are addressed by key, never rebuilt wholesale. It
follows the tables' convention (`widgets.keyed_table`): rows as (key, cells), the cursor
on its key. A subclass may instead hand over only keys (`redraw`) and draw a row's cells
when it is first shown (`row_cells`): ten thousand rows cost the screenful drawn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from widgets.keyed_table import cursor_bindings

GAP = 2


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    width: int


class RowTable(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of cells (rich Text) in fixed-width columns, with a sticky header and a cursor;
    only its own keys (a ScrollView's left and right would move nothing)."""

    BINDINGS: ClassVar[list[BindingType]] = cursor_bindings(
        "cursor(-1)", "cursor(1)", "page(-1)", "page(1)", "first", "last", select="select"
    )
    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-table--header", "row-table--cursor"}
    DEFAULT_CSS = """
    RowTable { height: 1fr; }
    RowTable > .row-table--header { text-style: bold; background: $panel; }
    RowTable > .row-table--cursor { background: $block-cursor-background;
        color: $block-cursor-foreground; text-style: bold; }
    RowTable:blur > .row-table--cursor { background: $block-cursor-blurred-background;
        color: $foreground; text-style: none; }
    """

    cursor = reactive(0, init=False)

    @dataclass
    class Selected(Message):
        """Enter (or a click on the highlighted row) on a row."""

        table: RowTable
        key: str

    def __init__(self, columns: Sequence[Column] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns: list[Column] = list(columns)
        self.order: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._version: dict[str, int] = {}
        self._strips: dict[str, tuple[tuple[int, int, bool, int], Strip]] = {}
        self._index: dict[str, int] = {}

    # ---- data -------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.order)

    @property
    def cursor_key(self) -> str | None:
        return self.order[self.cursor] if self.order else None

    def set_columns(self, columns: Sequence[Column]) -> None:
        self.columns = list(columns)
        self._strips.clear()
        self.refresh()

    def cells(self, key: str) -> tuple[Text, ...]:
        cells = self._cells.get(key)
        if cells is None:
            cells = self._cells[key] = self.row_cells(key)
        return cells

    def row_cells(self, key: str) -> tuple[Text, ...]:
        """The cells of a row handed over by `redraw`, drawn when first needed."""
        raise KeyError(key)

    def redraw(self, keys: Iterable[str]) -> None:
        """These rows' cells changed: drawn again (`row_cells`) when next shown."""
        for key in keys:
            self._cells.pop(key, None)
            self._version[key] = self._version.get(key, 0) + 1
            index = self._index.get(key)
            if index is not None:
                self.refresh_row(index)

    def update(self, rows: Mapping[str, tuple[Text, ...]], order: Sequence[str]) -> None:
        """Set the cells of `rows` (others keep theirs) and the order of all rows.

        Rows not in `order` are dropped. The cursor stays on its row's key.
        """
        keep = self.cursor_key
        changed_lines: list[int] = []
        for key, cells in rows.items():
            if self._cells.get(key) != cells:
                self._cells[key] = cells
                self._version[key] = self._version.get(key, 0) + 1
                if key in self._index:
                    changed_lines.append(self._index[key])
        if list(order) != self.order:
            self.order = list(order)
            self._index = {key: index for index, key in enumerate(self.order)}
            for gone in [key for key in self._version if key not in self._index]:
                self._cells.pop(gone, None)
                del self._version[gone]
                self._strips.pop(gone, None)
            self.virtual_size = Size(self._row_width(), len(self.order) + 1)
            if keep in self._index:
                self.set_reactive(RowTable.cursor, self._index[keep])
            self.cursor = min(self.cursor, max(0, len(self.order) - 1))
            self.refresh()
        else:
            for index in changed_lines:
                self.refresh_row(index)

    def refresh_row(self, index: int) -> None:
        """Repaint the screen line of row `index`, if it is visible."""
        y = index - round(self.scroll_y) + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _row_width(self) -> int:
        return sum(column.width for column in self.columns) + GAP * len(self.columns)

    # ---- rendering --------------------------------------------------------------------

    def _line_text(self, cells: Sequence[Text]) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        for column, cell in zip(self.columns, cells, strict=False):
            piece = cell.copy()
            piece.truncate(column.width, overflow="ellipsis", pad=True)
            line.append(" ")
            line.append_text(piece)
            line.append(" ")
        return line

    def _strip(self, text: Text, style: Style, width: int) -> Strip:
        segments = list(text.render(self.app.console))
        return Strip(segments).extend_cell_length(width).crop(0, width).apply_style(style)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y == 0:
            header = Text()
            for column in self.columns:
                header.append(" " + column.label.ljust(column.width)[: column.width] + " ")
            style = base + self.get_component_rich_style("row-table--header")
            return self._strip(header, style, width)
        index = y - 1 + round(self.scroll_y)
        if index >= len(self.order):
            return Strip([Segment(" " * width, base)], width)
        key = self.order[index]
        is_cursor = index == self.cursor
        stamp = (self._version.get(key, 0), width, is_cursor, id(self.app.current_theme))
        cached = self._strips.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        style = base
        if is_cursor:
            style = base + self.get_component_rich_style(
                "row-table--cursor", partial=not self.has_focus
            )
        strip = self._strip(self._line_text(self.cells(key)), style, width)
        self._strips[key] = (stamp, strip)
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    # ---- cursor -----------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        visible = max(1, self.size.height - 1)
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)

    def move_to(self, index: int) -> None:
        if self.order:
            self.cursor = max(0, min(index, len(self.order) - 1))

    def action_cursor(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, self.size.height - 2))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.order) - 1)

    def action_select(self) -> None:
        if self.cursor_key is not None:
            self.post_message(self.Selected(self, self.cursor_key))

    def on_click(self, event: events.Click) -> None:
        index = event.y - 1 + round(self.scroll_y)
        if 0 <= index < len(self.order):
            if index == self.cursor:
                self.action_select()
            self.move_to(index)
