"""The HUD's tables, one convention: rows are (key, cells) records, set by key.

A table whose rows change is a `KeyedTable`: its owner hands it every row as a stable
key (a mission, request or step id, a path, a place in a file) and a tuple of rich
`Text` cells, through `set_rows`; each cell goes through `cell` (one line, cut with an
ellipsis); only changed cells are updated, and the cursor stays on its key when rows
come, go or move. Columns are `(key, label, narrow width, wide width)`: a width of 0
takes what is left (`widths_for`; `FlexTable` keeps room for a scrollbar), None fits
the content. A column named in `ids` holds ids: it is never narrower than `ID_LEAST`, and
a cell too wide for it is cut in the middle, both ends kept (`widgets.words.middle`).
What a row stands for the owner keeps by key; `selected_key` says which.

Two tables are not KeyedTables: the help screen's keys (a `RowCursorTable`, filled once)
and the overview's `widgets.row_table.RowTable`, which follows the same convention (rows
by key, the cursor on its key) on the Line API, for rows that change many times a second.

Textual's DataTable binds home, end, left and right to horizontal scrolling, which in a
row table that fits its width does nothing; these tables bind only what moves the row
cursor (ids shared with `RowTable`, so one `[keys]` remap serves every table), and enter
only where selecting a row does something.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from widgets.columns import ID_LEAST
from widgets.words import middle

WIDE = 120
"""From this many columns a tab uses its wide layout."""

Column = tuple[str, str, int | None, int | None]
"""(key, label, narrow width, wide width); a width of 0 takes what is left, None fits the
content."""


def cursor_bindings(
    up: str,
    down: str,
    page_up: str,
    page_down: str,
    first: str,
    last: str,
    select: str | None = None,
) -> list[BindingType]:
    """The row cursor's keys, given each one's action (`select`, if given, is bound to enter);
    every list shares the ids `table.*`, so one `[keys]` remap serves every table."""
    bindings: list[BindingType] = [
        Binding("up,k", up, "Up", show=False, id="table.up"),
        Binding("down,j", down, "Down", show=False, id="table.down"),
        Binding("pageup", page_up, "Page up", show=False, id="table.page_up"),
        Binding("pagedown", page_down, "Page down", show=False, id="table.page_down"),
        Binding("home,g", first, "First", show=False, id="table.first"),
        Binding("end,G", last, "Last", show=False, id="table.last"),
    ]
    if select is not None:
        bindings.append(Binding("enter", select, "Open", id="table.select"))
    return bindings


def cell(text: Text) -> Text:
    """A table cell: one line, cut with an ellipsis when the column is narrower."""
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


class RowCursorTable(DataTable[Text], inherit_bindings=False):
    """A DataTable with a row cursor; `selectable` when enter on a row opens something."""

    BINDINGS: ClassVar[list[BindingType]] = cursor_bindings(
        "cursor_up",
        "cursor_down",
        "page_up",
        "page_down",
        "scroll_top",
        "scroll_bottom",
        select="select_cursor",
    )

    def __init__(self, *, id: str | None = None, selectable: bool = False) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.selectable = selectable

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.selectable or action != "select_cursor"


class KeyedTable(RowCursorTable):
    """A row-cursor table whose rows are set by key: only changed cells are updated.

    Columns are laid out for the width (narrow below `WIDE` columns, wide from it);
    the column with width 0 takes what is left. When the layout changes, `on_relayout`
    (if given) is called to set the rows again (cells may depend on `wide`).
    """

    def __init__(
        self,
        columns: Sequence[Column],
        *,
        id: str | None = None,
        on_relayout: Callable[[], None] | None = None,
        selectable: bool = False,
        ids: Collection[str] = (),
    ) -> None:
        super().__init__(id=id, selectable=selectable)
        self.id_columns = frozenset(ids)
        self.column_spec = tuple(
            (key, label, max(narrow, ID_LEAST), max(wide, ID_LEAST))
            if key in self.id_columns and narrow and wide
            else (key, label, narrow, wide)
            for key, label, narrow, wide in columns
        )
        """The columns; an id column is never narrower than `ID_LEAST`."""
        self._column_keys = [key for key, *_ in self.column_spec]
        self.on_relayout = on_relayout
        self.wide = False
        self._widths: tuple[int | None, ...] = ()
        self._order: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}

    # -- layout ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._layout(self.size.width or 80)

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def widths_for(self, width: int) -> tuple[int | None, ...]:
        wide = width >= WIDE
        fixed = [(w if wide else n) for _, _, n, w in self.column_spec]
        padding = 2 * self.cell_padding * len(fixed)
        rest = max(8, width - sum(w or 0 for w in fixed) - padding - 2)
        return tuple(rest if w == 0 else w for w in fixed)

    def width_of(self, column: str) -> int:
        """The width of `column` as laid out (as at 80 cells before the first layout; 0 for
        a column that fits its content)."""
        widths = self._widths or self.widths_for(self.size.width or 80)
        return widths[self._column_keys.index(column)] or 0

    def _layout(self, width: int) -> None:
        widths = self.widths_for(width)
        if widths == self._widths:
            return
        self._widths = widths
        self.wide = width >= WIDE
        key = self.selected_key
        rows = [(k, self._cells[k]) for k in self._order]
        self.clear(columns=True)
        self._order = []
        self._cells = {}
        for (name, title, *_), size in zip(self.column_spec, widths, strict=True):
            self.add_column(title, key=name, width=size)
        if self.on_relayout is not None:
            self.on_relayout()
        else:
            self.set_rows(rows)
        if key is not None and key in self._cells:
            self.move_cursor(row=self.get_row_index(key), animate=False)

    # -- rows -----------------------------------------------------------------------------

    @property
    def keys(self) -> list[str]:
        return list(self._order)

    def cells_of(self, key: str) -> tuple[Text, ...]:
        return self._cells[key]

    def plain_rows(self) -> list[str]:
        """Every row as one line of plain text, cells separated by two spaces."""
        return ["  ".join(c.plain for c in self._cells[key]) for key in self._order]

    @property
    def selected_key(self) -> str | None:
        if not self.row_count or not self.is_valid_row_index(self.cursor_row):
            return None
        row: RowKey = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return str(row.value)

    def set_rows(self, rows: Sequence[tuple[str, tuple[Text, ...]]]) -> bool:
        """Show exactly these rows in this order; True when anything changed.

        Unchanged cells are left alone. Rows dropped from the top and added at the
        bottom (a log window moving on) are removed and appended; any other change
        of the key order rebuilds the rows, keeping the cursor on its key.
        """
        if not self.columns:
            self._order = [key for key, _ in rows]
            self._cells = dict(rows)
            return True
        keys = [key for key, _ in rows]
        old = self._order
        if keys == old:
            return self._update(rows)
        drop = old.index(keys[0]) if keys and keys[0] in self._cells else len(old)
        kept = old[drop:]
        if keys[: len(kept)] == kept:
            selected = self.selected_key if drop else None
            for key in old[:drop]:
                self.remove_row(key)
                del self._cells[key]
            self._update(rows[: len(kept)])
            self._append(rows[len(kept) :], keys, selected)
            return True
        selected = self.selected_key
        self.clear()
        self._cells = {}
        self._append(rows, keys, selected)
        return True

    def append_rows(self, rows: Sequence[tuple[str, tuple[Text, ...]]]) -> None:
        """Add `rows` (keys not shown yet) after the last row; the others are not looked at."""
        keys = self._order + [key for key, _ in rows]
        if not self.columns:
            self._order = keys
            self._cells.update(rows)
            return
        self._append(rows, keys, None)

    def _append(
        self, rows: Sequence[tuple[str, tuple[Text, ...]]], keys: list[str], selected: str | None
    ) -> None:
        """Add `rows` at the bottom, make `keys` the order and put the cursor back on
        `selected` if it is still shown."""
        for key, cells in rows:
            self.add_row(*(self._cell(index, c) for index, c in enumerate(cells)), key=key)
            self._cells[key] = cells
        self._order = keys
        if selected is not None and selected in self._cells:
            self.move_cursor(row=self.get_row_index(selected), animate=False)

    def _cell(self, index: int, text: Text) -> Text:
        """Cell `index` of a row as shown: an id too wide for its column cut in the middle."""
        width = self._widths[index] if index < len(self._widths) else None
        if width and text.cell_len > width and self._column_keys[index] in self.id_columns:
            return cell(Text(middle(text.plain, width), style=text.style))
        return cell(text)

    def _update(self, rows: Sequence[tuple[str, tuple[Text, ...]]]) -> bool:
        changed = False
        for key, cells in rows:
            old = self._cells[key]
            if old == cells:
                continue
            for index, value in enumerate(cells):
                if index >= len(old) or old[index] != value:
                    fits = self._widths[index] is None  # the column fits its content
                    shown = self._cell(index, value)
                    self.update_cell(key, self._column_keys[index], shown, update_width=fits)
            self._cells[key] = cells
            changed = True
        return changed


class FlexTable(KeyedTable):
    """A KeyedTable with one width per column (narrow and wide alike) whose column of
    width 0 leaves room for a vertical scrollbar, shown or not."""

    def widths_for(self, width: int) -> tuple[int | None, ...]:
        fixed = [narrow for _, _, narrow, _ in self.column_spec]
        spare = width - sum(w + 2 for w in fixed if w) - 3 - self.styles.scrollbar_size_vertical
        return tuple(max(12, spare) if w == 0 else w for w in fixed)


T = TypeVar("T")


class PlacedTable(FlexTable, Generic[T]):
    """A FlexTable of items keyed by their place (ids need not be unique): a subclass gives
    its `COLUMNS` and a cell function; `selected` is the item under the cursor."""

    COLUMNS: ClassVar[tuple[Column, ...]] = ()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(self.COLUMNS, id=id)
        self.items: list[T] = []

    def at_end(self) -> bool:
        """Whether the cursor is on the last row (or there is none): the table follows the
        end when rows are added."""
        return not self.row_count or self.cursor_row >= self.row_count - 1

    def show_items(
        self,
        items: Sequence[T],
        cells: Callable[[T], tuple[Text, ...]],
        *,
        follow: bool = False,
    ) -> None:
        """Rows keyed by their place; nothing is done when `items` are unchanged. With
        `follow` the cursor follows the end while it is on the last row."""
        if list(items) == self.items:
            return
        following = follow and self.at_end()
        self.items = list(items)
        self.set_rows([(str(n), cells(item)) for n, item in enumerate(self.items)])
        if following and self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False)

    @property
    def selected(self) -> T | None:
        key = self.selected_key
        return None if key is None else self.items[int(key)]
