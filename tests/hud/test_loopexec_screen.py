"""Pilot tests of loopexec runs in the HUD: one overview row per run, the run screen, live."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from hud.app import HudApp
from hud.screens.loopexec import LoopexecScreen
from hud.screens.problems import ProblemsScreen
from tests.hud.conftest import until
from tests.small_support import LOOPEXEC_NOW, T_LOOPEXEC, copy_loopexec
from widgets.loopexec import ReceiptTable
from widgets.mission_table import MissionTable
from widgets.problem_list import ProblemList


def rows(app: HudApp) -> list[str]:
    table = app.screen.query_one(MissionTable)
    return list(table.order)


def summary(app: HudApp) -> str:
    return str(app.screen.query_one("#loop-summary", Static).render())


async def test_runs_as_rows_and_a_run_screen(tmp_path: Path) -> None:
    root = copy_loopexec("runs", tmp_path)
    app = HudApp(root, clock=lambda: LOOPEXEC_NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        assert rows(app) == ["loopexec:r-stuck", "loopexec:r-live", "loopexec:r-converged"]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LoopexecScreen))
        text = summary(app)
        assert "no_progress_detected" in text and "17 no-convergence" in text
        assert "best 5 (from 5)" in text and "$0.87" in text
        assert "OPEN: a human is asked" in text
        table = app.screen.query_one(ReceiptTable)
        assert table.row_count == 14
        assert "halt" in str(app.screen.query_one("#event-detail", Static).render())
        await pilot.press("escape", "j", "enter")
        await until(pilot, lambda: "r-live" in summary(app))
        assert "heartbeat:       1m ago" in summary(app) and "STALE" not in summary(app)
        assert "not halted" in summary(app)
        receipt = root / ".loopexec" / "run-r-live.jsonl"
        with receipt.open("a") as handle:
            for event in (
                {"event": "check", "exit_code": 0},
                {"event": "halt", "detail": "success_condition_met"},
            ):
                line = {"ts": T_LOOPEXEC + 2180, "run_id": "r-live", "iteration": 2, **event}
                handle.write(json.dumps(line) + "\n")
        table = app.screen.query_one(ReceiptTable)
        await until(pilot, lambda: table.row_count == 8)
        await until(pilot, lambda: "10 converged" in summary(app))
        assert app.summaries["loopexec:r-live"].status.value == "done"


async def test_bad_loopexec_folder_problems_reach_the_hud(tmp_path: Path) -> None:
    root = copy_loopexec("bad", tmp_path)
    app = HudApp(root, clock=lambda: LOOPEXEC_NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: rows(app) == ["loopexec:broken"])
        problems = {p.path for p in app.workspace.problems()}
        assert problems == {
            ".loopexec/run-broken.jsonl",
            ".loopexec/state.json",
            ".loopexec/notes.txt",
        }
        assert app.summaries["loopexec:broken"].status.value == "needs_you"


async def test_problems_screen_groups_a_runs_problems_under_its_row(tmp_path: Path) -> None:
    root = copy_loopexec("bad", tmp_path)
    app = HudApp(root, clock=lambda: LOOPEXEC_NOW)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: rows(app) == ["loopexec:broken"])
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, ProblemsScreen))
        listed = app.screen.query_one(ProblemList)
        options = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        headings = [text for text in options if text.startswith("■ ")]
        assert headings == ["■ loopexec:broken", "■ workspace"]
        split = options.index("■ workspace")
        assert all(".loopexec/run-broken.jsonl" in text for text in options[1:split])
        assert split > 1 and any(".loopexec/notes.txt" in text for text in options[split:])
        header = str(app.screen.query_one("#hud-header").render())
        assert f"⚠ {len(app.workspace.problems())} problems" in header  # loose ones counted
