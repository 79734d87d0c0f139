"""Keys named in the HUD's own text, as they are bound now.

Text such as `h: all` or `can be rejected (n)` takes its keys from the screen's
`active_bindings`, the same source as the footer and the help: a key remapped under
`[keys]` in hud.toml shows as remapped, and an action hidden by `check_action` (a write
in read-only mode, say) is not named at all.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.dom import DOMNode, NoScreen
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static


def keys_of(node: DOMNode, binding_id: str) -> list[str]:
    """Every key that runs binding `binding_id` on `node`'s screen now, as the footer
    shows it; empty when the binding is hidden or not active there. A binding of
    Textual's own without an id (an Input's enter) is named by its action (`submit`)."""
    try:
        screen = node.screen
    except NoScreen:  # not mounted
        return []
    return [
        node.app.get_key_display(active.binding)
        for active in screen.active_bindings.values()
        if (active.binding.id or active.binding.action) == binding_id
    ]


def key_of(node: DOMNode, binding_id: str) -> str | None:
    """The first key of `keys_of`, or None."""
    keys = keys_of(node, binding_id)
    return keys[0] if keys else None


def hint(node: DOMNode, *actions: tuple[str, str], style: str = "dim") -> Text:
    """`h: all · m: mission` for each (binding id, what it does) whose binding is
    active on `node`'s screen; empty when none is."""
    shown = [f"{'/'.join(keys)}: {what}" for name, what in actions if (keys := keys_of(node, name))]
    return Text(" · ".join(shown), style=style)


class KeyHints:
    """A widget whose text names keys: `keys_changed` runs whenever its screen's bindings
    change (focus moved, a keymap applied), since only the bindings of the focus chain
    are active."""

    def on_mount(self) -> None:
        assert isinstance(self, Widget)
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_updated)

    def _bindings_updated(self, _screen: Screen[Any]) -> None:
        self.keys_changed()

    def keys_changed(self) -> None:
        """Render again what names keys."""


class KeyHint(KeyHints, Static):
    """A line such as `enter: continue · esc: cancel`, for (binding id, what it does)
    pairs; it follows the keymap and the focus (see `hint`)."""

    def __init__(self, *actions: tuple[str, str], classes: str = "hint") -> None:
        super().__init__(classes=classes)
        self.actions = actions

    def on_mount(self) -> None:
        self.keys_changed()

    def keys_changed(self) -> None:
        self.update(hint(self, *self.actions, style=""))
