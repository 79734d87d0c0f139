"""Pilot tests of loopx goals in the HUD: a row per goal, the goal screen, live updates
from the runtime root outside the state directory."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from hud.app import HudApp
from hud.screens.loopx import LoopxScreen
from tests.hud.conftest import until
from tests.loopx_support import LOOPX_NOW, place_loopx
from widgets.header import HudHeader
from widgets.loopx import TodoTable
from widgets.mission_table import MissionTable

GOAL = "loopx:demo-goal"


def summary(app: HudApp) -> str:
    """The goal screen's summary, "" until it shows."""
    found = app.screen.query("#goal-summary") if isinstance(app.screen, LoopxScreen) else []
    return str(found[0].render()) if found and isinstance(found[0], Static) else ""


async def test_a_goal_row_and_its_screen_follow_the_runtime_root(tmp_path: Path) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    app = HudApp(project, clock=lambda: LOOPX_NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: list(app.screen.query_one(MissionTable).order) == [GOAL])
        assert app.summaries[GOAL].status.value == "needs_you"
        header = str(app.screen.query_one(HudHeader).render()).rstrip()
        assert " + " in header and header.endswith("/runtime")  # the root followed, shown
        app.open_mission(GOAL)
        await until(pilot, lambda: "loopx goal" in summary(app))
        text = summary(app)
        assert "NEEDS YOU blocks agent-a: Approve the cutover window?" in text
        assert str(project.parent / "runtime") in text and "log not chained" in text
        assert "agent-a holds todo_ceb73d27502e" in text and "verified" not in text
        assert "user 2 open  ·  agent 1 done, 2 open (1 claimed)" in text
        assert app.screen.query_one(TodoTable).row_count == 5
        log = project.parent / "runtime" / "goals" / "demo-goal" / "rollout-event-log.jsonl"
        claim = {"schema_version": "loopx_rollout_event_v0", "event_kind": "todo_claim"}
        with log.open("a") as handle:
            for agent in ("agent-a", "agent-b"):
                line = {**claim, "todo_id": "todo_ceb73d27502e", "agent_id": agent}
                handle.write(json.dumps(line) + "\n")
        await until(pilot, lambda: "agent-a → agent-b" in summary(app), timeout=10)
