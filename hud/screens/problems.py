"""Problems: every Problem in the workspace, grouped by file, with path:line and hint."""

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
    """All problems: errors first, grouped by mission; a bad file never takes it down."""

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
        problems = self.hud.workspace.problems()
        errors = sum(1 for p in problems if p.severity == "error")
        title = Text(f" {len(problems)} problems", style="bold")
        title.append(f"  ({errors} errors, {len(problems) - errors} warnings)", style="dim")
        self.query_one("#problems-title", Static).update(title)
        self.query_one(ProblemList).show(problems)
