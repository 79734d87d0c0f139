"""What the screens and the palette need of the app (`hud.app.HudApp`), as a protocol:
they name this, never the app, so the app imports every screen without a circle.
`HudApp` is checked against it (mypy, in hud.app)."""

from __future__ import annotations

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


class Hud(Protocol):
    """The HUD app as its screens see it (its Textual side is `Screen.app`)."""

    root: Path
    workspace: Workspace
    adopted: bool
    writer: HumanWriter | None
    read_only: bool
    scanned: asyncio.Event
    changed: Signal[set[str] | None]
    summaries: dict[str, MissionSummary]
    ticking: bool
    view: View
    approvals: ApprovalFeed

    @property
    def can_decide(self) -> bool: ...

    @property
    def watch_health(self) -> str | None: ...

    @property
    def unverified_logs(self) -> int: ...

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
