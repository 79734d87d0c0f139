"""Snapshots of the key screens: overview, each mission tab, problems, help and metrics, in every
theme, at 80x24 (reviewers over SSH) and 160x48.

Deterministic: a fixed clock and state directory path, no watcher, TZ and colours
pinned, no toasts (nothing changes after the scan). Update with
`pytest --snapshot-update` and look at the SVGs before committing them.
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
from hud.replaying import REPLAY_READ
from hud.screens.help import HelpScreen
from hud.screens.mission import MissionScreen
from hud.screens.mission_views import LINES_READ
from hud.screens.problems import ProblemsScreen
from tests.factory import T0, mission, resume, three_missions
from tests.hud.conftest import until
from themes import THEMES

ROOT = Path("/tmp/hud-snapshot-main")
NOW = T0 + timedelta(minutes=5)
SIZES = [(80, 24), (160, 48)]
TABS = ["intent", "plan", "execution", "evidence", "budget", "handoff", "replay", "review"]


@pytest.fixture
def root() -> Iterator[Path]:
    """Four missions: running, waiting on a request, done with a handoff, and broken."""
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    three_missions(ROOT)
    resume(ROOT, "alpha").event(
        "error", message="disk \x1b]0;pwned\x07 nearly full [bold]x[/]", step="s1"
    )
    mission(ROOT, "delta", "A mission with a broken plan")
    (ROOT / "missions/delta/plan/v2.json").write_text('{"schema": 1, "version": ')
    yield ROOT
    shutil.rmtree(ROOT, ignore_errors=True)


def reading_logs(app: HudApp) -> bool:
    """Log lines or a replay frame are being read in a thread."""
    reads = (LINES_READ, REPLAY_READ)
    return any(worker.group in reads and worker.is_running for worker in app.workers)


def opening(target: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Wait for the scan, then open `target`: overview, a tab id, problems, help or metrics."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, HudApp)
        await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 4)
        if target in TABS:
            app.open_mission("gamma", target)
            await until(
                pilot,
                lambda: (
                    isinstance(app.screen, MissionScreen)
                    and any(tabs.active == target for tabs in app.screen.query(TabbedContent))
                ),
            )
        elif target == "problems":
            await pilot.press("exclamation_mark")
            await until(pilot, lambda: isinstance(app.screen, ProblemsScreen))
        elif target == "metrics":
            await pilot.press("M")
            await until(pilot, lambda: getattr(app.screen, "report", None) is not None)
        elif target == "help":
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause(0.2)
        await until(pilot, lambda: not reading_logs(app))  # log lines come from a thread
        await pilot.pause(0.1)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("theme", list(THEMES))
@pytest.mark.parametrize("target", ["overview", *TABS, "problems", "help", "metrics"])
def test_screen(
    snap_compare: Any, root: Path, target: str, theme: str, size: tuple[int, int]
) -> None:
    app = HudApp(root, clock=lambda: NOW, live=False, theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=opening(target))
