"""Help (`?`): every key that works on the screen underneath, with what it does."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static


def key_rows(screen: Screen[object]) -> list[tuple[Text, Text, Text]]:
    """(key, description, binding id) for every active binding of `screen`.

    The screen's and the app's own keys come first, then those of the focused widget.
    """
    rows: list[tuple[int, Text, Text, Text]] = []
    for active in screen.active_bindings.values():
        binding = active.binding
        rank = 0 if active.node is screen else 1 if active.node is screen.app else 2
        rows.append(
            (
                rank,
                Text(screen.app.get_key_display(binding), style="bold"),
                Text(binding.description or binding.action),
                Text(binding.id or "", style="dim"),
            )
        )
    rows.sort(key=lambda row: row[0])
    return [row[1:] for row in rows]


class HelpScreen(ModalScreen[None]):
    """A table of keys; binding ids are shown so `[keys]` in hud.toml can remap them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 76; max-width: 100%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1; }
    HelpScreen DataTable { height: auto; max-height: 18; }
    """

    def __init__(self, under: Screen[object]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Keys on this screen", style="bold"))
            table: DataTable[Text] = DataTable(cursor_type="row", id="keys")
            table.add_columns(Text("Key"), Text("Does"), Text("Binding id (hud.toml [keys])"))
            table.add_rows(key_rows(self.under))
            yield table
            yield Static(Text("ctrl+p: command palette · esc: back · q: quit", style="dim"))
