"""`/` filters a list: a field above it narrows the rows to those holding every word typed.

`Filtering` is mixed into the screen or widget that owns the list; it brings the
actions, `filter_bindings(scope)` their keys (ids `<scope>.filter`, `<scope>.clear`).
Keys typed right after `/`, even in one burst, land in the field in the order typed:
the binding has priority (it runs as the key arrives, before the keys behind it are
handed on), the field takes the focus at once, and it is a `TypedInput`.
"""

from __future__ import annotations

from typing import Any, cast

from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Input

from widgets.typed import TypedInput


def matches(needle: str, *fields: str | None) -> bool:
    """Whether every word of `needle` is in one of `fields` (case-insensitive)."""
    haystack = " ".join(field for field in fields if field).lower()
    return all(word in haystack for word in needle.lower().split())


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
