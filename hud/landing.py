"""`hud DIR --open MISSION/REQUEST`: that request's screen, once the first scan is done.

A notification's link lands here (`hud web` starts the session's HUD with `--open`).
Ids that name no request of this directory are said in a toast, and the HUD stays at
its overview.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from textual.app import App

    from hud.host import Hud
    from hud.opening import Target


async def open_when_scanned(app: App[Any], target: Target) -> None:
    """Open `target`'s request screen over the approvals queue once the scan is done."""
    hud = cast("Hud", app)
    await hud.scanned.wait()
    mission_id, request_id = target
    mission = hud.workspace.missions.get(mission_id)
    if mission is None or request_id not in mission.requests:
        app.notify(f"no request {mission_id}/{request_id} here", severity="warning")
        return
    hud.action_approvals()
    hud.open_request(mission_id, request_id)
