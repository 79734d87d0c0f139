"""Snapshots of a SMALL workspace and a loopexec run at 80x24, deterministic.

The fixtures are copied to fixed paths (the header shows the directory), the clock is
fixed and the watcher is off.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from hud.app import HudApp
from tests.hud.conftest import until
from tests.small_support import (
    LOOPEXEC_FIXTURES,
    LOOPEXEC_NOW,
    NO_WORKSPACE,
    SMALL_NOW,
    VALID,
    small_fixture,
)

SIZE = (80, 24)
BASE = Path("/tmp/hud-snapshots")


def fixed_copy(source: Path, name: str) -> Path:
    target = BASE / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def app_on(root: Path, now: datetime) -> HudApp:
    return HudApp(root, clock=lambda: now, live=False)


def busy(app: HudApp) -> bool:
    """Whether a worker is still reading (the fold worker waits for writes for ever)."""
    return any(worker.is_running and worker.group != "fold" for worker in app.workers)


def opening(
    app: HudApp,
    *keys: str,
    mission: str | None = None,
    settled: Callable[[], bool] = lambda: True,
) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Open the app (and `mission`, then press `keys` once it is read and `settled`)."""

    async def run_before(pilot: Pilot[None]) -> None:
        await until(pilot, lambda: app.scanned.is_set() and bool(app.summaries))
        if keys or mission:
            app.open_mission(mission or sorted(app.summaries)[0])
            await pilot.pause()
            await until(pilot, lambda: not busy(app) and settled(), timeout=20)
            await pilot.press(*keys)
        await pilot.pause(0.3)
        await until(pilot, lambda: not busy(app) and settled(), timeout=20)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.2)

    return run_before


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("overview", ()),
        ("intent", ("1",)),
        ("plan", ("2", "down", "down")),
        ("progress", ("3",)),
        ("handoff", ("4",)),
    ],
)
def test_small_live(snap_compare: Callable[..., bool], name: str, keys: tuple[str, ...]) -> None:
    root = fixed_copy(small_fixture(VALID), VALID)
    app = app_on(root, SMALL_NOW)
    assert snap_compare(app, terminal_size=SIZE, run_before=opening(app, *keys))


def test_small_spec_checks(snap_compare: Callable[..., bool]) -> None:
    root = fixed_copy(small_fixture(NO_WORKSPACE), NO_WORKSPACE)
    app = app_on(root, SMALL_NOW)
    assert snap_compare(app, terminal_size=SIZE, run_before=opening(app, "5"))


def test_loopexec_run(snap_compare: Callable[..., bool]) -> None:
    root = fixed_copy(LOOPEXEC_FIXTURES / "runs", "loopexec-runs")
    app = app_on(root, LOOPEXEC_NOW)

    def at_the_end() -> bool:  # the receipts follow the end: taken once they are shown
        tables = app.screen.query(DataTable)
        return (
            bool(tables)
            and tables.first().row_count > 0
            and tables.first().max_scroll_y == tables.first().scroll_y
        )

    run_before = opening(app, mission="loopexec:r-stuck", settled=at_the_end)
    # tall enough for every receipt: no scrollbar, whose thumb a loaded machine can catch
    # mid-way (the rows shown are the same)
    assert snap_compare(app, terminal_size=(80, 40), run_before=run_before)
