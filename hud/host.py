"""What the screens and the palette need of the app (`hud.app.HudApp`), as a protocol:
they name this, never the app, so the app imports every screen without a circle.
`HudApp` is checked against it (mypy, in hud.app).

The app's index of the state directory is a typed state it holds from construction
(`Index`): `Starting` while its scan worker loads the store (nothing indexed, nothing
to write with), then `Indexed` once the scan has handed over its workspace, which the
scan then fills. What needs the index matches on it; nothing tests a flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio
    from datetime import datetime
    from pathlib import Path

    from textual.screen import Screen
    from textual.signal import Signal

    from hud.acts.session import HumanWriter, Session
    from hud.approvals import ApprovalFeed
    from hud.view_settings import View
    from store.format.row import MissionSummary
    from store.index.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Starting:
    """The store is loading in the scan worker: no row is indexed and no writer exists
    (the first paint does not wait for the store)."""


@dataclass(frozen=True, slots=True)
class Indexed:
    """The scan's workspace, handed over before the scan reads a file and filled as it
    reads (complete once `Hud.scanned` is set), and the approvals feed over it."""

    workspace: Workspace
    approvals: ApprovalFeed


Index = Starting | Indexed
"""The app's index: `Starting`, then `Indexed` for as long as the app runs."""


class Hud(Protocol):
    """The HUD app as its screens see it (its Textual side is `Screen.app`)."""

    root: Path
    index: Index
    writer: HumanWriter | None
    read_only: bool
    scanned: asyncio.Event
    changed: Signal[set[str] | None]
    summaries: dict[str, MissionSummary]
    ticking: bool
    view: View

    @property
    def workspace(self) -> Workspace:
        """The index's workspace: only for screens opened once `Indexed` (the app's
        actions and `open_mission` open nothing before)."""
        ...

    @property
    def approvals(self) -> ApprovalFeed:
        """The index's approvals feed (as `workspace`)."""
        ...

    @property
    def can_decide(self) -> bool: ...

    @property
    def watch_health(self) -> str | None: ...

    @property
    def unverified_logs(self) -> int: ...

    @property
    def keeps_cache(self) -> bool:
        """Whether what it verifies goes into the user's cache (never read-only or served)."""
        ...

    def now(self) -> datetime: ...

    def still_reading(self) -> str: ...

    def open_mission(self, mission_id: str, tab: str = "") -> None: ...

    def open_request(self, mission_id: str, request_id: str) -> None: ...

    def remember(self, **changes: str | bool) -> None: ...

    def save_folder(self) -> Path | str: ...

    def session_for(self, screen: Screen[Any]) -> Session: ...

    def choose_theme(self, name: str) -> None: ...

    def action_help(self) -> None: ...

    def action_problems(self) -> None: ...

    def action_approvals(self) -> None: ...

    def action_metrics(self) -> None: ...

    def action_next_theme(self) -> None: ...
