"""A snapshot of the Replay tab at 80x24 after a jump to a landmark: the position bar
with its landmark ticks on both sides of the event, the landmark line, the frame.

Deterministic: a fixed clock and state directory path, no watcher; taken once the
frame answers the jump and the whole log was read for landmarks.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from hud.app import HudApp
from hud.replaying import REPLAY_READ
from hud.screens.mission import MissionScreen
from tests.factory import T0
from tests.hud.conftest import until
from tests.hud.test_replay_landmarks import marked
from widgets.tabs.replay import ReplayView

ROOT = Path("/tmp/hud-snapshot-replay")


@pytest.fixture
def root() -> Iterator[Path]:
    shutil.rmtree(ROOT, ignore_errors=True)
    yield marked(ROOT)
    shutil.rmtree(ROOT, ignore_errors=True)


async def at_plan_v2(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, HudApp)
    await until(pilot, lambda: app.scanned.is_set() and "marked" in app.summaries, 15)
    app.open_mission("marked", "replay")
    await until(pilot, lambda: isinstance(app.screen, MissionScreen) and app.focused is not None)
    view = app.screen.query_one(ReplayView)

    def settled(seq: int) -> bool:
        reading = any(w.group == REPLAY_READ and w.is_running for w in app.workers)
        marks = view.bearings
        return (
            not reading
            and view.aim is None
            and marks is not None
            and marks.scanned == view.last_seq
            and view.frame is not None
            and view.frame.moment.seq == seq
        )

    await until(pilot, lambda: settled(60), 15)
    await pilot.press("colon", "2", "2", "enter")
    await until(pilot, lambda: settled(22), 15)
    await pilot.press("n")
    await until(pilot, lambda: settled(25), 15)
    await pilot.pause(0.1)


def test_replay_at_a_landmark_80x24(snap_compare: Any, root: Path) -> None:
    app = HudApp(root, clock=lambda: T0 + timedelta(minutes=5), live=False, theme="hud-dark")
    assert snap_compare(app, terminal_size=(80, 24), run_before=at_plan_v2)
