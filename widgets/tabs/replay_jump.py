"""The replay's jump to an event: a small dialog that asks for a seq.

It answers through `dismiss`: the seq typed (1..last), or None when cancelled. What
cannot be an event of the log says why under the field, and the dialog stays.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from widgets.keys import KeyHint
from widgets.safe_text import safe
from widgets.typed import TypedInput

DIGITS_MAX = 20
"""Longer input is not read as a number (nor echoed whole in the error)."""


def parse_seq(typed: str, last: int) -> int | Text:
    """The event `typed` names, 1..`last`, or why it names none."""
    text = typed.strip().replace(",", "").replace("_", "")
    if not text:
        return Text(f"Type an event number, 1 to {last:,}.")
    if not (text.isascii() and text.isdigit()) or len(text) > DIGITS_MAX:
        shown = typed.strip()[:DIGITS_MAX]
        said = Text("Not a number: ").append_text(safe(shown))
        return said.append(f". Type an event number, 1 to {last:,}.")
    seq = int(text)
    if seq < 1:
        return Text(f"Events count from 1: type 1 to {last:,}.")
    if seq > last:
        return Text(f"Seq {seq:,} is past the last event: type 1 to {last:,}.")
    return seq


class JumpDialog(ModalScreen[int | None]):
    """Ask which event to show, 1..`last`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="replay_jump.cancel"),
    ]
    DEFAULT_CSS = """
    JumpDialog { align: center middle; }
    JumpDialog > Vertical { width: 56; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1; }
    JumpDialog Static { height: auto; }
    JumpDialog .hint { color: $text-muted; }
    JumpDialog #jump-error { color: $error; text-style: bold; display: none; }
    JumpDialog #jump-error.shown { display: block; }
    """
    AUTO_FOCUS = "#jump-seq"

    def __init__(self, last: int) -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Jump to event (seq 1 to {self.last:,})", style="bold"))
            yield TypedInput(placeholder="seq", id="jump-seq")
            yield Static(id="jump-error")
            yield KeyHint(("submit", "jump"), ("replay_jump.cancel", "cancel"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        found = parse_seq(event.value, self.last)
        if isinstance(found, int):
            self.dismiss(found)
            return
        error = self.query_one("#jump-error", Static)
        error.update(found)
        error.add_class("shown")

    def action_cancel(self) -> None:
        self.dismiss(None)
