"""Revisions of a mission's intent and constraints, who made each and when, and diffs.

Read-only, so it stays available in read-only mode. The cursor row is diffed against
the previous revision of the same document ("how did this revision change it?");
mark two rows with space to diff those two instead.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from hud.screens.base import HudScreen
from store.writers.revisions import DOCUMENTS, Revision, diff_lines, revisions
from widgets.diff_view import diff_text
from widgets.footer import HudFooter
from widgets.header import HudHeader
from widgets.keyed_table import Column, KeyedTable
from widgets.safe_text import safe
from widgets.tabs.common import moment

MAX_ROWS = 8
"""Revisions listed without scrolling the table; the diff gets the rest."""
COLUMNS: tuple[Column, ...] = (
    ("mark", "", 1, 1),
    ("doc", "document", 11, 11),
    ("rev", "rev", 4, 4),
    ("who", "who", 22, 22),
    ("when", "when", None, None),
)


class HistoryScreen(HudScreen):
    """Every revision of intent.toml and constraints.toml, and a diff between two."""

    DEFAULT_CSS = """
    HistoryScreen #history-title { height: 1; padding: 0 1; text-style: bold; }
    HistoryScreen #revisions { height: 2; }
    HistoryScreen #diff-title { height: 1; padding: 0 1; background: $panel; }
    HistoryScreen #diff { height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="history.back"),
        Binding("space", "mark", "Mark to diff", id="history.mark"),
        Binding("u", "unmark", "Unmark all", show=False, id="history.unmark"),
        Binding("j", "cursor_down", "Down", show=False, id="history.down"),
        Binding("k", "cursor_up", "Up", show=False, id="history.up"),
    ]
    AUTO_FOCUS = "#revisions"

    def __init__(self, mission_id: str) -> None:
        super().__init__()
        self.mission_id = mission_id
        self.revisions: dict[str, Revision] = {}
        self.marked: list[str] = []
        self._seen: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Static("", id="history-title")
        yield KeyedTable(COLUMNS, id="revisions")
        yield Static("", id="diff-title")
        with VerticalScroll(id="diff"):
            yield Static("", id="diff-text")
        yield HudFooter()

    @property
    def table(self) -> KeyedTable:
        return self.query_one("#revisions", KeyedTable)

    def on_mount(self) -> None:
        self.sub_title = f"{self.mission_id} history"
        self.load()

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        if touched is None or self.mission_id in touched:
            signature = self._signature()
            if signature != self._seen:  # an agent's events alone do not re-read history
                self._seen = signature
                self.load()

    def _signature(self) -> tuple[object, ...]:
        """What the revisions depend on, as the workspace last indexed it."""
        mission = self.hud.workspace.missions.get(self.mission_id)
        if mission is None:
            return ()
        docs = (mission.intent, mission.constraints)
        return (*(d.sha256 if d else None for d in docs), frozenset(mission.history))

    # ---- data ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="history")
    def load(self) -> None:
        """(Re)read the revisions in a thread worker (they are files), then show them."""
        found = revisions(self.hud.workspace.root, self.mission_id)
        self.app.call_from_thread(self.show_revisions, found)

    def show_revisions(self, found: list[Revision]) -> None:
        """Rows keyed by path; the cursor stays on its row."""
        listed = {
            r.relpath: r for kind in DOCUMENTS for r in reversed(found) if r.kind is kind
        }  # intent then constraints, newest first
        if listed == self.revisions:
            return
        self.revisions = listed
        self.marked = [m for m in self.marked if m in listed]
        self._set_rows()
        self.table.styles.height = min(len(listed), MAX_ROWS) + 1
        title = Text(f"History of {self.mission_id}: ", style="bold")
        title.append(f"{len(listed)} revisions", style="")
        self.query_one("#history-title", Static).update(title)
        self.show_diff()

    def _cells(self, revision: Revision) -> tuple[Text, ...]:
        mark = Text("●" if revision.relpath in self.marked else " ", style="bold")
        document = Text(revision.kind.value)
        number = Text(f"r{revision.number}", style="bold" if revision.current else "")
        if revision.problem is not None:
            who = Text("⚠ unreadable", style="bold")
        elif revision.by:
            who = Text(f"{revision.action} by ")
            who.append_text(safe(revision.by))
        else:
            who = Text("not recorded", style="dim")
        when = Text(moment(revision.at))
        if revision.current:
            when.append("  current", style="bold")
        return mark, document, number, who, when

    def _set_rows(self) -> None:
        self.table.set_rows([(key, self._cells(r)) for key, r in self.revisions.items()])

    # ---- diff ----------------------------------------------------------------------------

    def pair(self) -> tuple[Revision | None, Revision | None]:
        """(old, new) to diff: the two marked rows, else the cursor row and its predecessor."""
        if len(self.marked) == 2:
            one, two = sorted((self.revisions[m] for m in self.marked), key=_order)
            return one, two
        key = self.table.selected_key
        if key is None:
            return None, None
        new = self.revisions[key]
        older = [
            r
            for r in self.revisions.values()
            if r.kind is new.kind and r.relpath != new.relpath and _order(r) < _order(new)
        ]
        return (max(older, key=_order) if older else None), new

    def show_diff(self) -> None:
        old, new = self.pair()
        title = self.query_one("#diff-title", Static)
        body = self.query_one("#diff-text", Static)
        if new is None:
            title.update(Text("no revisions of intent or constraints", style="dim"))
            body.update("")
            return
        variables = self.app.theme_variables
        if new.problem is not None:
            title.update(safe(f"{new.name}: {new.problem.message}"))
            body.update(safe(new.problem.hint))
            return
        if old is None:
            head = Text(f"{new.name}: first revision", style="bold")
            head.append(f", {new.action or 'written'}", style="")
            if new.by:
                head.append(" by ")
                head.append_text(safe(new.by))
            title.update(head)
            body.update(safe(new.text or "", multiline=True))
            return
        head = Text(f"{old.name} → {new.name}", style="bold")
        if len(self.marked) != 2:
            head.append("   (space marks two rows to compare)", style="dim")
        title.update(head)
        body.update(diff_text(diff_lines(old, new), variables, empty="identical texts"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if len(self.marked) != 2:
            self.show_diff()

    # ---- actions -------------------------------------------------------------------------

    def action_mark(self) -> None:
        key = self.table.selected_key
        if key is None:
            return
        if key in self.marked:
            self.marked.remove(key)
        else:
            self.marked.append(key)
            del self.marked[:-2]
        self._refresh_marks()

    def action_unmark(self) -> None:
        self.marked.clear()
        self._refresh_marks()

    def _refresh_marks(self) -> None:
        self._set_rows()
        self.show_diff()

    def action_cursor_down(self) -> None:
        self.table.action_cursor_down()

    def action_cursor_up(self) -> None:
        self.table.action_cursor_up()


def _order(revision: Revision) -> tuple[int, int]:
    """Older first: by revision number, the current file last among equals."""
    return revision.number, 1 if revision.current else 0
