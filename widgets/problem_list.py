"""A list of Problems grouped by mission, each with path:line, message and fix hint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.visual import Visual, visualize
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from store.format.problems import Problem, row_heading
from widgets.hanging import hang_after, hang_wrap
from widgets.keyed_table import cursor_bindings
from widgets.safe_text import safe


def problem_text(problem: Problem) -> Text:
    label = "✗ error" if problem.severity == "error" else "⚠ warn "
    text = Text(label, style="bold red" if problem.severity == "error" else "yellow")
    text.append("  ")
    text.append_text(safe(problem.where))
    text.append("\n")
    text.append_text(hang_after(Text("    ")))
    text.append_text(safe(problem.message))
    if problem.hint:
        text.append("\n")
        text.append_text(hang_after(Text("    fix: ", style="dim")))
        text.append_text(safe(problem.hint))
    return text


class ProblemList(OptionList, inherit_bindings=False):
    """Problems under a heading per group (a mission, an outside row, the workspace):
    groups with an error first, then by name; errors first within each. Keys move the
    cursor and enter selects a problem (`chosen` says which); their ids are the tables'
    (`widgets.keyed_table`)."""

    BINDINGS: ClassVar[list[BindingType]] = cursor_bindings(
        "cursor_up", "cursor_down", "page_up", "page_down", "first", "last", select="select"
    )

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[list[tuple[str, list[Problem]]], bool, str] | None = None
        self._hung: dict[Option, tuple[int, Visual]] = {}
        """Each option's visual and the width it was wrapped at."""
        self._rows: list[tuple[str, Problem] | None] = []
        """(group name, problem) of each option; None for a heading or a blank."""

    def _get_visual(self, option: Option) -> Visual:
        """The option's prompt with its message and fix hanging under their start at the
        list's width (Textual's own, but for the width; kept while the width is)."""
        padding = self.get_component_styles("option-list--option").padding
        region = self.scrollable_content_region
        width = region.width - self._get_left_gutter_width() - padding.width
        kept = self._hung.get(option)
        if kept is None or kept[0] != width:
            prompt = option.prompt
            if isinstance(prompt, Text):
                prompt = hang_wrap(prompt, width, self.app.console)
            kept = (width, visualize(self, prompt, markup=self._markup))
            self._hung[option] = kept
        return kept[1]

    def chosen(self, index: int | None) -> tuple[str, Problem] | None:
        """The (group name, problem) of option `index`, None for a heading."""
        if index is None or not 0 <= index < len(self._rows):
            return None
        return self._rows[index]

    def show(
        self, groups: Mapping[str, Sequence[Problem]], complete: bool = True, empty: str = ""
    ) -> None:
        """Show these groups; `complete` is False while the directory is still being read;
        `empty`, if given, says why there is none."""

        def order(name: str) -> tuple[bool, str, str]:
            errors = any(p.severity == "error" for p in groups[name])
            return (not errors, row_heading(name), name)

        ordered = [
            (
                name,
                sorted(groups[name], key=lambda p: (p.severity != "error", p.path, p.line or 0)),
            )
            for name in sorted(groups, key=order)
            if groups[name]
        ]
        if (ordered, complete, empty) == self._shown:
            return
        self._shown = ordered, complete, empty
        highlighted = self.highlighted
        self.clear_options()
        self._hung.clear()
        options: list[Option | None] = []
        self._rows = []
        for name, problems in ordered:
            heading = Text(f"■ {safe(row_heading(name)).plain}", style="bold")
            options.append(Option(heading, disabled=True))
            options.extend(Option(problem_text(problem)) for problem in problems)
            self._rows += [None, *((name, problem) for problem in problems)]
        if not options:
            none = empty or (
                "No problems: every invariant holds." if complete else "No problems so far."
            )
            options.append(Option(Text(none, style="dim")))
        self.add_options(options)
        if highlighted is not None:
            self.highlighted = min(highlighted, self.option_count - 1)
