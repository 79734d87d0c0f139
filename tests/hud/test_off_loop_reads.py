"""A file that would block or never end never freezes the HUD.

hud.toml (read early for its theme) and a SMALL document (read to be edited) are read in
a thread worker through store.format.confined: no symlink followed, regular files only, capped.
Each is made a FIFO with no writer, or a symlink to /dev/zero. Every open of it happens
off the event loop's thread, the app answers a key long before the FIFO would let a stuck
reader go, and it says what is wrong with the file. (How fast a key is answered under no
load is `q`'s one-second bound, tested in a real terminal: tests/e2e/test_quit_while_reading.)
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from textual.widgets import Static, TabbedContent

from hud.app import HudApp
from hud.screens.help import HelpScreen
from hud.screens.problems import ProblemsScreen
from hud.screens.small import SmallScreen
from tests.hud.conftest import until
from tests.hud.test_hostile_text import screen_problems, toasts
from tests.small_support import SMALL_NOW, VALID, copy_fixture
from widgets.mission_table import MissionTable

UNBLOCK_SECONDS = 10.0
"""A reader stuck on the FIFO (the bug) gets end-of-file then, so the test fails on time
instead of hanging for ever."""
ANSWER_SECONDS = UNBLOCK_SECONDS / 2
"""Answered well before a stuck reader would be let go, however loaded the machine."""

HAZARDS: dict[str, Callable[[Path], None]] = {
    "fifo": os.mkfifo,
    "dev-zero": lambda path: path.symlink_to("/dev/zero"),
}
SAID = {"fifo": "FIFO", "dev-zero": "symlink"}


@contextmanager
def hazard_at(path: Path, hazard: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Replace `path` with the hazard; a FIFO gets a writer after UNBLOCK_SECONDS.

    On leaving, every open of the hazard's name was made, and none on the main thread
    (the event loop's)."""
    opened_on_main: list[bool] = []
    real_open = os.open

    def open_watched(name: object, *args: object, **kwargs: object) -> int:
        if isinstance(name, str | Path) and str(name).endswith(path.name):
            opened_on_main.append(threading.current_thread() is threading.main_thread())
        return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

    path.unlink(missing_ok=True)
    HAZARDS[hazard](path)
    done = threading.Event()

    def unblock() -> None:
        if done.wait(UNBLOCK_SECONDS):
            return
        while not done.wait(0.05):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader (anymore): nothing is stuck on it
                continue

    helper = threading.Thread(target=unblock, daemon=True)
    if hazard == "fifo":
        helper.start()
    monkeypatch.setattr(os, "open", open_watched)
    try:
        yield
    finally:
        done.set()
        monkeypatch.setattr(os, "open", real_open)
    assert opened_on_main, f"{path.name} was never opened"
    assert not any(opened_on_main), f"{path.name} was opened on the event loop's thread"


@pytest.mark.parametrize("hazard", HAZARDS)
async def test_a_hud_toml_that_never_ends_does_not_freeze_the_app(
    hazard: str, state_dir: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    with hazard_at(state_dir / "hud.toml", hazard, monkeypatch):
        started = time.monotonic()
        app = make_app(state_dir)
        assert time.monotonic() - started < ANSWER_SECONDS
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.scanned.is_set())
            pressed = time.monotonic()
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            assert time.monotonic() - pressed < ANSWER_SECONDS
            await pilot.press("escape", "exclamation_mark")
            await until(pilot, lambda: isinstance(app.screen, ProblemsScreen))
            await pilot.pause(0.1)
            shown = "\n".join(s.text for s in app.screen._compositor.render_strips())
            assert "hud.toml" in shown and SAID[hazard] in shown
            assert screen_problems(app) == []


@pytest.mark.parametrize("hazard", HAZARDS)
async def test_a_small_document_that_never_ends_does_not_freeze_editing(
    hazard: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    root = copy_fixture(VALID, tmp_path)
    with hazard_at(root / ".small" / "intent.small.yml", hazard, monkeypatch):
        app = HudApp(root, clock=lambda: SMALL_NOW)
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            await until(pilot, lambda: list(app.screen.query_one(MissionTable).order) != [])
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, SmallScreen))
            await pilot.pause(0.1)
            pressed = time.monotonic()
            await pilot.press("e", "2")
            await until(pilot, lambda: app.screen.query_one(TabbedContent).active == "plan")
            assert time.monotonic() - pressed < ANSWER_SECONDS
            await until(pilot, lambda: any("cannot edit" in t for t in toasts(app)))
            said = next(t for t in toasts(app) if "cannot edit" in t)
            assert ".small/intent.small.yml" in said and SAID[hazard] in said
            assert isinstance(app.screen, SmallScreen)
            assert app.screen.query_one("#plan-detail", Static).display
