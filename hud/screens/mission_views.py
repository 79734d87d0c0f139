"""The mission screen's tabs: for each, a widget and how to feed it from a MissionState.

Views here do the reading (they may call the store); widgets only render what they are
given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.widget import Widget

from store.mission import MissionState

if TYPE_CHECKING:
    from hud.screens.mission import MissionScreen


@dataclass(frozen=True)
class Tab:
    id: str
    title: str
    widget: Callable[[], Widget]
    update: Callable[[MissionScreen, MissionState], None]


TABS: list[Tab] = []
