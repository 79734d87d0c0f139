"""A quitting HUD waits for a write of the user's files under way, briefly, and never for
a thread that reads (cli.launch._close)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.screen import Screen

from cli import launch
from hud.acts.documents import EDIT_CHOICES
from hud.app import HudApp
from hud.pending_writes import pending_write
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.edit import BudgetAdjustScreen, ConflictScreen, NewMissionScreen, TomlEditorScreen
from hud.screens.help import HelpScreen
from hud.screens.history import HistoryScreen
from hud.screens.mission import MissionScreen
from store.writers.human import Conflict
from tests.hud.conftest import until

SLACK = 1.0
"""What a loaded machine may add to the linger; the write hangs for ten seconds."""


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]]:
    """Each os._exit's code and moment, the process left running."""
    called: list[tuple[int, float]] = []
    monkeypatch.setattr(launch.os, "_exit", lambda code: called.append((code, time.monotonic())))
    return called


@pytest.fixture
def busy() -> Iterator[Callable[[Callable[[], None]], None]]:
    """Start non-daemon threads (as a worker's executor thread is); all ended after."""
    release = threading.Event()
    threads: list[threading.Thread] = []

    def start(body: Callable[[], None]) -> None:
        thread = threading.Thread(target=lambda: (body(), release.wait(10)))
        thread.start()
        threads.append(thread)

    yield start
    release.set()
    for thread in threads:
        thread.join()


def test_a_thread_reading_is_not_waited_for(exits: list[tuple[int, float]], busy) -> None:
    busy(lambda: None)  # reads, and would go on for seconds
    started = time.monotonic()
    launch._close(asyncio.new_event_loop(), 3)
    assert exits and exits[0][0] == 3
    assert exits[0][1] - started < launch.LINGER_SECONDS  # waiting at all takes that long


def test_a_write_under_way_ends_before_the_process(exits: list[tuple[int, float]], busy) -> None:
    written: list[float] = []
    begun = threading.Event()

    def write() -> None:
        with pending_write():
            begun.set()
            time.sleep(launch.LINGER_SECONDS / 3)
            written.append(time.monotonic())

    busy(write)
    begun.wait(5)
    launch._close(asyncio.new_event_loop(), 0)
    assert written and exits and written[0] <= exits[0][1]


def test_a_write_that_hangs_holds_the_exit_only_so_long(
    exits: list[tuple[int, float]], busy
) -> None:
    begun = threading.Event()
    hung = threading.Event()

    def write() -> None:
        with pending_write():
            begun.set()
            hung.wait(10)

    busy(write)
    begun.wait(5)
    started = time.monotonic()
    launch._close(asyncio.new_event_loop(), 0)
    hung.set()
    held = exits[0][1] - started if exits else None
    assert held is not None and launch.LINGER_SECONDS <= held < launch.LINGER_SECONDS + SLACK


def test_nothing_busy_ends_normally(exits: list[tuple[int, float]]) -> None:
    launch._close(asyncio.new_event_loop(), 0)
    assert exits == []


SCREENS: dict[str, Callable[[HudApp], Screen[Any]]] = {
    "toml editor": lambda _: TomlEditorScreen("missions/beta/constraints.toml", "x = 1\n"),
    "conflict": lambda _: ConflictScreen(
        Conflict("missions/beta/intent.toml", "a\n", "0" * 64, "b\n"), EDIT_CHOICES
    ),
    "budget": lambda _: BudgetAdjustScreen("beta", [], None),
    "new mission": lambda _: NewMissionScreen(),
    "help": lambda app: HelpScreen(app.screen),
    "history": lambda _: HistoryScreen("beta"),
    "request": lambda _: RequestScreen("beta", "r1"),
    "mission": lambda _: MissionScreen("beta"),
    "approvals": lambda _: ApprovalsScreen(),
}


@pytest.mark.parametrize("name", sorted(SCREENS))
async def test_quitting_as_a_screen_opens_is_no_crash(state_dir: Path, name: str) -> None:
    """The app exits while a screen is being mounted: Textual may then handle the screen's
    Mount after its children went, and a screen that looked one up raised NoMatches."""
    app = HudApp(state_dir, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        app.push_screen(SCREENS[name](app))
        app.exit()
