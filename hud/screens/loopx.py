"""One loopx goal: summary (gate, todos by status, quota, handoffs) and its todos.

Read-only: loopx's files are loopx's. The overview row `loopx:<goal>` opens this screen.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Static

from hud.screens.base import HudScreen
from widgets.header import HudHeader
from widgets.loopx import TodoTable, summary_text, todo_detail


class LoopxScreen(HudScreen):
    DEFAULT_CSS = """
    LoopxScreen #goal-summary { height: auto; max-height: 11; padding: 0 1; }
    LoopxScreen #todo-detail { height: 4; border-top: solid $panel-lighten-2; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="loopx.back"),
        Binding("j", "cursor_down", "Down", show=False, id="loopx.down"),
        Binding("k", "cursor_up", "Up", show=False, id="loopx.up"),
    ]

    AUTO_FOCUS = "#todos"

    def __init__(self, mission_id: str) -> None:
        super().__init__()
        self.mission_id = mission_id

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Static(id="goal-summary")
        yield TodoTable(id="todos")
        yield Static(id="todo-detail")
        yield Footer()

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        if touched is not None and self.mission_id not in touched:
            return
        self.sub_title = self.mission_id
        source = self.hud.workspace.loopx
        goal = source.goal(self.mission_id)
        if goal is None:
            self.notify(f"{self.mission_id} is gone", severity="warning")
            self.app.pop_screen()
            return
        runtime = source.loaded.runtime_root if source.loaded is not None else None
        variables = self.app.theme_variables
        self.query_one("#goal-summary", Static).update(
            summary_text(goal, str(runtime) if runtime else "", variables)
        )
        self.query_one(TodoTable).show(goal.state.todos, variables)
        self._detail()

    def _detail(self) -> None:
        source = self.hud.workspace.loopx
        goal = source.goal(self.mission_id)
        if goal is not None:
            todo = self.query_one(TodoTable).selected
            self.query_one("#todo-detail", Static).update(todo_detail(goal, todo))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def action_cursor_down(self) -> None:
        self.query_one(TodoTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one(TodoTable).action_cursor_up()


def detail(row_id: str, tab: str = "") -> LoopxScreen:
    """The screen of row `row_id` (`hud.screens.details`; it has no tabs)."""
    return LoopxScreen(row_id)
