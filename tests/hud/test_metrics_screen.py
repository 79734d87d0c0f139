"""Pilot tests of the Metrics screen: what `hud metrics` counts, with a sparkline each."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.widgets import Sparkline, Static

from hud.app import HudApp
from hud.commands.metrics import metric_rows
from hud.screens import metrics as metrics_screen
from hud.screens.metrics import MetricsScreen
from store.metrics import directory_metrics
from store.workspace import Workspace
from tests.factory import resume
from tests.hud.conftest import until
from widgets.metrics import Bar, MetricsPanel, bar_plot

SLOW = 15.0


def counted(root: Path, now: datetime, window: timedelta, mission: str | None = None) -> list[str]:
    """`name  value` per metric as `hud metrics` counts them (a workspace of its own)."""
    workspace = Workspace(root, clock=lambda: now)
    workspace.scan()
    report = directory_metrics(workspace, now - window, now)
    metrics = report.missions[mission] if mission else report.total
    return [f"{name}  {value}" for name, _, value in metric_rows(metrics)]


async def open_metrics(pilot: Any, app: HudApp) -> MetricsScreen:
    await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 3, SLOW)
    await pilot.press("M")
    await until(pilot, lambda: isinstance(app.screen, MetricsScreen), SLOW)
    screen = app.screen
    assert isinstance(screen, MetricsScreen)
    await until(pilot, lambda: screen.report is not None, SLOW)
    return screen


def shown(screen: MetricsScreen) -> list[str]:
    return screen.query_one(MetricsPanel).shown_text.splitlines()


def title(screen: MetricsScreen) -> str:
    return str(screen.query_one("#metrics-title", Static).render())


async def test_metrics_screen_shows_what_hud_metrics_counts(
    state_dir: Path, make_app: Callable[..., HudApp], now: datetime
) -> None:
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_metrics(pilot, app)
        assert shown(screen) == counted(state_dir, now, timedelta(hours=24))
        assert "human escalation  1 of" in "\n".join(shown(screen))  # beta waits on r1
        assert "all 3 missions" in title(screen) and "last 24h" in title(screen)
        sparks = screen.query(Sparkline)
        assert len(sparks) == 12 and all(len(s.data or ()) == 24 for s in sparks if s.visible)

        plots = screen.query_one("#metric-plots", Static)
        assert plots.display
        lines = str(plots.render()).splitlines()
        assert lines[0] == "human escalation by mission (steps that needed a human)"
        assert lines[1].split()[0] == "beta" and lines[1].endswith("1 of 1")  # the only one

        await pilot.press("m")  # one mission, then the next
        await until(pilot, lambda: "mission alpha" in title(screen))
        assert not plots.display  # one mission: nothing to compare
        assert shown(screen) == counted(state_dir, now, timedelta(hours=24), "alpha")
        await pilot.press("m")
        await until(pilot, lambda: "mission beta" in title(screen))
        await pilot.press("M", "M")  # back past alpha to the whole directory
        await until(pilot, lambda: "all 3 missions" in title(screen))

        await pilot.press("w")
        await until(pilot, lambda: "last 7d" in title(screen))
        assert shown(screen) == counted(state_dir, now, timedelta(days=7))


async def test_the_palette_opens_metrics(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 3, SLOW)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Show metrics")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MetricsScreen), SLOW)


async def test_a_change_is_counted_in_within_the_recount_period(
    state_dir: Path,
    make_app: Callable[..., HudApp],
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(metrics_screen, "RECOUNT_SECONDS", 0.2)
    app = make_app(state_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_metrics(pilot, app)
        before = shown(screen)
        resume(state_dir, "alpha").step("s1", "blocked", reason="needs a human")
        expected = counted(state_dir, now, timedelta(hours=24))
        assert expected != before
        await until(pilot, lambda: shown(screen) == expected, SLOW)


def test_a_bar_plot_puts_the_most_hits_first_and_scales_to_them() -> None:
    bars = [Bar("a", 1, 4), Bar("b", 4, 4), Bar("c", 0, 9), Bar("d", 2, 2)]
    lines = bar_plot("title", bars, width=8, most=2).plain.splitlines()
    assert lines == ["title", "  b ████████ 4 of 4", "  d ████ 2 of 2", "  and 1 more"]
    assert bar_plot("title", [Bar("c", 0, 9)]).plain == "title\n  none"
