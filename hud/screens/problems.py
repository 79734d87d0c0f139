"""Problems: every Problem in the workspace, grouped by row, with path:line and hint."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static

from hud.screens.base import HudScreen
from store.format.problems import WORKSPACE_ROW, Problem, row_heading
from widgets.filter import FilterField, Filtering, filter_bindings, matches
from widgets.footer import HudFooter
from widgets.header import HudHeader
from widgets.problem_list import ProblemList
from widgets.words import plural

TAB_OF_FILE = {
    "intent.toml": "intent",
    "constraints.toml": "intent",
    "history": "intent",
    "plan": "plan",
    "events.jsonl": "execution",
    "evidence.jsonl": "evidence",
    "artifacts": "evidence",
    "handoff.json": "handoff",
}
"""The mission tab that shows a file (or a folder's files) of `missions/<id>/`."""


def where_to_open(row: str, path: str) -> tuple[str, str]:
    """("tab", tab id) for a problem in `path` of mission `row`, or ("request", id) for
    one of its approval files; ("tab", "") opens the row's first tab."""
    parts = path.split("/")
    if len(parts) < 3 or parts[:2] != ["missions", row]:
        return "tab", ""
    if parts[2] == "approvals" and len(parts) == 4:
        return "request", parts[3].rsplit(".", 1)[0]
    return "tab", TAB_OF_FILE.get(parts[2], "")


def problem_matches(group: str, problem: Problem, needle: str) -> bool:
    """The filter against the row, path, code, message and hint."""
    return matches(needle, group, problem.where, problem.code, problem.message, problem.hint)


class ProblemsScreen(Filtering, HudScreen):
    """All problems: grouped by row (mission, SMALL workspace, loopexec run), errors first;
    a bad file never takes it down. `/` filters them; enter opens the problem's row where
    it shows the file (a mission's tab, an approval request)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *filter_bindings("problems"),
        Binding("escape", "app.pop_screen", "Back", id="problems.back"),
    ]
    AUTO_FOCUS = "#problem-list"

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Static(id="problems-title")
        yield FilterField(placeholder="filter: mission, path, code, message, fix")
        yield ProblemList(id="problem-list")
        yield HudFooter()

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        groups = self.hud.workspace.problems_by_row()
        problems = [problem for group in groups.values() for problem in group]
        needle = self.needle
        shown = {
            name: [p for p in group if problem_matches(row_heading(name), p, needle)]
            for name, group in groups.items()
        }
        count = sum(map(len, shown.values()))
        errors = sum(1 for p in problems if p.severity == "error")
        title = Text(f" {plural(len(problems), 'problem')}", style="bold")
        if count < len(problems):
            title.append(f", {count} shown", style="bold")
        title.append(
            f"  ({plural(errors, 'error')}, {plural(len(problems) - errors, 'warning')})",
            style="dim",
        )
        complete = self.hud.scanned.is_set()
        if not complete:
            title.append(f"  so far: {self.hud.still_reading()}", style="dim")
        self.query_one("#problems-title", Static).update(title)
        empty = "No problem matches the filter." if problems and not count else ""
        self.query_one(ProblemList).show(shown, complete, empty)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = self.query_one(ProblemList).chosen(event.option_index)
        if chosen is None or chosen[0] == WORKSPACE_ROW:
            return  # a workspace problem has no row to open: its fix is in its path
        row, problem = chosen
        kind, name = where_to_open(row, problem.path)
        mission = self.hud.workspace.missions.get(row)
        if kind == "request" and mission is not None and name in mission.requests:
            self.hud.open_request(row, name)
        else:
            self.hud.open_mission(row, name if kind == "tab" else "")

    def filter_target(self) -> ProblemList:
        return self.query_one(ProblemList)

    def filter_changed(self) -> None:
        self.workspace_changed(None)
