"""One loopx goal: summary (gate, todos by status, quota, handoffs) and its todos.

Read-only: loopx's files are loopx's. The overview row `loopx:<goal>` opens this screen.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from hud.screens.base import RowScreen
from store.sources.loopx.goal import Goal
from widgets.footer import HudFooter
from widgets.hanging import Document
from widgets.header import HudHeader
from widgets.loopx import TodoTable, summary_text, todo_detail


class LoopxScreen(RowScreen[Goal]):
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

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Document(id="goal-summary")
        yield TodoTable(id="todos")
        yield Document(id="todo-detail")
        yield HudFooter()

    def find_row(self) -> Goal | None:
        return self.hud.workspace.loopx.goal(self.mission_id)

    def row_changed(self, goal: Goal) -> None:
        source = self.hud.workspace.loopx
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
