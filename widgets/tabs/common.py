"""Pieces the mission tabs share: text helpers, focus on show, a document scroll.

Nothing here reads files: the tab widgets render what the views hand them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar, cast

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.message import Message
from textual.widget import Widget

from store.format.problems import Problem
from widgets.hanging import HANG, hang_after
from widgets.safe_text import safe
from widgets.status import status_text, theme_style

# ---- text --------------------------------------------------------------------------------


def heading(title: str) -> Text:
    return Text(title, style="bold underline")


def label(name: str, width: int = 0) -> Text:
    """A dim field name, padded to `width`; its value's wrapped lines hang under it."""
    return hang_after(Text(f"{name}:".ljust(width) + " ", style="dim"))


def field_line(name: str, value: Text | str, width: int = 0) -> Text:
    text = label(name, width)
    text.append_text(value if isinstance(value, Text) else safe(value))
    return text


def hanging(prefix: Text | str, body: Text) -> Text:
    """`prefix` then `body`, the body's later lines indented to line up under its first."""
    result = hang_after(Text(prefix) if isinstance(prefix, str) else prefix.copy())
    pad = " " * result.cell_len
    for index, line in enumerate(body.split("\n", allow_blank=True)):
        if index:
            result.append("\n")
            result.append(pad, style=HANG)
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
    if verdict == "unknown":  # a review answer the records do not decide
        return Text("? unknown", style=theme_style("$warning", variables))
    return status_text(verdict, variables)


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
