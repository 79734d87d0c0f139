"""Keys work where help says, and the view is remembered per user: `M` on every screen
(not while typing), Enter on a problem opens its mission where the file shows, problems
list errors first, help says Esc clears a filter, the theme and the approvals "all"
toggle come back at the next start (`hud.view_settings`, the user's config folder)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from hud import view_settings
from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.help import HelpScreen
from hud.screens.metrics import MetricsScreen
from hud.screens.mission import MissionScreen
from hud.screens.problems import ProblemsScreen
from tests.hud.conftest import until
from widgets.filter import FilterField
from widgets.problem_list import ProblemList

SIZE = (80, 24)


def saved() -> dict[str, object]:
    file = view_settings.path()
    return tomllib.loads(file.read_text()) if file.exists() else {}


Running = Callable[..., AbstractAsyncContextManager[tuple[HudApp, Pilot[None]]]]


@pytest.fixture
def running(state_dir: Path, make_app: Callable[..., HudApp]) -> Running:
    """`async with running(**options) as (app, pilot)`: a HUD on `state_dir` at SIZE,
    its first scan done."""

    @asynccontextmanager
    async def run(**options: object) -> AsyncIterator[tuple[HudApp, Pilot[None]]]:
        app = make_app(state_dir, **options)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.scanned.is_set())
            yield app, pilot

    return run


# ---- M everywhere -------------------------------------------------------------------------


async def test_metrics_opens_from_every_screen(running: Running) -> None:
    async with running() as (app, pilot):
        for opener, kind in (
            (lambda: app.open_mission("alpha"), MissionScreen),
            (lambda: app.action_problems(), ProblemsScreen),
            (lambda: app.action_approvals(), ApprovalsScreen),
            (lambda: app.open_request("beta", "r1"), RequestScreen),
        ):
            opener()
            await until(pilot, lambda kind=kind: isinstance(app.screen, kind))
            await pilot.pause()
            under = app.screen
            assert not isinstance(under, MetricsScreen)
            await pilot.press("M")
            await until(pilot, lambda: isinstance(app.screen, MetricsScreen))
            await pilot.press("escape")
            await until(pilot, lambda under=under: app.screen is under)


async def test_m_in_a_filter_is_typed_not_a_key(running: Running) -> None:
    async with running() as (app, pilot):
        await pilot.press("slash", "M")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, MetricsScreen)
        assert app.screen.query_one(FilterField).value == "M"


# ---- problems -----------------------------------------------------------------------------


def with_problems(root: Path) -> None:
    """`alpha` (first by name) has only a warning; `gamma` an error in its evidence."""
    with (root / "missions/alpha/events.jsonl").open("ab") as log:
        log.write(b'{"seq": 9')  # no newline yet: a warning
    with (root / "missions/gamma/evidence.jsonl").open("ab") as log:
        log.write(b"not json\n")


async def open_problems(pilot: Pilot[None], app: HudApp) -> ProblemList:
    await pilot.press("exclamation_mark")
    await until(pilot, lambda: isinstance(app.screen, ProblemsScreen))
    listing = app.screen.query_one(ProblemList)
    await until(pilot, lambda: listing.option_count >= 4)
    return listing


async def test_problems_list_errors_first(state_dir: Path, running: Running) -> None:
    with_problems(state_dir)
    async with running() as (app, pilot):
        listing = await open_problems(pilot, app)
        texts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert texts[0].startswith("■ gamma") and "✗ error" in texts[1], texts
        assert texts[2].startswith("■ alpha") and "⚠ warn" in texts[3], texts


async def test_enter_on_a_problem_opens_its_mission_at_its_tab(
    state_dir: Path, running: Running
) -> None:
    with_problems(state_dir)
    async with running() as (app, pilot):
        listing = await open_problems(pilot, app)
        # gamma's evidence error, then (back on the list) alpha's events warning
        for row, mission_id, tab in ((1, "gamma", "evidence"), (3, "alpha", "execution")):
            await until(pilot, lambda: isinstance(app.screen, ProblemsScreen))
            listing.highlighted = row
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, MissionScreen))
            screen = app.screen
            assert isinstance(screen, MissionScreen) and screen.mission_id == mission_id
            await until(pilot, lambda s=screen, t=tab: s.query_one(TabbedContent).active == t)
            await pilot.press("escape")


# ---- help ---------------------------------------------------------------------------------


async def test_help_says_escape_clears_the_filter(running: Running) -> None:
    async with running() as (app, pilot):
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("#keys")
        rows = [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        assert any("esc" in row.lower() and "Clear the filter" in row for row in rows), rows


# ---- remembered per user ------------------------------------------------------------------


async def test_the_theme_is_remembered(state_dir: Path, running: Running) -> None:
    async with running() as (app, pilot):
        first = app.theme
        await pilot.press("ctrl+t")
        await until(pilot, lambda: saved().get("theme") == app.theme != first)
        chosen = app.theme
    assert not view_settings.path().is_relative_to(state_dir)
    async with running() as (again, pilot):
        assert again.theme == chosen
    async with running(theme=first) as (flagged, pilot):  # --theme still wins
        assert flagged.theme == first


async def test_the_approvals_toggle_is_remembered(running: Running) -> None:
    async with running() as (app, pilot):
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))
        await pilot.press("h")
        await until(pilot, lambda: saved().get("approvals_all") is True)
    async with running() as (again, pilot):
        await pilot.press("a")
        await until(pilot, lambda: isinstance(again.screen, ApprovalsScreen))
        screen = again.screen
        assert isinstance(screen, ApprovalsScreen) and screen.everything


async def test_read_only_remembers_nothing_and_a_bad_file_is_ignored(running: Running) -> None:
    async with running(read_only=True) as (_, pilot):
        await pilot.press("ctrl+t")
        await pilot.pause(0.3)
    assert not view_settings.path().exists()
    view_settings.path().parent.mkdir(parents=True, exist_ok=True)
    view_settings.path().write_bytes(b"theme = [\x00 not toml")
    assert view_settings.load() == {}
    view_settings.path().write_text('theme = 3\napprovals_all = "yes"\n')
    assert view_settings.load() == {}
    view_settings.path().unlink()
    os.mkfifo(view_settings.path())  # nobody writes it: a blocking open would hang
    assert view_settings.load() == {}


async def test_hud_toml_folded_again_unchanged_keeps_the_theme_chosen(running: Running) -> None:
    """The watcher's catch-up folds again what changed around the scan's start, hud.toml
    too: settings that did not change are not applied again over the user's choice."""
    async with running() as (app, pilot):
        first = app.theme
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.theme != first)
        chosen = app.theme
        app._folded(None, {"hud.toml"})
        await pilot.pause()
        assert app.theme == chosen


async def test_a_fold_that_lands_as_the_app_closes_does_nothing(
    state_dir: Path, running: Running
) -> None:
    """A fold handed over while the app shuts down (no screen left) changes nothing and
    raises nothing (it set the keymap on a screen that was gone)."""
    (state_dir / "hud.toml").write_text('schema = 1\n[keys]\n"overview.filter" = "f"\n')
    async with running() as (app, _pilot):
        pass
    assert not app.screen_stack
    app._settings_applied = None  # as if hud.toml had changed
    app._folded(None, {"hud.toml"})
