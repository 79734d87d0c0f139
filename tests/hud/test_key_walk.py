"""Every key `?` lists does what it says, on every screen, writable and read-only.

For each screen (the overview also filtered, on an empty and on a foreign directory)
and each of its states (tabs), at 80x24, the walk takes the rows help shows
(`hud.screens.help.key_groups`) and presses every key of every row, once per screen,
running the check CHECKS keeps for that binding (by id, or by action for Textual's own
id-less keys). A binding without a check fails the test, so a new key comes with one.
Between keys the screen is put back (`Screen.reset`); keys that leave it go last.
Read-only, a screen must list the same keys less every write action.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from textual.command import CommandPalette
from textual.selection import SELECT_ALL
from textual.widget import Widget
from textual.widgets import DataTable, OptionList, Static, TabbedContent

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.base import HudScreen
from hud.screens.decide import ConfirmDialog, ReasonDialog
from hud.screens.edit import BudgetAdjustScreen, NewMissionScreen, TomlEditorScreen
from hud.screens.help import HelpScreen, KeyGroup, key_groups, key_rows
from hud.screens.history import HistoryScreen
from hud.screens.loopexec import LoopexecScreen
from hud.screens.metrics import MetricsScreen
from hud.screens.mission import MissionScreen
from hud.screens.problems import ProblemsScreen
from tests.factory import mission, resume, three_missions
from tests.hud.conftest import until
from tests.small_support import LOOPEXEC_NOW, SMALL_NOW, VALID, copy_fixture, copy_loopexec
from widgets.filter import FilterField, Filtering
from widgets.row_table import RowTable
from widgets.tabs import replay as replay_widget
from widgets.tabs.execution import ExecutionView
from widgets.tabs.plan import PlanView
from widgets.tabs.replay import ReplayView
from widgets.tabs.replay_jump import JumpDialog
from widgets.tabs.review import ReviewView

# ---- the directories walked ----------------------------------------------------------------


def state_dir(root: Path) -> Path:
    """Missions with two pending requests, two plan versions, evidence and bad files;
    a request and a handoff longer than the screen, so that scrolling them shows."""
    three_missions(root)
    beta = resume(root, "beta")
    beta.request("r1", args={f"key{n}": "value " * 8 for n in range(40)})
    beta.request("r2", tool="ls", risk="read_only", args={"path": "/"})
    gamma = resume(root, "gamma")
    gamma.plan(2, reason="split the docs into a guide and a reference, " * 3)
    gamma.evidence("s2")
    gamma.handoff(plan_version=2, next_steps=[f"step {n} of the rest" for n in range(40)])
    mission(root, "delta", "A broken plan")
    (root / "missions/delta/plan/v2.json").write_text('{"schema": 1, "version": ')
    (root / "missions/delta/notes.txt").write_text("not part of the layout\n")
    return root


def empty_dir(root: Path) -> Path:
    root.mkdir(parents=True)
    return root


def other_dir(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "notes.txt").write_text("not a mission\n")
    return root


def small_dir(root: Path) -> Path:
    return copy_fixture(VALID, root)


def loopexec_dir(root: Path) -> Path:
    return copy_loopexec("runs", root)


# ---- the screens walked ---------------------------------------------------------------------


Opener = Callable[[Any, HudApp], Awaitable[None]]


@dataclass(frozen=True)
class Screen:
    """A screen as the walk opens it; its states (tabs) and how to put it in one."""

    name: str
    build: Callable[[Path], Path]
    opener: Opener
    reset: Callable[[Any, str], None] = lambda screen, state: None
    """Put the screen in `state` as the walk found it (between keys, too)."""
    states: tuple[str, ...] = ("",)
    now: datetime | None = None
    """The clock, for fixtures whose times are fixed (SMALL, loopexec)."""


async def rows_shown(pilot: Any, app: HudApp) -> None:
    await until(pilot, lambda: app.scanned.is_set() and bool(app.summaries))


async def overview(pilot: Any, app: HudApp) -> None:
    await rows_shown(pilot, app)


async def overview_filtered(pilot: Any, app: HudApp) -> None:
    await rows_shown(pilot, app)
    await pilot.press("slash", "a", "enter")


async def overview_placed(pilot: Any, app: HudApp) -> None:
    await until(pilot, lambda: app.scanned.is_set())
    await until(pilot, lambda: app.screen.place is not None)  # type: ignore[attr-defined]


def pushed(kind: type, action: Callable[[HudApp], object]) -> Opener:
    async def opener(pilot: Any, app: HudApp) -> None:
        await rows_shown(pilot, app)
        action(app)
        await until(pilot, lambda: isinstance(app.screen, kind))
        await pilot.pause(0.1)

    return opener


def active_tab(app: HudApp) -> str | None:
    tabs = app.screen.query(TabbedContent)
    return tabs.first().active if tabs else None


def opened(mission_id: Callable[[HudApp], str]) -> Opener:
    async def opener(pilot: Any, app: HudApp) -> None:
        await rows_shown(pilot, app)
        app.open_mission(mission_id(app))
        await until(pilot, lambda: active_tab(app) is not None and app.focused is not None)

    return opener


async def history(pilot: Any, app: HudApp) -> None:
    await opened(lambda app: "gamma")(pilot, app)
    await pilot.press("h")
    await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
    await pilot.pause(0.1)


def unfilter(node: Any) -> None:
    """Close every filter on the screen, leaving its list focused."""
    for owner in [node, *node.query("*")]:
        if isinstance(owner, Filtering) and owner.filtering:
            owner.action_clear_filter()


def reset_filtered(screen: Any, state: str) -> None:
    if not screen.filtering:
        screen.action_filter()
    screen.filter_field.value = "a"
    screen.set_focus(screen.table)


def reset_approvals(screen: Any, state: str) -> None:
    unfilter(screen)
    screen.everything = False
    screen.workspace_changed(None)


def reset_mission(screen: Any, tab: str) -> None:
    unfilter(screen)
    screen.action_tab(tab)
    for view in screen.query(PlanView):
        view.selected, view.base, view.diffing = None, None, False
        view.rerender()
    for log in screen.query(ExecutionView):
        log.following, log.step_filter, log.type_filter = True, None, None
        log.refresh_rows()
    for replay in screen.query(ReplayView):
        replay.action_live()
    for review in screen.query(ReviewView):
        review.selected = None


MISSION_TABS = (
    "intent",
    "plan",
    "execution",
    "evidence",
    "budget",
    "handoff",
    "replay",
    "review",
)
SMALL_TABS = ("intent", "plan", "progress", "handoff", "checks")

SCREENS = [
    Screen("overview", state_dir, overview, lambda screen, state: unfilter(screen)),
    Screen("overview-filtered", state_dir, overview_filtered, reset_filtered),
    Screen("overview-empty", empty_dir, overview_placed),
    Screen("overview-other", other_dir, overview_placed),
    Screen(
        "problems",
        state_dir,
        pushed(ProblemsScreen, HudApp.action_problems),
        lambda screen, state: unfilter(screen),
    ),
    Screen(
        "approvals", state_dir, pushed(ApprovalsScreen, HudApp.action_approvals), reset_approvals
    ),
    Screen("request", state_dir, pushed(RequestScreen, lambda app: app.open_request("beta", "r1"))),
    Screen("mission", state_dir, opened(lambda app: "gamma"), reset_mission, MISSION_TABS),
    Screen("history", state_dir, history, lambda screen, state: screen.action_unmark()),
    Screen(
        "small",
        small_dir,
        opened(lambda app: next(iter(app.summaries))),
        lambda screen, tab: screen.action_tab(tab),
        SMALL_TABS,
        SMALL_NOW,
    ),
    Screen(
        "loopexec",
        loopexec_dir,
        pushed(LoopexecScreen, lambda app: app.open_mission("loopexec:r-live")),
        now=LOOPEXEC_NOW,
    ),
    Screen("help", state_dir, pushed(HelpScreen, HudApp.action_help)),
    Screen("metrics", state_dir, pushed(MetricsScreen, HudApp.action_metrics)),
]


# ---- what each key must do -------------------------------------------------------------------


@dataclass
class Walk:
    """One key of one group, pressed on `home`."""

    pilot: Any
    app: HudApp
    home: Any
    group: KeyGroup
    key: str
    exits: list[object]

    async def press(self) -> None:
        await self.pilot.press(self.key)
        await self.pilot.pause()

    async def opens(self, kind: type, timeout: float = 3.0) -> Any:
        await self.press()
        await until(self.pilot, lambda: isinstance(self.app.screen, kind), timeout)
        return self.app.screen


Check = Callable[[Walk], Awaitable[None]]


def opens(kind: type) -> Check:
    async def check(walk: Walk) -> None:
        await walk.opens(kind)

    return check


async def back(walk: Walk) -> None:
    below = walk.app.screen_stack[-2]
    await walk.press()
    await until(walk.pilot, lambda: walk.app.screen is below)


async def quits(walk: Walk) -> None:
    await walk.press()
    assert walk.exits, "quit did not exit"


async def next_theme(walk: Walk) -> None:
    before = walk.app.theme
    await walk.press()
    assert walk.app.theme != before


def focus_moves(step: int) -> Check:
    async def check(walk: Walk) -> None:
        chain = walk.home.focus_chain
        focused = walk.app.focused
        expected = chain[(chain.index(focused) + step) % len(chain)] if focused in chain else None
        await walk.press()
        if chain:
            assert walk.app.focused is (expected or chain[0 if step > 0 else -1])

    return check


async def copies(walk: Walk) -> None:
    line = walk.home.query(Static).first()  # the header, or help's title
    walk.home.selections = {line: SELECT_ALL}
    await walk.press()
    assert walk.app.clipboard and walk.app.clipboard in str(line.render())


async def palette(walk: Walk) -> None:
    await walk.opens(CommandPalette)


def enabled(widget: OptionList) -> list[int]:
    """The options the cursor can land on (not the group headings)."""
    return [i for i in range(widget.option_count) if not widget.get_option_at_index(i).disabled]


def position(widget: Widget) -> tuple[float, float]:
    """(where the cursor or scroll is, how far it can go) in the focused list or text."""
    if isinstance(widget, RowTable):
        return widget.cursor, widget.row_count - 1
    if isinstance(widget, DataTable):
        return widget.cursor_row, widget.row_count - 1
    if isinstance(widget, OptionList):
        options = enabled(widget)
        return options.index(widget.highlighted or options[0]), len(options) - 1
    return widget.scroll_y, widget.max_scroll_y


def place(widget: Widget, at_end: bool) -> None:
    _, last = position(widget)
    if isinstance(widget, RowTable):
        widget.move_to(int(last) if at_end else 0)
    elif isinstance(widget, DataTable):
        widget.move_cursor(row=int(last) if at_end else 0, animate=False)
    elif isinstance(widget, OptionList):
        widget.highlighted = enabled(widget)[-1 if at_end else 0]
    else:
        widget.scroll_to(y=last if at_end else 0, animate=False)


def moves(forward: bool, *, to_end: bool = False) -> Check:
    """The cursor (or the text) moves forward or back, or right to the end it names."""

    async def check(walk: Walk) -> None:
        widget = walk.app.focused
        assert widget is not None
        place(widget, at_end=not forward)
        await walk.pilot.pause()
        before, last = position(widget)
        await walk.press()
        await walk.pilot.pause()
        after, last = position(widget)
        if last <= 0:  # it all fits (the budget tab at 80x24): nothing it could move
            return
        if to_end:
            assert after == (last if forward else 0) or (
                after > before if forward else after < before
            )
        else:
            assert after > before if forward else after < before, (walk.key, before, after)

    return check


async def filters(walk: Walk) -> None:
    await walk.press()
    field = walk.app.focused
    assert isinstance(field, FilterField) and field.display


async def clears_filter(walk: Walk) -> None:
    owner = next(
        n for n in [walk.home, *walk.home.query("*")] if isinstance(n, Filtering) and n.filtering
    )
    await walk.press()
    assert not owner.filtering and owner.filter_field.value == ""


async def opens_row(walk: Walk) -> None:
    before = walk.app.screen
    await walk.press()
    await until(walk.pilot, lambda: walk.app.screen is not before or plan_selected(walk))


def plan_selected(walk: Walk) -> bool:
    views = walk.home.query(PlanView)
    return bool(views) and views.first().selected is not None


async def new_mission(walk: Walk) -> None:
    screen = await walk.opens(NewMissionScreen)
    await until(walk.pilot, lambda: screen.focused is not None and screen.focused.id == "title")


async def confirms(walk: Walk) -> None:
    await walk.opens(ConfirmDialog)


async def asks_reason(walk: Walk) -> None:
    screen = await walk.opens(ReasonDialog)
    assert screen.focused is not None and screen.focused.id == "reason"


def toggles(attribute: str, node: Callable[[Walk], Any] = lambda walk: walk.home) -> Check:
    async def check(walk: Walk) -> None:
        target = node(walk)
        before = getattr(target, attribute)
        await walk.press()
        await until(walk.pilot, lambda: getattr(target, attribute) != before)

    return check


async def plays(walk: Walk) -> None:
    """`p` starts (or pauses) playing; no step is taken before the check sees it, as
    play stops by itself at the newest event, which a loaded machine reaches first."""
    with patch.object(replay_widget, "PLAY_SECONDS", 60):
        await toggles("playing", lambda walk: walk.home.query_one(ReplayView))(walk)


def to_mission(mission_id: str | None = None) -> Check:
    async def check(walk: Walk) -> None:
        screen = await walk.opens(MissionScreen)
        if mission_id is not None:
            assert screen.mission_id == mission_id

    return check


def to_tab(tab: str) -> Check:
    async def check(walk: Walk) -> None:
        await walk.press()
        await until(walk.pilot, lambda: active_tab(walk.app) == tab)

    return check


def steps_tab(step: int, tabs: list[str]) -> Check:
    async def check(walk: Walk) -> None:
        now = active_tab(walk.app)
        assert now is not None
        await walk.press()
        wanted = tabs[(tabs.index(now) + step) % len(tabs)]
        await until(walk.pilot, lambda: active_tab(walk.app) == wanted)

    return check


def edits(name: str) -> Check:
    async def check(walk: Walk) -> None:
        screen = await walk.opens(TomlEditorScreen)
        assert screen.relpath.endswith(name)

    return check


async def exports(walk: Walk) -> None:
    await walk.press()
    target = Path.cwd() / f"{walk.home.mission_id}-handoff.md"
    await until(walk.pilot, target.exists)


def plan_view(walk: Walk) -> PlanView:
    return walk.home.query_one(PlanView)


def execution(walk: Walk) -> ExecutionView:
    return walk.home.query_one(ExecutionView)


async def older_version(walk: Walk) -> None:
    view = plan_view(walk)
    before = view.current
    await walk.press()
    assert view.current is not None and before is not None and view.current < before


async def newer_version(walk: Walk) -> None:
    view = plan_view(walk)
    view.selected = 1
    view.rerender()
    await walk.press()
    assert view.current == 2


async def diff_base(walk: Walk) -> None:
    view = plan_view(walk)
    await walk.press()
    assert view.diffing and view.base_version == 1


def replays(
    seq: Callable[[ReplayView], int],
    *,
    live: bool = False,
    start: Callable[[ReplayView], None] = lambda view: None,
) -> Check:
    """From the LIVE pin (or where `start` put it), the key shows event `seq(view)`."""

    async def check(walk: Walk) -> None:
        view = walk.home.query_one(ReplayView)
        await until(walk.pilot, lambda: view.frame is not None and view.last_seq > 2)
        start(view)
        wanted = seq(view)
        await walk.press()
        await until(
            walk.pilot,
            lambda: (
                view.live == live and view.frame is not None and view.frame.moment.seq == wanted
            ),
        )

    return check


def aims(kind: str, hops: int) -> Check:
    """The key asks where `kind` points (`hops` landmarks away) and the answer is shown."""

    async def check(walk: Walk) -> None:
        view = walk.home.query_one(ReplayView)
        await until(walk.pilot, lambda: view.frame is not None and view.last_seq > 2)
        await walk.press()
        await until(
            walk.pilot,
            lambda: (
                view.aim is None
                and view.bearings is not None
                and view.bearings.aim is not None
                and view.bearings.aim[:2] == (kind, hops)
            ),
            10.0,
        )

    return check


def reviews(version: int, start: int | None = None) -> Check:
    """The key shows the review of plan `version` (from plan `start`, else the latest)."""

    async def check(walk: Walk) -> None:
        view = walk.home.query_one(ReviewView)
        if start is not None:
            view.selected = start
            walk.home.workspace_changed(None)
        shown = lambda: view.result.plan_version if view.result else None  # noqa: E731
        await until(walk.pilot, lambda: shown() == (start or 2))
        await walk.press()
        await until(walk.pilot, lambda: shown() == version)

    return check


async def clears_log_filters(walk: Walk) -> None:
    view = execution(walk)
    view.action_next_type()
    await walk.press()
    assert view.step_filter is None and view.type_filter is None


async def marks(walk: Walk) -> None:
    await walk.press()
    assert walk.home.marked


async def unmarks(walk: Walk) -> None:
    walk.home.action_mark()
    await walk.press()
    assert not walk.home.marked


async def copies_accept(walk: Walk) -> None:
    await walk.press()
    assert walk.app.clipboard.startswith("cd ")


async def closes_help(walk: Walk) -> None:
    await walk.press()
    assert not isinstance(walk.app.screen, HelpScreen)


CHECKS: dict[str, Check] = {
    # the app's keys, on every screen
    "quit": quits,
    "help": opens(HelpScreen),
    "problems": opens(ProblemsScreen),
    "approvals": opens(ApprovalsScreen),
    "metrics": opens(MetricsScreen),
    "next_theme": next_theme,
    "command_palette": palette,
    "app.focus_next": focus_moves(1),
    "app.focus_previous": focus_moves(-1),
    "screen.copy_text": copies,
    # lists, tables and documents
    "table.up": moves(False),
    "table.down": moves(True),
    "table.page_up": moves(False, to_end=True),
    "table.page_down": moves(True, to_end=True),
    "table.first": moves(False, to_end=True),
    "table.last": moves(True, to_end=True),
    "table.select": opens_row,
    "scroll.up": moves(False),
    "scroll.down": moves(True),
    "scroll.page_up": moves(False, to_end=True),
    "scroll.page_down": moves(True, to_end=True),
    "scroll.top": moves(False, to_end=True),
    "scroll.bottom": moves(True, to_end=True),
    # filters
    **{
        f"{scope}.filter": filters
        for scope in ("overview", "approvals", "problems", "execution", "evidence")
    },
    **{
        f"{scope}.clear": clears_filter
        for scope in ("overview", "approvals", "problems", "execution", "evidence")
    },
    # overview
    "overview.new": new_mission,
    "overview.create": confirms,
    # approvals
    "approvals.back": back,
    "approvals.all": toggles("everything"),
    "approvals.mission": to_mission(),
    "request.back": back,
    "request.approve": asks_reason,
    "request.reject": asks_reason,
    "request.mission": to_mission("beta"),
    "problems.back": back,
    # a mission
    "mission.back": back,
    "mission.export": exports,
    **{f"mission.{tab}": to_tab(tab) for tab in MISSION_TABS},
    "mission.next": steps_tab(1, list(MISSION_TABS)),
    "mission.prev": steps_tab(-1, list(MISSION_TABS)),
    "mission.edit": edits("intent.toml"),
    "mission.edit_constraints": edits("constraints.toml"),
    "mission.history": opens(HistoryScreen),
    "mission.budget_adjust": opens(BudgetAdjustScreen),
    "plan.version": older_version,
    "plan.version_newer": newer_version,
    "plan.diff": toggles("diffing", plan_view),
    "plan.base": diff_base,
    "execution.follow": toggles("following", execution),
    "execution.step": toggles("step_filter", execution),
    "execution.type": toggles("type_filter", execution),
    "execution.clear": clears_log_filters,
    "replay.back": replays(lambda view: view.last_seq - 1),
    "replay.forward": replays(lambda view: 2, start=ReplayView.action_first),
    "replay.first": replays(lambda view: 1),
    "replay.live": replays(lambda view: view.last_seq, live=True, start=ReplayView.action_first),
    "replay.play": plays,
    "replay.jump": opens(JumpDialog),
    "replay.next_landmark": aims("landmark", 1),
    "replay.prev_landmark": aims("landmark", -1),
    "replay.first_problem": aims("problem", 0),
    "review.version": reviews(1),
    "review.version_newer": reviews(2, start=1),
    # history
    "history.back": back,
    "history.mark": marks,
    "history.unmark": unmarks,
    "history.down": moves(True),
    "history.up": moves(False),
    # SMALL
    "small.back": back,
    "small.edit_intent": edits("intent.small.yml"),
    "small.edit_constraints": edits("constraints.small.yml"),
    "small.copy_accept": copies_accept,
    **{f"small.{tab}": to_tab(tab) for tab in SMALL_TABS},
    "small.next": steps_tab(1, list(SMALL_TABS)),
    "small.prev": steps_tab(-1, list(SMALL_TABS)),
    # loopexec
    "loopexec.back": back,
    "loopexec.down": moves(True),
    "loopexec.up": moves(False),
    "help.close": closes_help,
    # metrics
    "metrics.back": back,
    "metrics.window": toggles("window"),
    "metrics.mission": toggles("mission_id"),
    "metrics.mission_prev": toggles("mission_id"),
}
"""Binding id (or action, for Textual's own keys) -> what pressing it must do."""


def name_of(group: KeyGroup) -> str:
    return group.binding.id or group.binding.action


async def put_back(pilot: Any, app: HudApp, screen: Screen, home: Any, state: str) -> None:
    """Close whatever a key opened, then put the screen back in `state`."""
    for _ in range(6):
        if app.screen is home:
            break
        await pilot.press("escape")
        await pilot.pause()
    assert app.screen is home, f"{screen.name}: could not get back from {app.screen}"
    home.selections = {}
    screen.reset(home, state)
    if state:
        await until(pilot, lambda: active_tab(app) == state and app.focused is not None)
    await pilot.pause()


async def walked(
    screen: Screen, root: Path, read_only: bool, walk: Callable[[Any, HudApp, Any, str], Any]
) -> None:
    """Open `screen` on `root` and run `walk(pilot, app, home, state)` in each state."""
    now = screen.now
    app = HudApp(root, read_only=read_only, live=False, clock=(lambda: now) if now else None)
    async with app.run_test(size=(80, 24)) as pilot:
        await screen.opener(pilot, app)
        home = app.screen
        for state in screen.states:
            await put_back(pilot, app, screen, home, state)
            if await walk(pilot, app, home, state):
                return


@pytest.mark.parametrize(
    "screen",
    SCREENS,
    ids=lambda s: s.name,
)
@pytest.mark.slow
async def test_every_listed_key_does_what_it_says(
    screen: Screen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each key is pressed once per screen: in the first state (tab) that lists it."""
    monkeypatch.chdir(tmp_path)  # the handoff export lands here
    for name in ("VISUAL", "EDITOR"):  # editing happens in the in-app editor
        monkeypatch.delenv(name, raising=False)
    pressed: set[tuple[str, str]] = set()
    leaving: list[tuple[KeyGroup, str]] = []

    async def walk(pilot: Any, app: HudApp, home: Any, state: str) -> bool:
        groups = key_groups(home)
        missing = [name_of(group) for group in groups if name_of(group) not in CHECKS]
        assert missing == [], f"{screen.name} {state}: keys listed without a check: {missing}"
        for group in groups:
            seen = (type(group.node).__name__, name_of(group))
            if seen in pressed:
                continue
            pressed.add(seen)
            if CHECKS[name_of(group)] in (back, closes_help):
                leaving.append((group, state))  # last: after it, nothing to put back
                continue
            for binding in group.bindings:
                await press(pilot, app, home, group, binding.key, state)
                await put_back(pilot, app, screen, home, state)
        if state != screen.states[-1]:
            return False
        for group, where in leaving:
            for binding in group.bindings:
                if not home.is_current:  # the key before left it: open it again
                    await screen.opener(pilot, app)
                    home = app.screen
                await put_back(pilot, app, screen, home, where)
                await press(pilot, app, home, group, binding.key, where)
        return True

    await walked(screen, screen.build(tmp_path / "state"), False, walk)


async def press(pilot: Any, app: HudApp, home: Any, group: KeyGroup, key: str, state: str) -> None:
    exits: list[object] = []
    app.exit = lambda *args, **kwargs: exits.append(args)  # type: ignore[method-assign]
    theme = app.theme
    try:
        await CHECKS[name_of(group)](Walk(pilot, app, home, group, key, exits))
    except AssertionError as error:
        where = f"{type(home).__name__} {state}: {key} ({name_of(group)})"
        raise AssertionError(f"{where}: {error}") from error
    finally:
        app.theme = theme


def lister(listed: list[list[tuple[str, str]]]) -> Callable[..., Awaitable[bool]]:
    """A walk that only notes (binding, action) of each key listed, state by state."""

    async def walk(pilot: Any, app: HudApp, home: Any, state: str) -> bool:
        listed.append([(name_of(group), group.binding.action) for group in key_groups(home)])
        return False

    return walk


def guarded(screen: type[HudScreen]) -> frozenset[str]:
    """The writes, decisions and saves `screen` and every screen below it declare."""
    below = (guarded(sub) for sub in screen.__subclasses__())
    return screen.WRITES.union(screen.DECIDES, screen.SAVES, *below)


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: s.name)
@pytest.mark.slow
async def test_read_only_lists_the_same_keys_but_writes(screen: Screen, tmp_path: Path) -> None:
    """Read-only, a screen lists exactly the keys it lists writable, less every write,
    decision and save (each screen's `WRITES`, `DECIDES`, `SAVES`): what cannot be done
    is not offered."""
    writable: list[list[tuple[str, str]]] = []
    read_only: list[list[tuple[str, str]]] = []
    await walked(screen, screen.build(tmp_path / "writable"), False, lister(writable))
    await walked(screen, screen.build(tmp_path / "read-only"), True, lister(read_only))
    for keys, kept in zip(writable, read_only, strict=True):
        hidden = guarded(HudScreen)
        assert kept == [key for key in keys if key[1] not in hidden]


async def test_help_shows_the_walked_keys(tmp_path: Path) -> None:
    """What the walk presses is what `?` shows: its rows come from the same groups."""
    root = state_dir(tmp_path / "state")
    app = HudApp(root, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await overview(pilot, app)
        expected = [(str(k), str(d), str(i)) for k, d, i in key_rows(app.screen)]
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("#keys", DataTable)
        shown = [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
        assert shown == expected
