"""The detail screen of a row, by the kind of its source (`store.sources.base.Source.kind`):
the module `hud.screens.<kind>` makes it with its `detail(row_id, tab)`."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen


def detail_screen(kind: str, row_id: str, tab: str = "") -> Screen[None]:
    """The screen that renders row `row_id` of a `kind` source (on `tab`, where it has
    tabs). Screens load only when opened."""
    screen: Screen[None] = import_module(f"hud.screens.{kind}").detail(row_id, tab)
    return screen
