"""The dialogs of a decision: a reason, a confirmation, the tool name typed.

Each is a modal screen that answers through `dismiss`: the reason (None: cancelled),
or True/False. They write nothing: the request screen writes once they all agree.
Their fields are `TypedInput`s focused as they mount (AUTO_FOCUS), so keys typed in a
burst right after the key that opened one land in it, in order.
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

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 72; max-width: 100%; height: auto; max-height: 90%;
    border: round $warning; background: $surface; padding: 0 1; }}
{name} Static {{ height: auto; }}
{name} .hint {{ color: $text-muted; }}
{name} .error {{ color: $error; text-style: bold; display: none; }}
{name} .error.shown {{ display: block; }}
"""


class ReasonDialog(ModalScreen[str | None]):
    """Ask for the reason of a decision; a rejection cannot go without one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="decide.cancel"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="ReasonDialog")
    AUTO_FOCUS = "#reason"

    def __init__(self, title: Text, *, required: bool) -> None:
        super().__init__()
        self.title_text = title
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text)
            hint = "reason (required)" if self.required else "reason (optional)"
            yield TypedInput(placeholder=hint, id="reason")
            yield Static(id="reason-error", classes="error")
            yield KeyHint(("submit", "continue"), ("decide.cancel", "cancel"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        reason = event.value.strip()
        if self.required and not reason:
            error = self.query_one("#reason-error", Static)
            error.update("A rejection needs a reason.")
            error.add_class("shown")
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    """A yes or no question (`confirm.yes`, `confirm.no`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")

    def __init__(self, question: Text) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            yield KeyHint(("confirm.yes", "yes"), ("confirm.no", "no"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class TypeToolDialog(ModalScreen[bool]):
    """An irreversible action: the approver types the tool's name to go on."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="typetool.cancel"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="TypeToolDialog")
    AUTO_FOCUS = "#tool-name"

    def __init__(self, question: Text, tool: str) -> None:
        super().__init__()
        self.question = question
        self.tool = tool

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            prompt = Text("This cannot be undone. Type the tool name ")
            prompt.append_text(safe(self.tool))
            prompt.append(" to approve:")
            yield Static(prompt)
            yield TypedInput(placeholder="tool name", id="tool-name")
            yield Static(id="tool-error", classes="error")
            yield KeyHint(("submit", "approve"), ("typetool.cancel", "cancel"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value != self.tool:
            error = self.query_one("#tool-error", Static)
            error.update("That is not the tool name.")
            error.add_class("shown")
            return
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
