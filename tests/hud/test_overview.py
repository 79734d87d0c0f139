"""Pilot tests of the overview: order, filter, navigation, live updates, keymap."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen
from hud.screens.help import HelpScreen
from hud.screens.mission import MissionScreen
from hud.screens.overview import OverviewScreen
from hud.screens.problems import ProblemsScreen
from tests.factory import mission, resume
from tests.hud.conftest import until
from widgets.mission_table import MissionTable
from widgets.problem_list import ProblemList


def rows(app: HudApp) -> list[str]:
    table = app.screen.query_one(MissionTable)
    return list(table.order)


async def test_missions_sorted_by_urgency(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        assert rows(app) == ["beta", "alpha", "gamma"]
        header = app.screen.query_one("#hud-header")
        await until(pilot, lambda: "live" in str(header.render()))
        assert "1 approval " in str(header.render())


async def test_filter_narrows_and_escape_clears(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        await pilot.press("slash", *"docs")
        await until(pilot, lambda: rows(app) == ["gamma"])
        await pilot.press("enter", "escape")
        await until(pilot, lambda: len(rows(app)) == 3)


async def test_enter_opens_mission_and_escape_returns(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        await pilot.press("j", "enter")
        assert isinstance(app.screen, MissionScreen)
        assert app.screen.mission_id == "alpha"
        await pilot.press("escape")
        assert isinstance(app.screen, OverviewScreen)


async def test_appended_event_shows_live(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        resume(state_dir, "alpha").step("s1", "failed", reason="disk full")
        table = app.screen.query_one(MissionTable)
        await until(pilot, lambda: "failed" in table.cell("alpha", "status").plain)
        assert rows(app) == ["beta", "alpha", "gamma"]
        assert "s1" in table.cell("alpha", "step").plain


async def test_mission_folder_moved_in_shows_live(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    """`mv` of a finished folder is one watcher event for the folder, none for its files."""
    staged = mission(state_dir.parent / "staging", "delta", "Moved in whole")
    staged.step("s1", "running")
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and len(rows(app)) == 3)
        await pilot.pause(0.2)  # the watcher is up
        (state_dir.parent / "staging/missions/delta").rename(state_dir / "missions/delta")
        await until(pilot, lambda: "delta" in rows(app))
        table = app.screen.query_one(MissionTable)
        assert "running" in table.cell("delta", "status").plain


async def test_lists_opened_during_the_scan_say_so_far(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    """Problems and approvals can open before the scan ends: they show what is read so
    far at once, and no "every invariant holds" (nor "no pending requests") until every
    file has been read."""
    app = make_app(state_dir)
    async with app.run_test(size=(100, 24)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        so_far = "so far: still reading state…"
        for key, screen_type in (("exclamation_mark", ProblemsScreen), ("a", ApprovalsScreen)):
            app.scanned.clear()  # as if the scan were still running: no publish will come
            await pilot.press(key)
            await until(pilot, lambda kind=screen_type: isinstance(app.screen, kind))
            screen = app.screen
            title = screen.query_one("#problems-title, #approvals-title", Static)
            await until(pilot, lambda shown=title: so_far in str(shown.render()))
            if screen_type is ProblemsScreen:
                listing = screen.query_one(ProblemList)
                assert str(listing.get_option_at_index(0).prompt) == "No problems so far."
            app.scanned.set()
            screen.workspace_changed(None)
            assert "still reading" not in str(title.render())
            if screen_type is ProblemsScreen:
                first = str(listing.get_option_at_index(0).prompt)
                assert first == "No problems: every invariant holds."
            await pilot.press("escape")


async def test_bad_file_becomes_a_problem_not_a_crash(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        (state_dir / "missions/gamma/plan/v1.json").write_text('{"schema": 1, "version": ')
        await until(pilot, lambda: app.summaries["gamma"].problems > 0)
        await pilot.press("exclamation_mark")
        assert isinstance(app.screen, ProblemsScreen)
        await pilot.pause(0.1)
        listing = app.screen.query_one("#problem-list")
        text = "\n".join(
            str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)
        )
        assert "missions/gamma/plan/v1.json:1" in text
        assert "fix:" in text


async def test_a_mission_named_workspace_has_its_own_heading(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    """The directory's loose problems head "workspace"; so does a mission of that name,
    each with its own problems (they were merged into one group)."""
    mission(tmp_path, "workspace")
    (tmp_path / "missions/workspace/handoff.json").write_text("{")
    (tmp_path / "stray.txt").write_text("x")
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.press("exclamation_mark")
        await pilot.pause(0.1)
        listing = app.screen.query_one(ProblemList)
        lines = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        headings = [i for i, line in enumerate(lines) if line.startswith("■ ")]
        assert [lines[i] for i in headings] == ["■ workspace", "■ workspace"]
        groups = [
            "\n".join(lines[i + 1 : j]) for i, j in zip(headings, [*headings[1:], 99], strict=True)
        ]
        assert sorted(("handoff.json" in g, "stray.txt" in g) for g in groups) == [
            (False, True),
            (True, False),
        ]


async def test_help_lists_binding_ids(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#keys")
        ids = {str(table.get_row_at(i)[2]) for i in range(table.row_count)}
        assert {"overview.filter", "table.select", "quit", "problems"} <= ids


async def test_keymap_from_hud_toml(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    (state_dir / "hud.toml").write_text('schema = 1\n[keys]\n"overview.filter" = "f"\n')
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        await pilot.press("f", *"beta")
        await until(pilot, lambda: rows(app) == ["beta"])
