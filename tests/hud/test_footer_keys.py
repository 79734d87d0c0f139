"""The footer draws its keys again only when they would show otherwise: Textual signals
a change of bindings at every focus change and binding refresh, and each new key is
styled anew (a mission's Enter and Esc cost twice the CPU when it recomposed on each)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets._footer import FooterKey

from hud.app import HudApp
from hud.screens.mission import MissionScreen
from tests.hud.conftest import until
from widgets.footer import HudFooter


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[HudFooter]:
    """Each footer, once for each time it composed its keys."""
    seen: list[HudFooter] = []
    compose = HudFooter.compose

    def counted(self: HudFooter):  # type: ignore[no-untyped-def]
        if self._bindings_ready:
            seen.append(self)
        return compose(self)

    monkeypatch.setattr(HudFooter, "compose", counted)
    return seen


def shown(app: HudApp) -> list[str]:
    return [key.description for key in app.screen.query(FooterKey)]


async def test_keys_are_composed_again_only_when_they_change(
    state_dir: Path, make_app: Callable[..., HudApp], composed: list[HudFooter]
) -> None:
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and "Quit" in shown(app))
        await pilot.pause(0.3)
        before = len(composed)
        for _ in range(4):
            await pilot.press("j", "k")
        await pilot.pause(0.3)
        assert len(composed) == before  # the cursor moved; the keys did not change
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen) and "Quit" in shown(app))
        await pilot.pause(0.3)
        on_mission = len(composed) - before
        for tab in "23451":
            await pilot.press(tab)
        await pilot.pause(0.3)
        assert "Quit" in shown(app)
        assert on_mission <= 3, f"composed {on_mission} times to open a mission"
        on_tabs = len(composed) - before - on_mission
        assert on_tabs <= 5 + 2, f"composed {on_tabs} times for 5 tabs"  # focus may pass by
