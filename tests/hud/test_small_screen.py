"""Pilot tests of a SMALL workspace in the HUD: the overview row, the tabs, live progress,
editing what humans own."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from textual.widgets import Static, TabbedContent, TextArea

from hud.app import HudApp
from hud.screens.edit import TomlEditorScreen
from hud.screens.overview import OverviewScreen
from hud.screens.small import SmallScreen
from tests.hud.conftest import until
from tests.small_support import NO_WORKSPACE, SMALL_NOW, VALID, copy_fixture
from widgets.mission_table import MissionTable
from widgets.small import PlanTable, Timeline


def rows(app: HudApp) -> list[str]:
    table = app.screen.query_one(MissionTable)
    return list(table.order)


def shown(app: HudApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def make(root: Path, **options: object) -> HudApp:
    return HudApp(root, clock=lambda: SMALL_NOW, **options)  # type: ignore[arg-type]


@pytest.fixture
def live(tmp_path: Path) -> Path:
    return copy_fixture(VALID, tmp_path)


async def open_small(app: HudApp, pilot: object) -> SmallScreen:
    await until(pilot, lambda: rows(app) == ["small:valid"])  # type: ignore[arg-type]
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(pilot, lambda: isinstance(app.screen, SmallScreen))  # type: ignore[arg-type]
    assert isinstance(app.screen, SmallScreen)
    return app.screen


async def test_overview_row_and_tabs(live: Path) -> None:
    app = make(live)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: rows(app) == ["small:valid"])
        summary = app.summaries["small:valid"]
        assert summary.status.value == "blocked" and summary.current_step == "task-5"
        screen = await open_small(app, pilot)
        assert "resume task-5" in shown(app, "#small-resume")
        assert "Make the nightly report job resumable" in shown(app, "#intent-text")
        assert "read-replica-only" in shown(app, "#intent-text")
        assert "small accept intent" in shown(app, "#intent-text")
        await pilot.press("2")
        plan = screen.query_one(PlanTable)
        await until(pilot, lambda: plan.row_count == 7)
        assert plan.selected is not None and plan.selected.id == "task-1"
        await pilot.press("down")
        assert "task-2" in shown(app, "#plan-detail")
        await pilot.press("3")
        timeline = screen.query_one(Timeline)
        await until(pilot, lambda: timeline.row_count == 16)
        assert timeline.cursor_row == 15  # the latest entry
        assert "first draft of docs/nightly.md" in shown(app, "#entry-detail")
        await pilot.press("4")
        await until(pilot, lambda: "Get the replica login" in shown(app, "#handoff-text"))
        assert "Get a login on the staging read replica" in shown(app, "#handoff-text")
        await pilot.press("5")
        await until(pilot, lambda: "verify valid" in shown(app, "#checks-text"))
        await pilot.press("escape")
        assert isinstance(app.screen, OverviewScreen)


async def test_appended_progress_shows_live(live: Path) -> None:
    app = make(live)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_small(app, pilot)
        await pilot.press("3")
        timeline = screen.query_one(Timeline)
        await until(pilot, lambda: timeline.row_count == 16)
        generation = app.workspace.small.generation
        with (live / ".small" / "progress.small.yml").open("a") as handle:
            handle.write(
                "    - command: echo live\n"
                "      evidence: appended while the HUD is open\n"
                "      status: in_progress\n"
                "      task_id: task-7\n"
                '      timestamp: "2026-04-02T08:00:00.000000001Z"\n'
            )
        await until(pilot, lambda: timeline.row_count == 17)
        assert timeline.cursor_row == 16  # following the end
        assert "echo live" in shown(app, "#entry-detail")
        assert app.workspace.small.generation == generation  # appended, not re-parsed


async def test_a_failed_check_needs_you_and_shows_why(tmp_path: Path) -> None:
    root = copy_fixture(NO_WORKSPACE, tmp_path)
    app = make(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: rows(app) == ["small:no-workspace-file"])
        assert app.summaries["small:no-workspace-file"].status.value == "needs_you"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SmallScreen))
        assert "✗ verify" in shown(app, "#small-resume")
        await pilot.press("5")
        await until(pilot, lambda: "verify invalid" in shown(app, "#checks-text"))
        assert "workspace.small.yml" in shown(app, "#checks-text")


async def test_edit_intent_in_the_app_editor(live: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    path = live / ".small" / "intent.small.yml"
    app = make(live)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_small(app, pilot)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        area = app.screen.query_one(TextArea)
        area.text = "# edited in the HUD\n" + area.text.replace(
            'small_version: "1.0.0"', "small_version: 1.0.0"
        ).replace("no duplicate rows.", "no duplicate rows, seen from the HUD.")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, SmallScreen))
        await until(pilot, lambda: "seen from the HUD" in shown(app, "#intent-text"))
    text = path.read_text()
    assert text.startswith('# edited in the HUD\nsmall_version: "1.0.0"\n')
    assert "seen from the HUD" in text
    progress = live / ".small" / "progress.small.yml"
    assert "seen from the HUD" not in progress.read_text()  # no progress entry written


@pytest.mark.parametrize("role", ["reviewer", "approver"])
async def test_read_only_hides_editing(live: Path, role: str) -> None:
    """A reviewer edits nothing, and neither does an approver (who only decides)."""
    before = hashlib.sha256((live / ".small" / "intent.small.yml").read_bytes()).hexdigest()
    app = make(live, role=role)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_small(app, pilot)
        assert screen.check_action("edit_intent", ()) is False
        await pilot.press("e")
        await pilot.pause(0.2)
        assert isinstance(app.screen, SmallScreen)
        assert "e edits" not in shown(app, "#intent-text")
    after = hashlib.sha256((live / ".small" / "intent.small.yml").read_bytes()).hexdigest()
    assert before == after


async def test_copy_accept_commands(live: Path) -> None:
    app = make(live)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_small(app, pilot)
        await pilot.press("c")
        assert "small accept intent" in app.clipboard
        assert "small accept constraints" in app.clipboard
        assert app.screen.query_one(TabbedContent).active == "intent"
