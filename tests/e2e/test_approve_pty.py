"""The real `hud` in a pseudo-terminal: approve one request by keys, reject another.

Starts `hud DIR` (the installed console script) under ptyprocess at 100x30, feeds its
output to a pyte screen, presses keys like a person, and reads the screen and the files.
"""

from __future__ import annotations

import os
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pyte
import pytest
from ptyprocess import PtyProcess

from tests.factory import mission

pytestmark = pytest.mark.e2e

COLS, ROWS = 100, 30
HUD = Path(sys.executable).with_name("hud")


class Terminal:
    """A pty running the HUD, and the screen it has drawn."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.process = PtyProcess.spawn(argv, env=env, dimensions=(ROWS, COLS))

    def pump(self, seconds: float = 0.05) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.fileobj.closed or not self.process.isalive():
                return
            try:
                ready = self.process.read(65536) if _readable(self.process.fd, 0.02) else b""
            except EOFError:
                return
            if ready:
                self.stream.feed(ready)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, condition: Callable[[str], bool], timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            if condition(self.text()):
                return self.text()
        raise AssertionError(f"not on screen in {timeout} s:\n{self.text()}")

    def press(self, data: str) -> None:
        self.process.write(data.encode())
        self.pump(0.15)

    def close(self) -> None:
        if self.process.isalive():
            self.process.terminate(force=True)


def _readable(fd: int, timeout: float) -> bool:
    import select

    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    if not HUD.exists():
        pytest.skip("the hud console script is not installed in this environment")
    root = tmp_path / "state"
    beta = mission(root, "beta", "Deploy the service")
    beta.step("s1", "waiting_for_approval")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/srv"})
    beta.request("r2", risk="external_write", tool="deploy", args={"target": "prod"})
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    term = Terminal([str(HUD), str(root)], env)
    try:
        yield term, root
    finally:
        term.close()


def test_approve_and_reject_by_keys(terminal: tuple[Terminal, Path]) -> None:
    term, root = terminal
    term.wait_for(lambda s: "? 2 approvals" in s and "Deploy the service" in s)
    term.press("a")
    term.wait_for(lambda s: "2 pending" in s and "r1" in s and "r2" in s)
    # r2 (external_write) sorts first: no expiry on either, higher risk first
    term.press("\r")
    term.wait_for(lambda s: "deploy" in s and "external write" in s and '"target": "prod"' in s)
    term.press("n")
    term.wait_for(lambda s: "reason (required)" in s)
    term.press("not today\r")
    term.wait_for(lambda s: "rejected by" in s)
    term.press("\x1b")  # esc: back to the queue
    term.wait_for(lambda s: "1 pending" in s)
    term.press("\r")
    term.wait_for(lambda s: '"path": "/srv"' in s)
    term.press("y")
    term.wait_for(lambda s: "reason (optional)" in s)
    term.press("\r")
    term.wait_for(lambda s: "approved by" in s)
    approved = tomllib.loads((root / "missions/beta/approvals/r1.toml").read_text())
    rejected = tomllib.loads((root / "missions/beta/approvals/r2.toml").read_text())
    assert approved["decision"] == "approve" and approved["origin"].startswith("local")
    assert rejected["decision"] == "reject" and rejected["reason"] == "not today"
    term.press("q")
    deadline = time.monotonic() + 10
    while term.process.isalive() and time.monotonic() < deadline:
        term.pump(0.1)
    assert not term.process.isalive()
