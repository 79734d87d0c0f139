"""Pieces the mission tabs share: text helpers, a keyed table, focus on show.

Nothing here reads files: the tab widgets render what the views hand them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar, cast

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.message import Message
from textual.widget import Widget
from textual.widgets.data_table import RowKey

from store.problems import Problem
from widgets.flex_table import RowCursorTable
from widgets.safe_text import safe
from widgets.status import status_text, theme_style

WIDE = 120
"""From this many columns a tab uses its wide layout."""

Column = tuple[str, str, int, int]
"""(key, label, narrow width, wide width); a width of 0 takes what is left."""


# ---- text --------------------------------------------------------------------------------


def heading(title: str) -> Text:
    return Text(title, style="bold underline")


def label(name: str, width: int = 0) -> Text:
    """A dim field name, padded to `width`."""
    return Text(f"{name}:".ljust(width) + " ", style="dim")


def field_line(name: str, value: Text | str, width: int = 0) -> Text:
    text = label(name, width)
    text.append_text(value if isinstance(value, Text) else safe(value))
    return text


def hanging(prefix: Text | str, body: Text) -> Text:
    """`prefix` then `body`, the body's later lines indented to line up under its first."""
    head = Text(prefix) if isinstance(prefix, str) else prefix
    pad = "\n" + " " * head.cell_len
    lines = body.split("\n", allow_blank=True)
    result = head.copy()
    for index, line in enumerate(lines):
        if index:
            result.append(pad)
        result.append_text(line)
    return result


def bullets(items: Sequence[str], *, empty: str = "none", marker: str = "•") -> Text:
    """One `  • item` line per item (made safe), or a dim `  none`."""
    if not items:
        return Text(f"  {empty}", style="dim")
    return Text("\n").join(hanging(f"  {marker} ", safe(item, multiline=True)) for item in items)


def join_lines(parts: Iterable[Text | str]) -> Text:
    return Text("\n").join(Text(p) if isinstance(p, str) else p for p in parts)


def moment(when: datetime | None, *, seconds: bool = True) -> str:
    """A timestamp as written (its own zone): `2025-01-01 12:00:05Z`, `... +02:00`."""
    if when is None:
        return "—"
    offset = when.utcoffset()
    if not offset:
        zone = "Z"
    else:
        sign = "-" if offset < timedelta(0) else "+"
        minutes = int(abs(offset).total_seconds()) // 60
        zone = f" {sign}{minutes // 60:02d}:{minutes % 60:02d}"
    return when.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M") + zone


def clock(when: datetime, *, wide: bool = False) -> str:
    """A log line's time: `12:00:05`, with the date when `wide`."""
    return when.strftime("%Y-%m-%d %H:%M:%S" if wide else "%H:%M:%S")


def compact(value: Any) -> str:
    """A JSON value on one line, for args and list fields."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def problem_text(problem: Problem, variables: Mapping[str, str] | None = None) -> Text:
    """`✗ path:line message · fix: hint` on one line, the message made safe."""
    error = problem.severity == "error"
    text = Text(
        "✗ " if error else "⚠ ",
        style=theme_style("$error bold" if error else "$warning bold", variables),
    )
    text.append_text(safe(problem.where))
    text.append(" ")
    text.append_text(safe(problem.message))
    if problem.hint:
        text.append(" · fix: ", style="dim")
        text.append_text(safe(problem.hint))
    return text


def problems_block(problems: Sequence[Problem], variables: Mapping[str, str] | None) -> Text:
    return join_lines(problem_text(p, variables) for p in problems)


def verdict_text(verdict: str, variables: Mapping[str, str] | None = None) -> Text:
    if verdict == "pass":
        return Text("✓ pass", style=theme_style("$success", variables))
    if verdict == "fail":
        return Text("✗ fail", style=theme_style("$error bold", variables))
    return status_text(verdict, variables)


def cell(text: Text) -> Text:
    """A table cell: one line, cut with an ellipsis when the column is narrower."""
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


# ---- widgets -------------------------------------------------------------------------------


class Reselected(Message):
    """A tab's widget changed what it wants shown (an event, a plan version): the mission
    screen feeds it again."""


class FocusOnShow:
    """A tab's widget takes the focus when its tab is shown, so its keys work at once."""

    def focus_target(self) -> Widget:
        assert isinstance(self, Widget)
        return self

    def on_show(self, event: events.Show) -> None:
        assert isinstance(self, Widget)
        target = self.focus_target()
        if self.is_shown() and self.screen.focused is not target:  # a Show can come late
            target.focus()

    def is_shown(self) -> bool:
        """False while this widget or an ancestor (its tab pane) is hidden."""
        node: DOMNode | None = cast(Widget, self)
        while node is not None:
            if not node.display:
                return False
            node = node.parent
        return True

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A hidden tab never takes the focus back.

        When the focused widget's tab is hidden, Textual moves the focus to a visible
        sibling of it, which is in the same (now hidden) tab, and TabbedContent would
        then switch back to that tab. Stop that, and give the focus to the tab shown.
        """
        assert isinstance(self, Widget)
        if self.is_shown():
            return
        event.stop()
        for node in self.screen.walk_children(Widget):
            if isinstance(node, FocusOnShow) and node.is_shown():
                node.focus_target().focus()
                return


class ThemeAware:
    """Re-renders when the app's theme changes (status colours come from the theme)."""

    def on_mount(self) -> None:
        assert isinstance(self, Widget)
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self.rerender()

    def rerender(self) -> None:
        """Render again from the data last shown."""

    @property
    def variables(self) -> Mapping[str, str]:
        assert isinstance(self, Widget)
        try:
            return self.app.theme_variables
        except Exception:  # no app yet (a widget built outside one)
            return {}


class DocumentScroll(VerticalScroll, inherit_bindings=False):
    """A scrolling document: up and down only (left and right would do nothing)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "scroll_down", "Down", show=False, id="scroll.down"),
        Binding("up,k", "scroll_up", "Up", show=False, id="scroll.up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="scroll.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="scroll.page_up"),
        Binding("home,g", "scroll_home", "Top", show=False, id="scroll.top"),
        Binding("end,G", "scroll_end", "Bottom", show=False, id="scroll.bottom"),
    ]


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
    ) -> None:
        super().__init__(id=id, selectable=selectable)
        self.column_spec = tuple(columns)
        self.on_relayout = on_relayout
        self.wide = False
        self._widths: tuple[int, ...] = ()
        self._order: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}

    # -- layout ---------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._layout(self.size.width or 80)

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def widths_for(self, width: int) -> tuple[int, ...]:
        wide = width >= WIDE
        fixed = [(w if wide else n) for _, _, n, w in self.column_spec]
        padding = 2 * self.cell_padding * len(fixed)
        rest = max(8, width - sum(fixed) - padding - 2)
        return tuple(w or rest for w in fixed)

    def width_of(self, column: str) -> int:
        """The width of `column` as laid out (as at 80 cells before the first layout)."""
        keys = [key for key, *_ in self.column_spec]
        widths = self._widths or self.widths_for(self.size.width or 80)
        return widths[keys.index(column)]

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
            for key, cells in rows[len(kept) :]:
                self.add_row(*(cell(c) for c in cells), key=key)
                self._cells[key] = cells
            self._order = keys
            if selected is not None and selected in self._cells:
                self.move_cursor(row=self.get_row_index(selected), animate=False)
            return True
        selected = self.selected_key
        self.clear()
        self._cells = {}
        for key, cells in rows:
            self.add_row(*(cell(c) for c in cells), key=key)
            self._cells[key] = cells
        self._order = keys
        if selected is not None and selected in self._cells:
            self.move_cursor(row=self.get_row_index(selected), animate=False)
        return True

    def _update(self, rows: Sequence[tuple[str, tuple[Text, ...]]]) -> bool:
        changed = False
        names = [name for name, *_ in self.column_spec]
        for key, cells in rows:
            old = self._cells[key]
            if old == cells:
                continue
            for index, value in enumerate(cells):
                if index >= len(old) or old[index] != value:
                    self.update_cell(key, names[index], cell(value))
            self._cells[key] = cells
            changed = True
        return changed
