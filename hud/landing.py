"""`hud DIR --open MISSION/REQUEST`: that request's screen, once the first scan is done.

A notification's link lands here (`hud web` starts the session's HUD with `--open`).
Ids that name no request of this directory are said in a toast, and the HUD stays at
its overview.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hud.app import HudApp
    from hud.opening import Target


async def open_when_scanned(app: HudApp, target: Target) -> None:
    """Open `target`'s request screen over the approvals queue once the scan is done."""
    from hud.screens.approvals import ApprovalsScreen

    await app.scanned.wait()
    mission_id, request_id = target
    mission = app.workspace.missions.get(mission_id)
    if mission is None or request_id not in mission.requests:
        app.notify(f"no request {mission_id}/{request_id} here", severity="warning")
        return
    await app.push_screen(ApprovalsScreen())
    app.open_request(mission_id, request_id)
