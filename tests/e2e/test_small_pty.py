"""End to end: the real `hud` in a pseudo-terminal on a copy of the valid SMALL fixture."""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyte
import pytest
from ptyprocess import PtyProcess

from tests.small_support import VALID, copy_fixture

pytestmark = pytest.mark.e2e

ROWS, COLUMNS = 24, 80


class Terminal:
    """A pty running `argv`, its output fed to a pyte screen."""

    def __init__(self, argv: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL")}
        env.update(TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS), TZ="UTC")
        self.process = PtyProcess.spawn(argv, dimensions=(ROWS, COLUMNS), env=env)
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def pump(self, seconds: float) -> None:
        ready, _, _ = select.select([self.process.fd], [], [], seconds)
        if ready:
            try:
                self.stream.feed(self.process.read(1 << 16))
            except EOFError:
                time.sleep(seconds)

    def wait_for(self, condition: Callable[[str], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition(self.text()):
            if time.monotonic() > deadline:
                raise AssertionError(f"screen never matched; it shows:\n{self.text()}")
            if not self.process.isalive():
                raise AssertionError(f"hud exited early; the screen was:\n{self.text()}")
            self.pump(0.05)

    def press(self, keys: bytes) -> None:
        self.process.write(keys)

    def close(self) -> None:
        if self.process.isalive():
            self.process.terminate(force=True)


def hud_argv(root: Path) -> list[str]:
    script = Path(sys.executable).with_name("hud")
    if script.exists():
        return [str(script), str(root)]
    return [sys.executable, "-m", "cli.main", str(root)]


def test_small_workspace_opens_and_quits(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    terminal = Terminal(hud_argv(root))
    try:
        terminal.wait_for(lambda text: "small:valid" in text)
        assert "blocked" in terminal.text() and "task-5" in terminal.text()
        terminal.press(b"\r")
        terminal.wait_for(lambda text: "resume task-5" in text and "1 Intent" in text)
        terminal.press(b"2")
        terminal.wait_for(lambda text: "task-1 " in text and "Find where the nightly" in text)
        terminal.press(b"q")
        deadline = time.monotonic() + 10
        while terminal.process.isalive() and time.monotonic() < deadline:
            terminal.pump(0.05)
        assert not terminal.process.isalive(), "hud did not quit on q"
        assert terminal.process.exitstatus == 0
    finally:
        terminal.close()
