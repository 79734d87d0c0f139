"""Run the real `hud` in a pseudo-terminal and read its screen with pyte."""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import ptyprocess
import pyte


def hud_command(*args: str) -> list[str]:
    """The installed `hud` console script beside this Python, else `python -m hud.cli`."""
    script = Path(sys.executable).with_name("hud")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "hud.cli", *args]


class PtyHud:
    """A `hud` process on a 80x24 (or other) pty, with its screen emulated by pyte."""

    def __init__(self, args: Sequence[str], cols: int = 80, rows: int = 24) -> None:
        self._start(hud_command(*args), cols, rows)

    @classmethod
    def spawn(cls, argv: Sequence[str], cols: int = 80, rows: int = 24) -> PtyHud:
        """Any command line (not only `hud`) on a pty."""
        self = cls.__new__(cls)
        self._start(list(argv), cols, rows)
        return self

    @staticmethod
    def hud_argv(*args: str) -> list[str]:
        return hud_command(*args)

    def _start(self, argv: list[str], cols: int, rows: int) -> None:
        env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor", TZ="UTC")
        env.pop("NO_COLOR", None)
        env.pop("TEXTUAL_THEME", None)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.process = ptyprocess.PtyProcess.spawn(argv, dimensions=(rows, cols), env=env)
        self.received = 0

    def pump(self, seconds: float = 0.1) -> None:
        """Feed whatever the process wrote within `seconds` into the screen."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            remaining = max(0.0, deadline - time.monotonic())
            if not self.process.isalive():
                break
            try:
                ready, _, _ = select.select([self.process.fd], [], [], remaining)
                if not ready:
                    continue
                data = self.process.read(65536)
            except EOFError:
                break
            self.received += len(data)
            self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, needle: str, timeout: float = 15.0) -> str:
        """Pump until `needle` is on screen; return the screen or fail with it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump(0.1)
            if needle in self.text():
                return self.text()
        raise AssertionError(f"{needle!r} not on screen after {timeout} s:\n{self.text()}")

    def press(self, keys: str) -> None:
        self.process.write(keys.encode())

    def close(self) -> int | None:
        """Wait briefly for exit, else terminate; return the exit status."""
        deadline = time.monotonic() + 10
        while self.process.isalive() and time.monotonic() < deadline:
            self.pump(0.1)
        if self.process.isalive():
            self.process.terminate(force=True)
        return self.process.exitstatus
