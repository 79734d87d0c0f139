"""End to end: the real `hud` in a pseudo-terminal, driven by keys, read from the screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.pty_screen import PtyHud
from tests.factory import resume

pytestmark = pytest.mark.e2e


def test_navigate_by_keys_and_quit(state_dir: Path) -> None:
    hud = PtyHud([str(state_dir)])
    try:
        screen = hud.wait_for("Deploy the")
        assert "needs you" in screen and "Status" in screen
        assert screen.index("Deploy the") < screen.index("Migrate the")
        hud.press("j\r")  # the second row is alpha: Migrate the database
        screen = hud.wait_for("Execution")
        assert "Intent" in screen and "Plan" in screen
        hud.press("\x1b")
        hud.wait_for("Write the docs")
        hud.press("?")
        screen = hud.wait_for("overview.filter")  # the rows, not just the dialog's title
        assert "Keys on this screen" in screen
        hud.press("\x1b")
        hud.press("!")
        hud.wait_for("problems")
        hud.press("\x1b")
        hud.wait_for("Status")
        resume(state_dir, "alpha").step("s1", "failed", reason="disk full")
        hud.wait_for("failed")
        hud.press("q")
        assert hud.close() == 0
    finally:
        if hud.process.isalive():
            hud.process.terminate(force=True)
