"""Snapshots of a loopx project at 80x24: the goal's overview row and its screen.

The fixture (made by loopx 0.5.1) is placed at a fixed path, the clock is fixed and
the watcher is off.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from hud.app import HudApp
from hud.screens.loopx import LoopxScreen
from tests.hud.conftest import until
from tests.loopx_support import LOOPX_NOW, place_loopx

SIZE = (80, 24)

BASE = Path("/tmp/hud-snapshots/loopx")


def app_on_fixture() -> HudApp:
    shutil.rmtree(BASE, ignore_errors=True)
    return HudApp(place_loopx("v0.5.1", BASE), clock=lambda: LOOPX_NOW, live=False)


def opening(app: HudApp, goal: str = "") -> Callable[[Pilot[None]], Awaitable[None]]:
    """Wait for the scan, open `goal` if given, let the screen settle. (The app's fold
    worker runs for as long as the app does: no waiting for every worker to end.)"""

    async def run_before(pilot: Pilot[None]) -> None:
        await until(pilot, lambda: app.scanned.is_set() and bool(app.summaries))
        if goal:
            app.open_mission(goal)
            await until(pilot, lambda: isinstance(app.screen, LoopxScreen))
        await pilot.pause(0.3)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.2)

    return run_before


def test_loopx_overview(snap_compare: Callable[..., bool]) -> None:
    app = app_on_fixture()
    assert snap_compare(app, terminal_size=SIZE, run_before=opening(app))


def test_loopx_goal(snap_compare: Callable[..., bool]) -> None:
    app = app_on_fixture()
    assert snap_compare(app, terminal_size=SIZE, run_before=opening(app, "loopx:demo-goal"))
