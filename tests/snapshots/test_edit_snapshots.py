"""Snapshots of the new-mission form and of the history diff, at 80x24.

Deterministic: a fixed clock, no watcher, the state directory at a fixed path (the
header shows it), TZ and colours pinned, revisions written with fixed users and times.
Update with `pytest --snapshot-update` and look at the SVGs before committing them.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, TextArea

from hud.app import HudApp
from hud.screens.edit import NewMissionScreen
from hud.screens.history import HistoryScreen
from store.writers.human import HumanWriter
from tests.factory import T0, mission
from tests.hud.conftest import until

ROOT = Path("/tmp/hud-snapshot-edit")
NOW = T0 + timedelta(minutes=1)


@pytest.fixture
def root() -> Iterator[Path]:
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    alpha = mission(ROOT, "alpha", "Migrate the database")
    alpha.step("s1", "running")
    (ROOT / "missions/alpha/intent.toml").write_text(
        "schema = 1\n"
        'title = "Migrate the database"\n'
        "# what done looks like\n"
        'objective = "move orders to the new cluster"\n'
        'non_goals = ["schema changes"]\n'
        'created_by = "alice"\n'
        "created_at = 2025-01-01T09:00:00Z\n"
    )
    edit(
        ROOT,
        "missions/alpha/intent.toml",
        "bob",
        datetime(2025, 1, 1, 10, 15, tzinfo=UTC),
        [
            ('"move orders to the new cluster"', '"move orders to the new cluster, zero downtime"'),
            ('["schema changes"]', '["schema changes", "\u202eevil"]'),
        ],
    )
    edit(
        ROOT,
        "missions/alpha/constraints.toml",
        "carol",
        datetime(2025, 1, 1, 11, 0, tzinfo=UTC),
        [
            ("usd = 10.0", "usd = 25.0"),
        ],
    )
    yield ROOT
    shutil.rmtree(ROOT, ignore_errors=True)


def edit(root: Path, relpath: str, user: str, at: datetime, changes: list[tuple[str, str]]) -> None:
    text = (root / relpath).read_text()
    new = text
    for old, replacement in changes:
        new = new.replace(old, replacement)
    writer = HumanWriter(root, user, "local", clock=lambda: at)
    writer.replace(relpath, new, hashlib.sha256(text.encode()).hexdigest())


def app_for(root: Path) -> HudApp:
    return HudApp(root, clock=lambda: NOW, live=False)


async def _form(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, HudApp)
    await until(pilot, lambda: app.scanned.is_set() and "alpha" in app.summaries, 15)
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, NewMissionScreen))
    screen = app.screen
    await pilot.press(*"Rotate", "space", *"keys")
    screen.query_one("#objective", TextArea).load_text("every service key rotated")
    screen.query_one("#non_goals", TextArea).load_text("no new KMS\nno downtime")
    tokens = screen.query_one("#limit-tokens", Input)
    screen.query_one("#form").scroll_end(animate=False)
    tokens.focus()
    await pilot.press(*"1.5")
    await until(pilot, lambda: shown(screen, "#limit-tokens-error"))
    await pilot.pause()  # the marked field is scrolled into view after a refresh


def shown(screen: Screen[Any], selector: str) -> bool:
    return screen.query_one(selector).display


async def _form_top(pilot: Pilot[Any]) -> None:
    await _form(pilot)
    screen = pilot.app.screen
    screen.query_one("#title", Input).focus()
    screen.query_one("#form").scroll_home(animate=False)
    await pilot.pause()


async def _form_error(pilot: Pilot[Any]) -> None:
    """The budget section, a bad limit marked as typed, and the refused submit."""
    await _form(pilot)
    await pilot.press("ctrl+s")  # acts once the keys typed before it are in (a worker)
    await until(pilot, lambda: shown(pilot.app.screen, "#form-error"))
    await pilot.pause()


async def _history(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, HudApp)
    await until(pilot, lambda: app.scanned.is_set() and "alpha" in app.summaries, 15)
    app.open_mission("alpha")
    await pilot.pause()
    await pilot.press("h")
    await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    await until(pilot, lambda: len(screen.revisions) == 4)
    await pilot.pause()


def test_new_mission_form(snap_compare: Any, root: Path) -> None:
    assert snap_compare(app_for(root), terminal_size=(80, 24), run_before=_form_top)


def test_new_mission_form_error(snap_compare: Any, root: Path) -> None:
    assert snap_compare(app_for(root), terminal_size=(80, 24), run_before=_form_error)


def test_history_diff(snap_compare: Any, root: Path) -> None:
    assert snap_compare(app_for(root), terminal_size=(80, 24), run_before=_history)
