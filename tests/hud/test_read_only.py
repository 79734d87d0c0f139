"""Read-only mode: every bound key, on every screen, changes nothing under STATE_DIR.

The test learns the keys of every binding of the app, of every screen class in
hud.screens and of every widget it meets (the HUD's own and Textual's). It visits each
screen (the overview, each mission tab, the approvals queue both ways, a request, a
hostile request, an irreversible one, problems, help) and there presses every key bound
where a press lands (app, screen, focus chain; hidden write bindings included),
re-opening the screen whenever a key left it; the mission screen's own keys once, its
tabs' keys on each tab. Keys bound nowhere it visited are pressed on the overview and
a request. Quitting keys go last. Before and after, a snapshot of every file and
folder under STATE_DIR: (path, kind, size, mtime_ns, sha256); they must be equal, and
nothing is saved anywhere else either (no export, no screenshot). What a writing HUD
saves for its user never lands under STATE_DIR, even when HOME and the current folder
are STATE_DIR.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pkgutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import TabbedContent

from hud import saving
from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.decide import ConfirmDialog, ReasonDialog, TypeToolDialog
from hud.screens.help import HelpScreen
from hud.screens.mission import MissionScreen
from hud.screens.mission_views import TABS
from hud.screens.overview import OverviewScreen
from hud.screens.problems import ProblemsScreen
from tests.factory import mission, resume
from tests.hud.conftest import until

QUITS = {"quit", "app.quit"}
NEVER = {"suspend_process", "app.suspend_process"}  # would stop the test process

Snapshot = dict[str, tuple[str, int, int, str]]


def snapshot(root: Path) -> Snapshot:
    """Every file and folder under `root`: kind, size, mtime_ns, sha256."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if name in files else ""
            kind = "dir" if name in dirs else "file"
            found[str(path.relative_to(root))] = (kind, info.st_size, info.st_mtime_ns, digest)
    info = root.stat()
    found["."] = ("dir", info.st_size, info.st_mtime_ns, "")
    return found


def all_screen_classes() -> list[type[Any]]:
    """Every screen class the HUD defines (each module of hud.screens)."""
    import hud.screens

    for info in pkgutil.iter_modules(hud.screens.__path__):
        importlib.import_module(f"hud.screens.{info.name}")
    found: list[type[Any]] = []
    stack: list[type[Any]] = [Screen]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("hud."):
                found.append(sub)
    return found


def bindings_of(node: DOMNode) -> list[Binding]:
    return [b for bs in node._bindings.key_to_bindings.values() for b in bs]


def class_bindings(classes: list[type[Any]]) -> list[Binding]:
    found: list[Binding] = []
    for cls in classes:
        for base in cls.__mro__:
            found.extend(Binding.make_bindings(base.__dict__.get("BINDINGS", [])))
    return found


@pytest.fixture
def hostile_state(state_dir: Path) -> Path:
    """The shared directory plus a hostile request, a stale one, and a bad file."""
    beta = resume(state_dir, "beta")
    beta.request(
        "r2",
        args={"cmd": "echo \u202e", "clip": "\x1b]52;c;SGVsbG8=\x07", "[b]x[/b]": "[link=x]y"},
    )
    delta = mission(state_dir, "delta", "Hostile \x1b[2J title \u202e")
    delta.request("d1", risk="irreversible", tool="drop")
    (state_dir / "missions/delta/plan/v2.json").write_text("{not json")
    return state_dir


@pytest.mark.slow
async def test_every_key_on_every_screen_writes_nothing(
    hostile_state: Path,
    make_app: Callable[..., HudApp],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = hostile_state
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # an export would go here: read-only saves nothing at all
    before = snapshot(root)
    app = make_app(root, read_only=True)
    assert app.writer is None and app.read_only

    # Every state to visit: a function that opens it from the overview.
    def tab(tab_id: str) -> Callable[[], None]:
        return lambda: app.push_screen(MissionScreen("beta", tab_id))

    def approvals(everything: bool) -> Callable[[], None]:
        def open_queue() -> None:
            screen = ApprovalsScreen()
            screen.everything = everything
            app.push_screen(screen)

        return open_queue

    def request(mission_id: str, request_id: str) -> Callable[[], None]:
        return lambda: app.push_screen(RequestScreen(mission_id, request_id))

    def help_over(opener: Callable[[], None]) -> Callable[[], None]:
        def open_help() -> None:
            opener()
            app.call_after_refresh(lambda: app.push_screen(HelpScreen(app.screen)))

        return open_help

    states: dict[str, Callable[[], None]] = {
        "overview": lambda: None,
        **{f"mission:{t.id}": tab(t.id) for t in TABS},
        "approvals": approvals(False),
        "approvals-all": approvals(True),
        "request": request("beta", "r1"),
        "request-hostile": request("beta", "r2"),
        "request-irreversible": request("delta", "d1"),
        "problems": lambda: app.push_screen(ProblemsScreen()),
        "help": help_over(lambda: None),
        "help-request": help_over(request("beta", "r1")),
    }

    screen_classes: list[type[Any]] = [HudApp, *all_screen_classes()]
    assert {OverviewScreen, MissionScreen, ApprovalsScreen, RequestScreen} <= set(screen_classes)
    assert {ProblemsScreen, HelpScreen, ReasonDialog, ConfirmDialog, TypeToolDialog} <= set(
        screen_classes
    )
    keys: set[str] = set()
    quit_keys: set[str] = set()
    pressed: dict[str, int] = {}

    def learn(bindings: list[Binding]) -> None:
        for binding in bindings:
            for key in binding.key.split(","):
                key = key.strip()
                if binding.action in QUITS:
                    quit_keys.add(key)
                elif binding.action not in NEVER:
                    keys.add(key)

    learn(class_bindings(screen_classes))

    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 4)

        async def enter(name: str) -> tuple[Screen[Any], str | None]:
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await pilot.pause()
            states[name]()
            await pilot.pause(0.05)
            if name.startswith("mission:"):
                wanted = name.partition(":")[2]
                await until(pilot, lambda: _tab_of(app.screen) == wanted)
            screen = app.screen
            learn(bindings_of(app))
            learn(bindings_of(screen))
            for widget in screen.walk_children():
                learn(bindings_of(widget))
            return screen, _tab_of(screen)

        def safe_here(key: str) -> bool:
            """A key that also quits is pressed only where the screen binds it otherwise."""
            if key not in quit_keys:
                return True
            return any(
                b.action not in QUITS for b in app.screen._bindings.key_to_bindings.get(key, [])
            )

        def bound_here() -> set[str]:
            """Keys bound where a press lands now: the app, the screen, the focus chain.

            Hidden bindings count (a write action refused by check_action is still bound).
            """
            nodes: list[DOMNode] = [app, app.screen]
            focused = app.screen.focused
            if focused is not None:
                nodes.extend(focused.ancestors_with_self)
            here: set[str] = set()
            for node in nodes:
                for binding in bindings_of(node):
                    if binding.action in NEVER:
                        continue
                    here.update(k.strip() for k in binding.key.split(","))
            return {k for k in here if safe_here(k)}

        async def press(name: str, key: str) -> None:
            await pilot.press(key)
            pressed[key] = pressed.get(key, 0) + 1
            assert app.is_running, f"{key!r} on {name} stopped the app"

        screen_keys: set[str] = set()  # the mission screen's and app's own: once is enough
        for name in states:
            screen, tab_id = await enter(name)
            done: set[str] = set(screen_keys) if name.startswith("mission:") else set()
            if name.startswith("mission:") and not screen_keys:
                for node in (app, screen):
                    for binding in bindings_of(node):
                        screen_keys.update(k.strip() for k in binding.key.split(","))
            while todo := sorted(bound_here() - done):
                for key in todo:
                    if app.screen is not screen:
                        screen, tab_id = await enter(name)
                    elif tab_id is not None and _tab_of(screen) != tab_id:
                        screen.query_one(TabbedContent).active = tab_id  # back to this tab
                        await pilot.pause()
                    done.add(key)
                    if safe_here(key):
                        await press(name, key)
            assert app.writer is None

        # Keys bound somewhere that no visited state binds (the dialogs' keys, keys of
        # widgets that never had the focus): pressed too, on the overview and a request.
        rest = sorted(keys - set(pressed))
        for name in ("overview", "request"):
            screen, tab_id = await enter(name)
            for key in rest:
                if app.screen is not screen:
                    screen, tab_id = await enter(name)
                if safe_here(key):
                    await press(name, key)
        await pilot.pause(0.2)
        assert quit_keys, "a quit key is bound"
        await pilot.press(sorted(quit_keys)[0])
    after = snapshot(root)
    assert not keys - set(pressed), "every key was pressed"
    assert {"y", "n", "a", "enter", "escape", "x", "h", "m"} <= set(pressed)
    assert len(keys) >= 30
    changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()}
    assert {k: v for k, v in changed.items() if v[0] != v[1]} == {}
    assert list(elsewhere.iterdir()) == []


def _tab_of(screen: Screen[Any]) -> str | None:
    tabs = screen.query(TabbedContent)
    return tabs.first().active if tabs else None


async def test_read_only_saves_nothing_anywhere(
    state_dir: Path,
    make_app: Callable[..., HudApp],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read-only writes nothing at all: no export key in the footer, `x` and a screenshot
    save no file, in the current folder or anywhere, and the palette offers none."""
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(tempfile, "tempdir", str(elsewhere))
    app = make_app(state_dir, read_only=True)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        app.open_mission("beta")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        screen = app.screen
        assert screen.check_action("export", ()) is False
        shown = {binding.action for _, binding, _, _ in screen.active_bindings.values()}
        assert "export" not in shown
        await pilot.press("x")
        app.deliver_screenshot()
        titles = [command.title for command in app.get_system_commands(screen)]
        assert "Screenshot" not in titles
        await until(pilot, lambda: any("nothing is saved" in n.message for n in app._notifications))
        await pilot.pause(0.3)
    assert list(elsewhere.iterdir()) == []


async def test_saves_nothing_under_state_dir_when_home_is_there(
    state_dir: Path,
    make_app: Callable[..., HudApp],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HOME = STATE_DIR = the current folder: the handoff export and a screenshot go to
    $TMPDIR; with every temp folder inside STATE_DIR too, nothing is saved."""
    root = state_dir
    (root / "Downloads").mkdir()  # the download folder, as platformdirs finds it
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(root)
    outside = tmp_path / "tmp"
    outside.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(outside))
    before = snapshot(root)
    app = make_app(root)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        app.open_mission("beta")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        await pilot.press("x")
        await until(pilot, lambda: (outside / "beta-handoff.md").exists())
        app.deliver_screenshot()
        await until(pilot, lambda: any(outside.glob("*.svg")))
        monkeypatch.setattr(tempfile, "tempdir", str(root / "Downloads"))
        for name in ("TMPDIR", "TEMP", "TMP"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(saving, "TEMP_FALLBACKS", (root,))  # /tmp too
        await pilot.press("x")
        app.deliver_screenshot()
        await until(
            pilot, lambda: sum("nothing saved" in n.message for n in app._notifications) == 2
        )
        await pilot.pause(0.2)
    assert snapshot(root) == before
    assert sorted(p.suffix for p in outside.iterdir()) == [".md", ".svg"]


async def test_the_screenshot_toast_says_where_in_plain_words(
    state_dir: Path,
    make_app: Callable[..., HudApp],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        app.deliver_screenshot()
        await until(pilot, lambda: any(tmp_path.glob("*.svg")))
        await until(pilot, lambda: any("screenshot" in n.message for n in app._notifications))
        (saved,) = tmp_path.glob("*.svg")
        messages = [n.message for n in app._notifications]
        assert f"screenshot saved to {saved}" in messages
        assert not any("[$" in message for message in messages)


async def test_a_served_session_saves_into_its_private_folder(
    state_dir: Path,
    make_app: Callable[..., HudApp],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cwd, private = tmp_path / "cwd", tmp_path / "private"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    saving.make_private(private)
    for number in range(saving.MAX_SAVED):
        (private / f"old-{number:02d}.md").write_text("old")
        os.utime(private / f"old-{number:02d}.md", ns=(number * 10**9, number * 10**9))
    app = make_app(state_dir, role="approver", saves=private)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        app.open_mission("beta")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        await pilot.press("x")
        await until(pilot, lambda: (private / "beta-handoff.md").exists())
        private.chmod(0o755)  # others may read it now: nothing more is saved
        app.deliver_screenshot()
        await until(pilot, lambda: any(saving.NOT_PRIVATE in n.message for n in app._notifications))
    assert list(cwd.iterdir()) == []
    assert len(list(private.iterdir())) == saving.MAX_SAVED  # the oldest made room
    assert not (private / "old-00.md").exists() and (private / "old-01.md").exists()
