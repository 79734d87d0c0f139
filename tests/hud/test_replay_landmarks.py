"""Pilot tests of the Replay tab's jumps: to a seq typed, to the next or previous
landmark, to the first event a `hud check` problem cites; each shows the frame
`Replay.frame(seq)` gives."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static, TabbedContent

from hud import replaying
from hud.app import HudApp
from hud.replaying import REPLAY_READ
from hud.screens.mission import MissionScreen
from store.analysis.landmarks import Bearings, Landmark
from store.analysis.replay import Frame, Replay
from store.index.check import check
from tests.factory import T0, chain, mission, resume, stamp
from tests.hud.conftest import until
from widgets.tabs.replay import ReplayView
from widgets.tabs.replay_jump import JumpDialog
from widgets.tabs.replay_text import landmark_text

SLOW = 15.0
EVENTS = 60
BAD_LINE = 30


def marked(root: Path) -> Path:
    """Mission `marked`: 60 events one second apart, with a failed step at 5, a handoff
    to agent-2 at 12, 85% of the usd budget used at 20, plan v2 from 25, a line that
    does not load at 30, request r1 asked at 33 and approved at 40, an error at 45."""
    built = mission(root, "marked", "A run worth replaying")
    special: dict[int, dict[str, Any]] = {
        5: {"type": "step", "step": "s1", "plan_version": 1, "state": "failed", "reason": "red"},
        12: {"type": "heartbeat", "actor": "agent-2"},
        20: {"type": "usage", "usd": 8.5, "tokens": 10, "steps": 1},
        BAD_LINE: {"type": "step", "step": "s1", "plan_version": 1, "state": "exploded"},
        45: {"type": "error", "message": "disk full"},
    }
    records = [
        {"at": stamp(T0 + timedelta(seconds=n)), "actor": "agent", "type": "heartbeat"}
        | special.get(n, {})
        for n in range(1, EVENTS + 1)
    ]
    (built.dir / "events.jsonl").write_bytes(chain(records))
    built.plan(2, created_at=stamp(T0 + timedelta(seconds=25)), reason="split")
    built.request("r1", requested_at=stamp(T0 + timedelta(seconds=33)))
    built.decision("r1", decided_at=stamp(T0 + timedelta(seconds=40)))
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return marked(tmp_path / "state")


def frame_at(root: Path, seq: int) -> Frame:
    """The frame `hud replay --at SEQ` shows."""
    replay = Replay(root, "marked")
    replay.refresh()
    return replay.frame(seq)


def view_of(app: HudApp) -> ReplayView:
    return app.screen.query_one(ReplayView)


async def replay_tab(pilot: Any, app: HudApp) -> None:
    """Open mission "marked" on its Replay tab, once the screen takes keys."""
    await until(pilot, lambda: app.scanned.is_set() and "marked" in app.summaries, SLOW)
    app.open_mission("marked")
    await until(pilot, lambda: isinstance(app.screen, MissionScreen) and app.focused is not None)
    await pilot.press("7")
    await until(pilot, lambda: app.screen.query_one(TabbedContent).active == "replay")


async def open_replay(pilot: Any, app: HudApp) -> ReplayView:
    await replay_tab(pilot, app)
    view = view_of(app)
    await shows(pilot, app, f"seq {EVENTS} of {EVENTS}", "landmarks: previous seq 45")
    return view


async def shows(pilot: Any, app: HudApp, *texts: str) -> str:
    """Wait until the replay view (bar, landmark line, frame) shows every one of `texts`."""
    view = view_of(app)

    def done() -> bool:
        reading = any(w.group == REPLAY_READ and w.is_running for w in app.workers)
        return not reading and view.aim is None and all(t in view.shown_text for t in texts)

    try:
        await until(pilot, done, SLOW)
    except AssertionError:
        raise AssertionError(f"{texts} not in:\n{view.shown_text}") from None
    return view.shown_text


def head(view: ReplayView) -> list[str]:
    """The bar and the landmark line."""
    return view.shown_text.splitlines()[:2]


async def test_jump_to_a_seq_typed_says_why_it_cannot_and_escape_cancels(
    root: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await open_replay(pilot, app)
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, JumpDialog))
        dialog = app.screen
        error = dialog.query_one("#jump-error", Static)
        await pilot.press("a", "b", "c", "enter")  # typed
        await until(pilot, lambda: error.has_class("shown"))
        assert str(error.render()) == "Not a number: abc. Type an event number, 1 to 60."
        for typed, why in [
            ("", "Type an event number, 1 to 60."),
            ("0", "Events count from 1: type 1 to 60."),
            ("61", "Seq 61 is past the last event: type 1 to 60."),
            ("-3", "Not a number: -3. Type an event number, 1 to 60."),
            ("[red]\x1b[2J", "Not a number: [red]␛[2J. Type an event number, 1 to 60."),
        ]:
            dialog.query_one(Input).value = typed  # pasted
            await pilot.press("enter")
            await until(pilot, lambda: str(error.render()) == why)  # noqa: B023
            assert app.screen is dialog  # it stays, saying why
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        assert view.live and view.seq == EVENTS

        await pilot.press("colon", "4", "2", "enter")
        shown = await shows(pilot, app, "seq 42 of 60", "⏸ paused")
        assert not view.live and view.frame == frame_at(root, 42)  # one derivation
        assert "event heartbeat by agent" in shown


async def test_next_and_previous_landmark_stop_at_the_ends_and_follow_the_log(
    root: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replaying, "SCAN_LINES", 7)  # the log is read for landmarks in chunks
    app = make_app(root, live=True)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await open_replay(pilot, app)
        await pilot.press("home")
        await shows(pilot, app, "seq 1 of 60", "◆ plan: plan v1")
        await pilot.press("N")
        await shows(pilot, app, "seq 1 of 60", "⚠ no landmark before seq 1")
        expected = [
            (5, "◆ failure: step s1 failed: red"),
            (12, "◆ handoff: handoff from agent to agent-2"),
            (20, "◆ budget: budget usd reached 80% of its limit"),
            (25, "◆ plan: plan v2: split"),
            (33, "◆ approval-asked: approval r1 asked: deploy for s1"),
            (40, "◆ approval-decided: approval r1 approved by alice"),
            (45, "◆ failure: error: disk full"),
        ]
        for seq, landmark in expected:
            await pilot.press("n")
            await shows(pilot, app, f"seq {seq} of 60", landmark)
            assert view.frame == frame_at(root, seq)
        await pilot.press("n")
        await shows(pilot, app, "seq 45 of 60", "⚠ no landmark after seq 45")
        await pilot.press("N", "N")  # two back at once
        await shows(pilot, app, "seq 33 of 60", "approval r1 asked")

        # the log grows: its new lines are read for landmarks too
        resume(root, "marked").event("halt", reason="operator stop")
        await pilot.press("colon", "5", "0", "enter")
        await shows(pilot, app, "seq 50 of 61")
        await pilot.press("n")
        await shows(pilot, app, "seq 61 of 61", "◆ failure: halt: operator stop")


async def test_f_jumps_to_the_first_event_a_hud_check_problem_cites(
    root: Path, make_app: Callable[..., HudApp]
) -> None:
    cited = [p for p in check(root).missions["marked"].problems if p.line is not None]
    assert min(p.line for p in cited if p.path.endswith("events.jsonl")) == BAD_LINE
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = await open_replay(pilot, app)
        await pilot.press("f")
        await shows(pilot, app, f"seq {BAD_LINE} of 60", "first problem: ✗ missions/marked/events")
        assert view.frame == frame_at(root, BAD_LINE)
        assert "does not load" in view.frame.moment.event


async def test_f_says_so_when_no_problem_cites_an_event(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    built = mission(root, "marked", "A clean run")
    for _ in range(3):
        built.event("heartbeat")
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await replay_tab(pilot, app)
        await shows(pilot, app, "seq 3 of 3")
        await pilot.press("f")
        await shows(
            pilot, app, "seq 3 of 3", "⚠ no problem of hud check cites an event of this log"
        )


def test_a_hostile_label_is_shown_as_data_on_the_landmark_line() -> None:
    label = "error: [bold red]x[/] \x1b]52;c;aGk=\x07 \u202eevil"
    bearings = Bearings((Landmark(7, "failure", label),), None, None, (7,), None, 9)
    text = landmark_text(7, bearings, 9, 200, {})
    assert "\x1b" not in text.plain and "\x07" not in text.plain and "\u202e" not in text.plain
    assert "[bold red]x[/]" in text.plain  # markup is text, not style
    assert not any("red" in str(span.style) for span in text.spans)
    narrow = landmark_text(7, bearings, 9, 30, {})
    assert narrow.cell_len <= 30 and narrow.plain.endswith("…")


def test_the_fold_feeds_the_landmarks_and_again_from_the_top_when_the_log_is_replaced(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log read whole once: the first frame comes with every landmark (the lines that
    do not load counted), with no second read of any line."""
    monkeypatch.setattr(replaying, "SCAN_LINES", 8)
    feed = replaying.ReplayFeed(root, "marked")
    frame, last, bearings = feed.aimed(None, None)
    assert frame is not None and last == EVENTS and bearings is not None
    assert bearings.scanned == EVENTS and feed.landmarks.lines == EVENTS
    assert not feed.scan()  # no line left to read
    assert [mark.seq for mark in feed.landmarks.all()] == [1, 5, 12, 20, 25, 33, 40, 45]

    records = [
        {"at": stamp(T0 + timedelta(seconds=n)), "actor": "agent", "type": "heartbeat"}
        | ({"type": "halt", "reason": "stop"} if n == 3 else {})
        for n in range(1, 5)
    ]
    (root / "missions/marked/events.jsonl").write_bytes(chain(records))
    _, last, bearings = feed.aimed(None, ("landmark", -1, 4))
    assert last == 4 and bearings is not None and bearings.scanned == 4  # one chunk: at once
    failures = [mark for mark in feed.landmarks.all() if mark.kind == "failure"]
    assert failures == [Landmark(3, "failure", "halt: stop")]
