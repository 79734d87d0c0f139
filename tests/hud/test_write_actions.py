"""Write actions are declared per screen (`HudScreen.WRITES`, `DECIDES`, `SAVES`): a
screen hides its own writes without a writer, and nothing of another screen's."""

from __future__ import annotations

from pathlib import Path

import pytest

from hud.app import HudApp
from hud.screens.approvals import RequestScreen
from hud.screens.base import HudScreen
from hud.screens.mission import MissionScreen
from hud.screens.overview import OverviewScreen
from hud.screens.small import SmallScreen
from tests.hud.conftest import until


@pytest.mark.parametrize("screen", [OverviewScreen, MissionScreen, SmallScreen, RequestScreen])
def test_each_declared_write_is_an_action_of_its_screen(screen: type[HudScreen]) -> None:
    declared = screen.WRITES | screen.DECIDES | screen.SAVES
    assert declared
    assert all(callable(getattr(screen, f"action_{action}", None)) for action in declared)


class Notes(HudScreen):
    """A screen with actions named like other screens' writes, none of them a write."""

    def action_export(self) -> None: ...

    def action_edit_intent(self) -> None: ...


async def test_a_write_of_one_screen_is_not_hidden_on_another(state_dir: Path) -> None:
    app = HudApp(state_dir, read_only=True, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        notes = Notes()
        await app.push_screen(notes)
        assert notes.check_action("export", ()) is True
        assert notes.check_action("edit_intent", ()) is True
        mission = MissionScreen("beta")
        await app.push_screen(mission)
        assert mission.check_action("export", ()) is False  # read-only saves nothing
        assert mission.check_action("edit_intent", ()) is False
