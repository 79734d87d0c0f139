"""The snapshot grid: every screen at 80x24 (reviewers over SSH, a phone) and at 200x50
(a wide terminal), in the default theme, over missions and requests with long ids (cut in
the middle at 80 columns, whole at 200).

Deterministic: a fixed clock and state directory path, no watcher, TZ and colours
pinned, no toasts. Update with `pytest --snapshot-update` and look at the SVGs before
committing them.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.help import HelpScreen
from hud.screens.history import HistoryScreen
from hud.screens.metrics import MetricsScreen
from hud.screens.mission import MissionScreen
from hud.screens.problems import ProblemsScreen
from tests.factory import T0, mission, resume, three_missions
from tests.hud.conftest import until
from tests.snapshots.test_hud_snapshots import TABS, reading_logs

ROOT = Path("/tmp/hud-snapshot-grid")
NOW = T0 + timedelta(minutes=5)
SIZES = [(80, 24), (200, 50)]
MISSIONS = 6
TARGETS = ["overview", "approvals", "request", *TABS, "history", "problems", "metrics", "help"]


@pytest.fixture
def root() -> Iterator[Path]:
    """The three missions, a broken one, and two with long ids waiting on requests."""
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    three_missions(ROOT)
    resume(ROOT, "gamma").evidence("s2")
    mission(ROOT, "delta", "A mission with a broken plan")
    (ROOT / "missions/delta/plan/v2.json").write_text('{"schema": 1, "version": ')
    for number in (2, 3):
        built = mission(ROOT, f"deploy-gateway-eu-west-{number}", "Cut over to gateway v2")
        built.step("s1", "waiting_for_approval")
        built.request("deploy-gateway-eu-west-staging", tool="k8s.apply", summary="Stage it")
    yield ROOT
    shutil.rmtree(ROOT, ignore_errors=True)


def opening(target: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, HudApp)
        await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == MISSIONS)
        screens: dict[str, tuple[Callable[[], object], type]] = {
            "approvals": (lambda: app.action_approvals(), ApprovalsScreen),
            "request": (
                lambda: app.open_request(
                    "deploy-gateway-eu-west-2", "deploy-gateway-eu-west-staging"
                ),
                RequestScreen,
            ),
            "problems": (lambda: app.action_problems(), ProblemsScreen),
            "metrics": (lambda: app.action_metrics(), MetricsScreen),
            "help": (lambda: app.action_help(), HelpScreen),
        }
        if target in TABS or target == "history":
            tab = "intent" if target == "history" else target
            app.open_mission("gamma", tab)
            await until(
                pilot,
                lambda: (
                    isinstance(app.screen, MissionScreen)
                    and any(tabs.active == tab for tabs in app.screen.query(TabbedContent))
                ),
            )
            if target == "history":
                await pilot.press("h")
                await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        elif target in screens:
            action, kind = screens[target]
            action()
            await until(pilot, lambda: isinstance(app.screen, kind))
            if target == "metrics":
                await until(pilot, lambda: getattr(app.screen, "report", None) is not None)
        await pilot.pause(0.2)
        await until(pilot, lambda: not reading_logs(app))
        await pilot.pause(0.1)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("target", TARGETS)
def test_grid(snap_compare: Any, root: Path, target: str, size: tuple[int, int]) -> None:
    app = HudApp(root, clock=lambda: NOW, live=False)
    assert snap_compare(app, terminal_size=size, run_before=opening(target))
