"""Problems: every Problem in the workspace, grouped by row, with path:line and hint."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Static

from hud.screens.base import HudScreen
from widgets.header import HudHeader
from widgets.problem_list import ProblemList


class ProblemsScreen(HudScreen):
    """All problems: grouped by row (mission, SMALL workspace, loopexec run), errors first;
    a bad file never takes it down."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="problems.back"),
    ]

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Static(id="problems-title")
        yield ProblemList(id="problem-list")
        yield Footer()

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        groups = self.hud.workspace.problems_by_row()
        problems = [problem for group in groups.values() for problem in group]
        errors = sum(1 for p in problems if p.severity == "error")
        title = Text(f" {len(problems)} problems", style="bold")
        title.append(f"  ({errors} errors, {len(problems) - errors} warnings)", style="dim")
        complete = self.hud.scanned.is_set()
        if not complete:
            title.append(f"  so far: {self.hud.still_reading()}", style="dim")
        self.query_one("#problems-title", Static).update(title)
        self.query_one(ProblemList).show(groups, complete)
