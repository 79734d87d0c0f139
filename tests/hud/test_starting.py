"""The app is whole before its first screen: its index is `Starting` until the scan worker
hands over its workspace, then `Indexed`; every key pressed meanwhile works or says the
HUD is still reading, and nothing acts on an index that is not there."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hud.app
from hud.app import HudApp
from hud.host import Hud, Indexed, Starting
from hud.screens.approvals import ApprovalsScreen
from hud.screens.help import HelpScreen
from hud.screens.overview import OverviewScreen
from store.index.workspace import Workspace
from tests.hud.conftest import until

HOLD_SECONDS = 10.0
"""The longest the scan is held (a failing test never hangs)."""


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The scan worker waits (before it hands over its workspace) until this is set."""
    release = threading.Event()
    load_settings = Workspace.load_settings

    def wait_then_load(self: Workspace) -> None:
        release.wait(HOLD_SECONDS)
        load_settings(self)

    monkeypatch.setattr(Workspace, "load_settings", wait_then_load)
    yield release
    release.set()


def toasts(app: HudApp) -> list[str]:
    """Every toast's message from now on."""
    seen: list[str] = []
    notify = app.notify

    def capture(message: str, *args: Any, **kwargs: Any) -> None:
        seen.append(message)
        notify(message, *args, **kwargs)

    app.notify = capture  # type: ignore[method-assign]
    return seen


async def test_what_the_screens_read_of_the_app_is_set_at_construction(
    state_dir: Path,
) -> None:
    app = HudApp(state_dir, live=False)
    unset = [name for name in Hud.__annotations__ if not hasattr(app, name)]
    assert unset == []
    assert isinstance(app.index, Starting)


async def test_keys_pressed_before_the_index_is_handed_over(
    state_dir: Path, held: threading.Event
) -> None:
    app = HudApp(state_dir, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        said = toasts(app)
        await until(pilot, lambda: isinstance(app.screen, OverviewScreen))
        for key in ("a", "exclamation_mark", "M"):  # screens that read the index
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, OverviewScreen)
        assert said == [app.still_reading()] * 3
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, OverviewScreen))
        for key in ("n", "c", "enter", "ctrl+t", "slash", "b", "escape"):  # no writer yet
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, OverviewScreen), key
        app.open_mission("beta")  # a row opened before it is indexed opens once it is
        app.open_request("beta", "r1")
        await pilot.pause()
        assert isinstance(app.index, Starting)
        assert app.writer is None and not app.scanned.is_set()
        held.set()
        await until(pilot, lambda: app.scanned.is_set())
        assert isinstance(app.index, Indexed)
        assert set(app.index.workspace.missions) == {"alpha", "beta", "gamma"}
        assert app.writer is not None
        await until(pilot, lambda: getattr(app.screen, "mission_id", None) == "beta")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))


async def test_the_live_frame_is_drawn_before_the_scan_is_collected(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full collection after the scan (which freezes what it built) and the cache's
    write come after the frame that says the HUD is live, not before it: at 10,000
    missions they cost seconds."""
    import gc

    order: list[str] = []
    collect, display = gc.collect, HudApp._display

    def collecting(*generation: int) -> int:
        order.append("collect")
        return collect(*generation)

    def drawing(app: HudApp, *args: Any) -> None:
        if app.scanned.is_set() and "live frame" not in order:
            order.append("live frame")
        display(app, *args)

    monkeypatch.setattr(gc, "collect", collecting)
    monkeypatch.setattr(HudApp, "_display", drawing)
    app = HudApp(state_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: "collect" in order)
    assert order[:2] == ["live frame", "collect"]


async def test_a_change_is_shown_once_by_the_overview(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual calls the `on_mount` of every class of a screen: the overview subscribed
    to the app's changes once per class redrew every change twice (at 10,000 missions,
    its whole table each time the scan handed over a chunk)."""
    shown: list[set[str] | None] = []
    changed = OverviewScreen.workspace_changed

    def counting(self: OverviewScreen, touched: set[str] | None) -> None:
        shown.append(touched)
        changed(self, touched)

    monkeypatch.setattr(OverviewScreen, "workspace_changed", counting)
    app = HudApp(state_dir, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.pause()
        shown.clear()
        app.changed.publish({"alpha"})
        await pilot.pause()
        assert shown == [{"alpha"}]


async def test_the_logs_taken_on_trust_are_not_counted_while_scanning(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header says `◌ scanning` until the scan is done, not how many logs are cached
    and not verified yet: counting them (every log's reader) at each chunk the scan
    handed over cost the first scan as much as its table at 10,000 missions."""
    counted: list[bool] = []
    trusting = Workspace.trusting
    monkeypatch.setattr(hud.app, "FIRST_CHUNK", 1)  # a chunk a mission: 3 chunks
    monkeypatch.setattr(hud.app, "SCAN_CHUNK", 1)
    app = HudApp(state_dir, live=False)

    def counting(workspace: Workspace) -> int:
        counted.append(app.scanned.is_set())
        return trusting(workspace)

    monkeypatch.setattr(Workspace, "trusting", counting)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and True in counted)
    assert False not in counted
