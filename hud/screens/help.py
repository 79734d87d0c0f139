"""Help (`?`): every key that works on the screen underneath, with what it does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from hud.screens.base import mounted_child
from widgets.filter import Filtering
from widgets.keyed_table import RowCursorTable
from widgets.keys import hint


@dataclass(frozen=True)
class KeyGroup:
    """One binding as help lists it: every key bound to it (one Binding per key)."""

    node: DOMNode
    bindings: tuple[Binding, ...]

    @property
    def binding(self) -> Binding:
        return self.bindings[0]


def key_groups(screen: Screen[object]) -> list[KeyGroup]:
    """Every active binding of `screen`, one group per binding with all its keys (`home
    g`), as the live keymap binds them. Hidden actions (`check_action`) are left out, as
    are Textual's system keys.

    The screen's and the app's own keys come first, then those of the focused widget.
    """
    grouped: dict[tuple[int, int, str | None, str], tuple[DOMNode, list[Binding]]] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        if binding.system:
            continue
        rank = 0 if active.node is screen else 1 if active.node is screen.app else 2
        group = (rank, id(active.node), binding.id, binding.action)
        grouped.setdefault(group, (active.node, []))[1].append(binding)
    ordered = sorted(grouped.items(), key=lambda item: item[0][0])
    return [KeyGroup(node, tuple(bindings)) for _, (node, bindings) in ordered]


def closed_filter_groups(screen: Screen[object]) -> list[KeyGroup]:
    """The `clear_filter` keys of the filters on `screen` that are closed: hidden until
    `/` opens one (they would not run now), yet what they will do is worth saying."""
    focused = screen.focused
    chain = [screen, *(reversed(focused.ancestors_with_self) if focused else ())]
    groups = []
    for node in dict.fromkeys(chain):
        if not isinstance(node, Filtering) or node.filtering or not isinstance(node, DOMNode):
            continue
        clear = [
            binding
            for bindings in node._bindings.key_to_bindings.values()
            for binding in bindings
            if binding.action == "clear_filter"
        ]
        if clear:
            groups.append(KeyGroup(node, tuple(clear)))
    return groups


def key_rows(screen: Screen[object]) -> list[tuple[Text, Text, Text]]:
    """(keys, description, binding id) of each `key_groups` group, then the closed
    filters' clearing keys (`closed_filter_groups`)."""
    display = screen.app.get_key_display

    def row(group: KeyGroup, does: str) -> tuple[Text, Text, Text]:
        keys = " ".join(dict.fromkeys(display(b) for b in group.bindings))
        return Text(keys, style="bold"), Text(does), Text(group.binding.id or "", style="dim")

    rows = [row(g, g.binding.description or g.binding.action) for g in key_groups(screen)]
    closed = closed_filter_groups(screen)
    return rows + [row(group, "Clear the filter") for group in closed]


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
            table = RowCursorTable(id="keys")
            table.add_columns(Text("Key"), Text("Does"), Text("Binding id (hud.toml [keys])"))
            table.add_rows(key_rows(self.under))
            yield table
            yield Static(id="help-hint")

    def on_mount(self) -> None:
        self.bindings_updated_signal.subscribe(self, lambda _: self._hint())
        self._hint()

    def _hint(self) -> None:
        hint_text = hint(self, ("help.close", "close"))
        hint_text.append(" · the keys above work once this is closed", style="dim")
        shown = mounted_child(self, "#help-hint", Static)
        if shown is not None:
            shown.update(hint_text)
