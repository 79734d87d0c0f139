"""The detail screen of a row, by the kind of its source (`store.sources.Source.detail`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen


def detail_screen(kind: str, row_id: str, tab: str = "") -> Screen[None] | None:
    """The screen that renders row `row_id` of a `kind` source (a native mission's on
    `tab`); None for a kind no screen renders. Screens load only when opened."""
    if kind == "native":
        from hud.screens.mission import MissionScreen

        return MissionScreen(row_id, tab)
    if kind == "small":
        from hud.screens.small import SmallScreen

        return SmallScreen(row_id)
    if kind == "loopexec":
        from hud.screens.loopexec import LoopexecScreen

        return LoopexecScreen(row_id)
    if kind == "loopx":
        from hud.screens.loopx import LoopxScreen

        return LoopxScreen(row_id)
    return None
