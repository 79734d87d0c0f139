"""The HUD's multi-line text field (`widgets.typed`), apart: TextArea loads only where it
is used (the editor), not with every text field."""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea

from widgets.typed import KeysInOrder


class TypedTextArea(KeysInOrder, TextArea):
    """A TextArea whose keys act in the order typed (enter, and tab when it indents,
    are its own)."""

    def types_itself(self, event: events.Key) -> bool:
        own = {"enter", "tab"} if self.tab_behavior == "indent" else {"enter"}
        return event.is_printable or event.key in own
