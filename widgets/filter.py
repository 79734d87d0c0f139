"""`/` filters a list: a field above it narrows the rows to those holding every word typed.

`Filtering` is mixed into the screen or widget that owns the list; it brings the
actions, `filter_bindings(scope)` their keys (ids `<scope>.filter`, `<scope>.clear`).
Keys typed right after `/`, even in one burst, land in the field in the order typed:
the binding has priority (it runs as the key arrives, before the keys behind it are
handed on), the field takes the focus at once, and it is a `TypedInput`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, cast

from textual import events
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Input, TextArea


def matches(needle: str, *fields: str | None) -> bool:
    """Whether every word of `needle` is in one of `fields` (case-insensitive)."""
    haystack = " ".join(field for field in fields if field).lower()
    return all(word in haystack for word in needle.lower().split())


class KeysInOrder:
    """A text field on which every key acts in the order typed.

    Textual runs a key's bindings once the key has bubbled back up to the app, while a
    text field inserts a character as soon as it reaches it: in a burst (a fast typist
    over ssh, a paste, `tmux send-keys`) `abc ctrl+u def` would clear `def` as well,
    `down end text` would type the text before the cursor moves, and `title tab text`
    would type both into the first field. Here a key that the field does not type runs
    its binding (the field's own, else its screen's or the app's) as it reaches the field,
    and keys that reach it once the focus has moved on go on to the focused widget.

    A plain mixin, put first: Textual takes CSS from the first DOMNode base only.
    """

    def types_itself(self, event: events.Key) -> bool:
        """Whether the field handles `event` without a binding (printable characters)."""
        return event.is_printable

    async def on_key(self, event: events.Key) -> None:
        field = cast(Widget, self)
        focused = field.screen.focused
        if focused is not None and focused is not field:
            # a key before this one moved the focus on (tab): the keys sent behind it were
            # handed to this field already, and belong to the field focused now
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        active = field.screen.active_bindings.get(event.key)
        if active is None or not active.enabled:
            return
        if active.node is field or not self.types_itself(event):
            event.stop()
            event.prevent_default()
            await field.app.run_action(active.binding.action, active.node)


def after_typed(node: Widget, callback: Callable[[], object]) -> None:
    """Run `callback` once the text fields of `node`'s screen have handled the keys typed
    before now.

    A priority binding (ctrl+s in an editor) runs as its key reaches the app, while the
    keys typed before it may still wait at a field, or be on their way from one field to
    the next (`KeysInOrder`): acting at once would drop them.
    """
    screen = node.screen

    async def when_typed() -> None:
        for _ in range(2):  # keys handed on from field to field settle within two rounds
            for field in screen.query("*"):
                if isinstance(field, KeysInOrder):
                    await _round_trip(field)
        callback()

    node.run_worker(when_typed(), group="typed")


async def _round_trip(widget: Widget) -> None:
    """Wait until `widget` has handled the messages it holds now (at most a second)."""
    done = asyncio.Event()
    if widget.call_later(done.set):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout=1.0)


class TypedInput(KeysInOrder, Input):
    """An Input whose keys act in the order typed."""


class TypedTextArea(KeysInOrder, TextArea):
    """A TextArea whose keys act in the order typed (enter, and tab when it indents,
    are its own)."""

    def types_itself(self, event: events.Key) -> bool:
        own = {"enter", "tab"} if self.tab_behavior == "indent" else {"enter"}
        return event.is_printable or event.key in own


class FilterField(TypedInput):
    """The one-line filter above a list; hidden until `/`."""

    DEFAULT_CSS = "FilterField { display: none; }"


def filter_bindings(scope: str) -> list[BindingType]:
    """`/` opens the filter (with priority: see the module), escape clears and closes it."""
    return [
        Binding("slash", "filter", "Filter", id=f"{scope}.filter", priority=True),
        Binding("escape", "clear_filter", "Clear filter", show=False, id=f"{scope}.clear"),
    ]


class Filtering:
    """Mixin for a screen or widget with a `FilterField` above its list: `filter_changed`
    runs whenever `needle` changes, `filter_target` takes the focus back.

    A plain mixin, not a DOMNode: Textual takes CSS from the first DOMNode base only."""

    filtering = False
    """Whether the field is shown (from `/` until escape)."""

    @property
    def filter_field(self) -> FilterField:
        return cast(DOMNode, self).query_one(FilterField)

    @property
    def needle(self) -> str:
        """The words typed in the field ('' while it is closed)."""
        return self.filter_field.value.strip() if self.filtering else ""

    def filter_target(self) -> Widget:
        """The list the focus returns to."""
        raise NotImplementedError

    def filter_changed(self) -> None:
        """Show the rows that match `needle`."""
        raise NotImplementedError

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return self.filtering
        owner: Any = super()
        allowed: bool | None = owner.check_action(action, parameters)
        return allowed

    def _show_field(self, shown: bool) -> None:
        self.filtering = shown
        self.filter_field.display = shown
        cast(DOMNode, self).refresh_bindings()  # escape clears, or goes back

    def action_filter(self) -> None:
        self._show_field(True)
        field = self.filter_field
        field.screen.set_focus(field)  # now, not after a refresh: the next key goes there

    def action_clear_filter(self) -> None:
        field = self.filter_field
        field.value = ""  # the field says so (Input.Changed): filter_changed follows
        self._show_field(False)
        field.screen.set_focus(self.filter_target())

    def on_input_changed(self, event: Input.Changed) -> None:
        if isinstance(event.input, FilterField):
            event.stop()
            self.filter_changed()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if isinstance(event.input, FilterField):
            event.stop()
            event.input.screen.set_focus(self.filter_target())
