"""The HUD's footer: Textual's `Footer`, fitted to its width by priority.

Textual's footer shows every shown binding in a row and cuts what does not fit, so at
80 columns the last keys (`? Help`, `q Quit`, app-wide keys) vanish. This one keeps
Textual's keys and styles but drops the keys of lowest priority first: `?` and `q`
(`ALWAYS`) are kept at every width, then the keys the screen names in `FOOTER_FIRST`
(binding ids, most wanted first), then the others in footer order. Below `WIDE` columns
it uses Textual's compact style and leaves out the command palette's key (ctrl+p still
opens it; help lists it). Kept keys stay in footer order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.events import Resize
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

WIDE = 120
"""From this many columns the footer is Textual's roomy one, with the palette key."""
ALWAYS = ("help", "quit")
"""Binding ids shown at every width."""


def key_width(key: FooterKey, *, compact: bool) -> int:
    """The cells a footer key takes (Textual's footer styles: `key description`)."""
    if not key.description:
        return cell_len(key.key_display) + 1
    if compact:  # key, a space, the description, a margin
        return cell_len(key.key_display) + 1 + cell_len(key.description) + 1
    return cell_len(key.key_display) + 2 + cell_len(key.description) + 1


def fitted(widths: Sequence[int], ranks: Sequence[int], room: int) -> list[int]:
    """The indexes of the items kept in `room` cells: by rank (lowest first), then in
    order; an item of rank 0 is kept even when it does not fit."""
    kept: list[int] = []
    used = 0
    for index in sorted(range(len(widths)), key=lambda i: (ranks[i], i)):
        if ranks[index] == 0 or used + widths[index] <= room:
            kept.append(index)
            used += widths[index]
    return sorted(kept)


class HudFooter(Footer):
    """A footer that fits its width (see the module)."""

    room = reactive(0, recompose=True)
    """The width the keys are fitted to."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False, compact=True)
        self._composed: tuple[object, ...] | None = None
        self._recomposing = False

    def shown(self, screen: Screen[object]) -> tuple[object, ...]:
        """What the keys would show: each shown binding's key, look, words and state."""
        display = screen.app.get_key_display
        return tuple(
            (key, display(binding), binding.description, binding.action, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Recompose (once, after the refresh) only when the keys would show otherwise:
        Textual signals every focus change and binding refresh, and a recompose styles
        every key anew."""
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._recomposing or self.shown(screen) == self._composed:
            return
        self._recomposing = True
        self.call_after_refresh(self._recompose)

    async def _recompose(self) -> None:
        self._recomposing = False
        if self.is_attached and self.shown(self.screen) != self._composed:  # not a passing state
            await self.recompose()

    def on_resize(self, event: Resize) -> None:
        wide = event.size.width >= WIDE
        self.compact = not wide
        self.show_command_palette = wide
        self.room = event.size.width

    def binding_ids(self) -> dict[str, str]:
        """The binding id (or action) of each key shown on the screen now."""
        return {
            key: active.binding.id or active.binding.action
            for key, active in self.screen.active_bindings.items()
        }

    def rank(self, binding_id: str, first: Sequence[str]) -> int:
        if binding_id in ALWAYS:
            return 0
        if binding_id in first:
            return 1 + first.index(binding_id)
        return 1 + len(first)

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed = self.shown(self.screen)
        items = list(super().compose())
        if not self.room:
            yield from items
            return
        yield from self.fit(items)

    def fit(self, items: Sequence[Widget]) -> Iterable[Widget]:
        ids = self.binding_ids()
        first: Sequence[str] = getattr(self.screen, "FOOTER_FIRST", ())
        palette = [i for i in items if isinstance(i, FooterKey) and i.has_class("-command-palette")]
        keys = [i for i in items if isinstance(i, FooterKey) and i not in palette]
        others = [i for i in items if not isinstance(i, FooterKey)]  # groups: kept as they are
        # the palette key is docked right, with a border and a padding of its own
        room = self.room - sum(key_width(i, compact=False) + 2 for i in palette)
        widths = [key_width(k, compact=self.compact) for k in keys]
        ranks = [self.rank(ids.get(k.key, k.action), first) for k in keys]
        kept = fitted(widths, ranks, room)
        yield from [keys[i] for i in kept]
        yield from others
        yield from palette
