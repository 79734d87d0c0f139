"""Text fields on which keys act in the order typed, however fast they come.

`TypedInput` and `TypedTextArea` (in `widgets.typed_area`: TextArea loads only with the
editor) are the HUD's text fields; `after_typed` is for a priority binding (ctrl+s) that
must see every key typed before it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import cast

from textual import events
from textual.widget import Widget
from textual.widgets import Input


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
