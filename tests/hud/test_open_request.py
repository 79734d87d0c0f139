"""`hud DIR --open MISSION/REQUEST` (a notification's link, through `hud web`): the
request's screen once the scan is done, over the approvals queue; ids of no request are
said in a toast and the HUD stays at its overview."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import _app_parser
from hud.app import HudApp
from hud.opening import parse
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.overview import OverviewScreen
from tests.hud.conftest import until


async def test_opens_the_request_ready_to_decide(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir, role="approver", opening=("beta", "r1"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        screen = app.screen
        assert (screen.mission_id, screen.request_id) == ("beta", "r1")
        assert isinstance(app.screen_stack[-2], ApprovalsScreen)
        await until(pilot, lambda: screen.check_action("approve", ()) is True)
        shown = {binding.action for _, binding, enabled, _ in screen.active_bindings.values()}
        assert "approve" in shown
        await pilot.press("y")
        await until(pilot, lambda: app.screen is not screen)  # the reason dialog


async def test_an_unknown_request_says_so(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir, opening=("beta", "nope"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await until(pilot, lambda: bool(app._notifications))
        assert "no request beta/nope here" in str(list(app._notifications)[-1].message)
        assert isinstance(app.screen, OverviewScreen)


@pytest.mark.parametrize(
    "text", ["beta", "beta/", "/r1", "../x/r1", "beta/r1/more", "Beta/r1", "beta/a..b", "b%2F/r"]
)
def test_only_two_ids(text: str) -> None:
    with pytest.raises(ValueError):
        parse(text)
    with pytest.raises(SystemExit):
        _app_parser().parse_args(["dir", "--open", text])


def test_two_ids() -> None:
    assert parse("beta/r1") == ("beta", "r1")
    assert _app_parser().parse_args(["dir", "--open", "beta/r-1.2"]).open == ("beta", "r-1.2")
