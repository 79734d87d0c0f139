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
from hud.metric_rows import metric_rows
from hud.screens import metrics as metrics_screen
from hud.screens.metrics import MetricsScreen
from store.analysis.metrics import directory_metrics
from store.index.workspace import Workspace
from tests.factory import resume
from tests.hud.conftest import until
from widgets.metrics import Bar, MetricsPanel, bar_plot, value_lines

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


def test_a_bar_plot_puts_the_highest_rate_first_and_scales_bars_by_rate() -> None:
    bars = [Bar("a", 1, 4), Bar("b", 2, 3), Bar("c", 0, 9), Bar("d", 1, 1)]
    lines = bar_plot("title", bars, width=9, most=2).plain.splitlines()
    # 1 of 1 is the whole width; 2 of 3 two thirds of it (by count it was half as long)
    assert lines == ["title", "  d █████████ 1 of 1", "  b ██████    2 of 3", "  and 1 more"]
    assert bar_plot("title", [Bar("c", 0, 9)]).plain == "title\n  none"


def test_a_bar_plot_cuts_a_long_label_in_the_middle() -> None:
    label = "quarterly-cleanup-of-the-old-buckets-2"
    line = bar_plot("title", [Bar(label, 1, 1)], width=4).plain.splitlines()[1]
    assert line.split()[0] == "quarterly-cl…d-buckets-2"


@pytest.mark.parametrize(
    ("value", "lines"),
    [
        ("7 of 7 (100%)", ["7 of 7 (100%)"]),
        (
            "median 58s, p90 1m03s, max 2m10s (5); 1 not recovered",
            ["median 58s", "p90 1m03s", "max 2m10s (5)", "1 not recovered"],
        ),
        (
            "28 of 155 calls (18%): fetch.run 4 of 33, label.run 4 of 27",
            ["28 of 155 calls (18%)", "fetch.run 4 of 33", "label.run 4 of 27"],
        ),
    ],
)
def test_a_value_too_wide_for_its_room_is_one_part_per_line(value: str, lines: list[str]) -> None:
    assert value_lines(value, 24) == lines
    assert value_lines(value, 80) == [value]


async def test_metrics_at_80_columns_cut_no_value(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    """Every part of every value is on the screen at 80x24 (scrolled to), tool split kept."""
    alpha = resume(state_dir, "alpha")
    for tool in ("payments.refund_batch", "cluster.run", "fetch.run"):
        alpha.event("attempt", step="s1", attempt=1, phase="finished", tool=tool, outcome="error")
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_metrics(pilot, app)
        panel = screen.query_one(MetricsPanel)
        assert any("payments.refund_batch 1 of 1" in line.value for line in panel.shown)
        for line in panel.shown:
            row = panel.rows[line.name]
            text = str(row.value.render())
            width = row.value.size.width
            needed = sum(-(-len(shown) // width) for shown in text.splitlines())
            shown_lines = min(row.size.height, row.value.size.height)
            assert shown_lines >= needed, (line.name, text)  # nothing cut off
            for part in value_lines(line.value, 0):
                assert part in text.replace("\n", " "), (line.name, part, text)
