"""A list of Problems grouped by mission, each with path:line, message and fix hint."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from store.problems import Problem
from widgets.safe_text import safe


def group_of(problem: Problem) -> str:
    """The mission a problem belongs to, or "workspace"."""
    parts = problem.path.split("/")
    return parts[1] if len(parts) > 1 and parts[0] == "missions" else "workspace"


def problem_text(problem: Problem) -> Text:
    label = "✗ error" if problem.severity == "error" else "⚠ warn "
    text = Text(label, style="bold red" if problem.severity == "error" else "yellow")
    text.append("  ")
    text.append_text(safe(problem.where))
    text.append("\n    ")
    text.append_text(safe(problem.message))
    if problem.hint:
        text.append("\n    fix: ", style="dim")
        text.append_text(safe(problem.hint))
    return text


class ProblemList(OptionList):
    """Problems grouped under a heading per mission, errors first within each group."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: list[Problem] | None = None

    def show(self, problems: Sequence[Problem]) -> None:
        ordered = sorted(
            problems,
            key=lambda p: (group_of(p), p.severity != "error", p.path, p.line or 0),
        )
        if ordered == self._shown:
            return
        self._shown = ordered
        highlighted = self.highlighted
        self.clear_options()
        group = None
        options: list[Option | None] = []
        for problem in ordered:
            if group_of(problem) != group:
                group = group_of(problem)
                options.append(Option(Text(f"■ {group}", style="bold"), disabled=True))
            options.append(Option(problem_text(problem)))
        if not options:
            options.append(Option(Text("No problems: every invariant holds.", style="dim")))
        self.add_options(options)
        if highlighted is not None:
            self.highlighted = min(highlighted, self.option_count - 1)
