"""The detail screen of a row, by the kind of its source (`store.sources.base.Source.kind`):
the one table that names every source's screen. Each entry imports its screen only when
a row is opened, so the app starts without them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from textual.screen import Screen

DetailScreen = Callable[[str, str], "Screen[None]"]
"""Makes the screen of row `row_id` on `tab` (a tab id; ignored by screens without tabs)."""


def _mission(row_id: str, tab: str) -> Screen[None]:
    from hud.screens.mission import MissionScreen

    return MissionScreen(row_id, tab)


def _small(row_id: str, tab: str) -> Screen[None]:
    from hud.screens.small import SmallScreen

    return SmallScreen(row_id)


def _loopexec(row_id: str, tab: str) -> Screen[None]:
    from hud.screens.loopexec import LoopexecScreen

    return LoopexecScreen(row_id)


def _loopx(row_id: str, tab: str) -> Screen[None]:
    from hud.screens.loopx import LoopxScreen

    return LoopxScreen(row_id)


DETAIL_SCREENS: Final[Mapping[str, DetailScreen]] = {
    "mission": _mission,
    "small": _small,
    "loopexec": _loopexec,
    "loopx": _loopx,
}
"""Source kind -> its detail screen (every kind a source of `store.sources` has)."""


def detail_screen(kind: str, row_id: str, tab: str = "") -> Screen[None]:
    """The screen that renders row `row_id` of a `kind` source (on `tab`, where it has
    tabs)."""
    return DETAIL_SCREENS[kind](row_id, tab)
