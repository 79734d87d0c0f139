"""80x24 is a first-class size: on every screen, as the terminal shows it, nothing is
hidden and nothing covers.

For each screen at 80x24 the rendered text (what the compositor draws, as a terminal
would show it) must show: the focused row's full id, every visible row's id whole or cut
in the middle (both ends kept, never below `ID_LEAST` cells), `?` and `q` in the footer;
and a burst of notifications takes one line, never over the focused widget.
"""

from __future__ import annotations

import io
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import TabbedContent
from textual.widgets._toast import Toast

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.help import HelpScreen
from hud.screens.history import HistoryScreen
from hud.screens.metrics import MetricsScreen
from hud.screens.mission import MissionScreen
from hud.screens.mission_views import TABS
from hud.screens.problems import ProblemsScreen
from tests.factory import mission, resume, three_missions
from tests.hud.conftest import until
from widgets.columns import ID_LEAST
from widgets.keyed_table import KeyedTable
from widgets.mission_table import MissionTable
from widgets.request_view import QueueTable

LONG_MISSIONS = {
    "deploy-gateway-eu-west-2": "Cut over to gateway v2",
    "deploy-gateway-eu-west-3": "Cut over to gateway v2",
    "quarterly-cleanup-2": "Clean up the old buckets",
}
LONG_REQUESTS = ("deploy-gateway-eu-west-staging", "deploy-gateway-eu-west-metrics")
LONG_EVIDENCE = ("staging-gateway-answers-on-v42", "staging-gateway-error-rate-flat")


def screen_lines(app: HudApp) -> list[str]:
    """The screen as a terminal shows it, one string per line."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        color_system=None,
        legacy_windows=False,
        safe_box=False,
    )
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console.print(update)
    return console.export_text(styles=False).splitlines()[:height]


def recoverable(real: str, text: str) -> bool:
    """Whether `text` shows `real` whole, or cut in the middle: `start…end`, both ends
    of the real id (at least 3 characters each), at least ID_LEAST cells."""
    if re.search(rf"(?<![\w.-]){re.escape(real)}(?![\w.-])", text):
        return True
    for start, end in re.findall(r"([\w.-]+)…([\w.-]+)", text):
        form = f"{start}…{end}"
        readable = len(form) >= min(ID_LEAST, len(real)) and min(len(start), len(end)) >= 3
        if readable and real.startswith(start) and real.endswith(end):
            return True
    return False


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """The three missions, missions with long ids, and requests with long ids."""
    root = tmp_path / "state"
    three_missions(root)
    for mission_id, title in LONG_MISSIONS.items():
        built = mission(root, mission_id, title)
        built.step("s1", "waiting_for_approval")
        for request_id in LONG_REQUESTS:
            built.request(request_id, tool="k8s.apply", summary="Switch the staging gateway")
    gamma = resume(root, "gamma")
    gamma.evidence("s2")
    first = resume(root, "deploy-gateway-eu-west-2")
    for evidence_id in LONG_EVIDENCE:
        first.append(
            "evidence",
            id=evidence_id,
            step="s1",
            observed="the staging gateway answers",
            method="curl",
            proves="staging is on v42",
            verdict="pass",
        )
    yield root


# ---- the screens -----------------------------------------------------------------------------


Opener = Callable[[Any, HudApp], Awaitable[None]]


async def scanned(pilot: Any, app: HudApp) -> None:
    await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 6, 10)
    await pilot.pause(0.1)


async def overview(pilot: Any, app: HudApp) -> None:
    await scanned(pilot, app)


async def approvals(pilot: Any, app: HudApp) -> None:
    await scanned(pilot, app)
    await pilot.press("a")
    await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))
    await until(pilot, lambda: len(app.screen.query_one(QueueTable).keys) == 7)


async def request(pilot: Any, app: HudApp) -> None:
    await scanned(pilot, app)
    app.open_request("deploy-gateway-eu-west-2", LONG_REQUESTS[0])
    await until(pilot, lambda: getattr(app.screen, "review", None) is not None)
    await pilot.pause(0.2)


def tab(name: str) -> Opener:
    async def opener(pilot: Any, app: HudApp) -> None:
        await scanned(pilot, app)
        app.open_mission("deploy-gateway-eu-west-2", name)
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, MissionScreen)
                and any(tabs.active == name for tabs in app.screen.query(TabbedContent))
            ),
        )
        await pilot.pause(0.3)

    return opener


def pushed(kind: type, key: str) -> Opener:
    async def opener(pilot: Any, app: HudApp) -> None:
        await scanned(pilot, app)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, kind))
        await pilot.pause(0.2)

    return opener


async def history(pilot: Any, app: HudApp) -> None:
    await tab("intent")(pilot, app)
    await pilot.press("h")
    await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
    await pilot.pause(0.2)


SCREENS: dict[str, Opener] = {
    "overview": overview,
    "approvals": approvals,
    "request": request,
    **{f"mission-{t.id}": tab(t.id) for t in TABS},
    "problems": pushed(ProblemsScreen, "exclamation_mark"),
    "metrics": pushed(MetricsScreen, "M"),
    "help": pushed(HelpScreen, "question_mark"),
    "history": history,
}


def row_ids(app: HudApp) -> tuple[list[str], str | None]:
    """The ids of the rows the focused table shows on screen, and the focused row's id
    (for a request, the ids it is about)."""
    screen = app.screen
    for table in screen.query(MissionTable):
        top = round(table.scroll_y)
        visible = table.order[top : top + table.size.height - 1]
        return visible, table.cursor_key
    for queue in screen.query(QueueTable):
        items = {item.key: item for item in queue._items}
        ids = [part for key in queue.keys for part in key.split("/", 1)]
        item = items.get(queue.selected_key or "")
        return ids, None if item is None else f"{item.mission} {item.request_id}"
    focused = app.focused
    if isinstance(focused, KeyedTable) and focused.id_columns:
        columns = [i for i, key in enumerate(focused._column_keys) if key in focused.id_columns]
        ids = [focused.cells_of(key)[i].plain for key in focused.keys for i in columns]
        return ids, None
    if isinstance(screen, RequestScreen):
        return [screen.mission_id, screen.request_id], None
    if isinstance(screen, MissionScreen | HistoryScreen):
        return [screen.mission_id], None
    return [], None


@pytest.mark.parametrize("name", list(SCREENS))
async def test_every_screen_at_80x24_hides_and_covers_nothing(
    root: Path, name: str, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await SCREENS[name](pilot, app)
        lines = screen_lines(app)
        text = "\n".join(lines)

        footer = lines[-1]
        if isinstance(app.screen, HelpScreen):  # a dialog: its own line names the keys
            assert "esc/q/?: close" in text, text
        else:
            assert "? Help" in footer and "q Quit" in footer, footer

        ids, focused = row_ids(app)
        for real in ids:
            assert recoverable(real, text), (real, text)
        if focused is not None:
            assert all(part in text for part in focused.split()), (focused, text)

        for n in range(3):  # a burst, as at start or when requests arrive
            app.notify(f"request number {n} arrived in a mission with a long id", title="New")
        await until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.3)
        toasts = [t for t in app.screen.query(Toast) if t.region.area]
        assert len(toasts) == 1 and toasts[0].region.height == 1
        shown = screen_lines(app)
        assert "request number 2 arrived" in "\n".join(shown)  # the newest
        focus = app.focused
        if focus is not None and not isinstance(app.screen, HelpScreen):
            assert not toasts[0].region.overlaps(focus.region), (toasts[0].region, focus.region)
        assert shown[-1] == footer  # the footer stays


@pytest.mark.parametrize("name", ["overview", "approvals"])
async def test_a_wide_screen_cuts_no_id_that_fits(
    root: Path, name: str, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(root, live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await SCREENS[name](pilot, app)
        text = "\n".join(screen_lines(app))
        assert "…" not in text.split("\n", 2)[2].replace("so far…", "")
        for real in row_ids(app)[0]:
            assert real in text


async def test_the_only_row_after_filtering_shows_its_id_whole(
    root: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot, app)
        table = app.screen.query_one(MissionTable)
        await pilot.press("slash", *"quarterly")
        await until(pilot, lambda: table.order == ["quarterly-cleanup-2"])
        await pilot.pause(0.1)
        row = next(line for line in screen_lines(app) if "Clean" in line)
        assert "quarterly-cleanup-2" in row


async def test_the_plan_tab_footer_keeps_its_acts_at_80_columns(
    root: Path, make_app: Callable[..., HudApp]
) -> None:
    """Before ? and q, the footer keeps what the screen ranks first: Back, the edits,
    History and Approvals; the tab's own view keys give way (help lists them)."""
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await tab("plan")(pilot, app)
        footer = screen_lines(app)[-1]
        for key in ("esc Back", "e Edit intent", "E Edit constraints", "h History"):
            assert key in footer, footer
        assert len(footer.rstrip()) <= 80
