"""Pilot tests of the mission screen's Replay and Review tabs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from hud.app import HudApp
from hud.replaying import REPLAY_READ
from hud.screens.mission import MissionScreen
from tests.factory import resume, three_missions
from tests.hud.conftest import until
from widgets.tabs import replay as replay_widget
from widgets.tabs.replay import ReplayView
from widgets.tabs.review import ReviewView

SLOW = 15.0


async def open_tab(pilot: Any, app: HudApp, key: str) -> None:
    await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 3, SLOW)
    app.open_mission("gamma")
    await until(pilot, lambda: isinstance(app.screen, MissionScreen) and app.focused is not None)
    await pilot.press(key)
    await until(pilot, lambda: app.screen.query_one(TabbedContent).active in ("replay", "review"))


def replay_view(app: HudApp) -> ReplayView:
    return app.screen.query_one(ReplayView)


async def shows(pilot: Any, app: HudApp, *texts: str) -> str:
    """Wait until the replay view shows every one of `texts`; its text."""
    view = replay_view(app)

    def done() -> bool:
        reading = any(w.group == REPLAY_READ and w.is_running for w in app.workers)
        return not reading and all(text in view.shown_text for text in texts)

    try:
        await until(pilot, done, SLOW)
    except AssertionError:
        raise AssertionError(f"{texts} not in:\n{view.shown_text}") from None
    return view.shown_text


def line_of(text: str, start: str) -> str:
    """The line that reads `start` after its change mark (two cells)."""
    return next(line for line in text.splitlines() if line[2:].startswith(start))


async def test_stepping_shows_the_state_at_that_event_and_what_changed(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    # gamma's events: s1 running, s1 succeeded, s2 running, s2 succeeded
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_tab(pilot, app, "7")
        shown = await shows(pilot, app, "seq 4 of 4", "● LIVE")
        assert line_of(shown, "event") == "  event step s2 succeeded by agent"
        assert line_of(shown, "status") == "◆ status ✓ done"

        await pilot.press("left_square_bracket")
        shown = await shows(pilot, app, "seq 3 of 4", "⏸ paused", "Changed since seq 2")
        assert "LIVE" not in shown
        assert line_of(shown, "s2 ").startswith("◆ s2  ▶ running")
        assert line_of(shown, "s1 ").startswith("  s1  ✓ succeeded")
        assert "step s2 — → running" in shown

        await pilot.press("home")
        shown = await shows(pilot, app, "seq 1 of 4", "step s1 running")
        assert line_of(shown, "s2 ").startswith("  s2  ")
        assert "✓ succeeded" not in shown

        await pilot.press("right_square_bracket")
        shown = await shows(pilot, app, "seq 2 of 4", "step s1 running → succeeded")
        assert "Evidence so far: 1 lines" in shown

        await pilot.press("end")
        await shows(pilot, app, "seq 4 of 4", "● LIVE")


async def test_live_pin_follows_new_events_and_a_paused_replay_stays(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_tab(pilot, app, "7")
        await shows(pilot, app, "seq 4 of 4", "● LIVE")
        gamma = resume(state_dir, "gamma")
        gamma.event("error", message="disk full", step="s2")
        await shows(pilot, app, "seq 5 of 5", "● LIVE", "error: disk full")

        await pilot.press("home")
        await shows(pilot, app, "seq 1 of 5", "⏸ paused")
        gamma.event("error", message="disk still full", step="s2")
        await shows(pilot, app, "seq 1 of 6", "⏸ paused")

        await pilot.press("l")  # the LIVE pin snaps back to the newest
        await shows(pilot, app, "seq 6 of 6", "● LIVE", "disk still full")


async def test_play_steps_to_the_newest_then_follows_it(
    state_dir: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_widget, "PLAY_SECONDS", 60)  # no step before the check
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_tab(pilot, app, "7")
        await shows(pilot, app, "seq 4 of 4", "● LIVE")
        await pilot.press("p")
        view = replay_view(app)
        assert view.playing and view.seq == 1  # from the first event
        await pilot.press("p")  # pause there, then play on quickly
        assert not view.playing and view.seq == 1
        monkeypatch.setattr(replay_widget, "PLAY_SECONDS", 0.2)
        await pilot.press("p")
        await until(pilot, lambda: view.live and not view.playing, SLOW)
        await shows(pilot, app, "seq 4 of 4", "● LIVE")

        monkeypatch.setattr(replay_widget, "PLAY_SECONDS", 60)  # (0.2 s steps could reach
        await pilot.press("home", "p")  # the newest before the check on a loaded machine)
        assert view.playing
        await pilot.press("p")  # again: pause
        assert not view.playing and not view.live


async def test_review_answers_each_question_for_any_plan_version(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    root.mkdir()
    three_missions(root)
    resume(root, "gamma").plan(2, reason="split the docs")
    app = make_app(root, live=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_tab(pilot, app, "8")
        view = app.screen.query_one(ReviewView)
        await until(pilot, lambda: "Review of plan v2 (latest)" in view.shown_text, SLOW)
        shown = view.shown_text
        assert "Is the objective normalized, and are non-goals explicit?" in shown
        assert "missions/gamma/intent.toml" in shown  # the records behind an answer
        verdicts = ("✓ pass", "✗ fail", "? unknown")
        assert sum(shown.count(verdict) for verdict in verdicts) == 13  # 7 questions, 6 modes
        assert "✗ fail Is the objective normalized" in shown

        await pilot.press("v")
        await until(pilot, lambda: "Review of plan v1   " in view.shown_text, SLOW)
        await pilot.press("V")
        await until(pilot, lambda: "Review of plan v2 (latest)" in view.shown_text, SLOW)
