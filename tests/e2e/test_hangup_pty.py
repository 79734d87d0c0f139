"""The HUD ends with its terminal: closed window, dropped ssh connection, hung-up pty.

The real `hud` runs on a pty; the test closes the pty's master side (what a terminal
emulator or sshd does when the window or the connection goes) and the HUD must be gone
within EXIT_SECONDS, with every process it started: as the terminal's session leader
(it gets SIGHUP), and in a session of its own (no SIGHUP reaches it: it reads
end-of-input, where it used to spin for ever as an orphan).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.pty_screen import DETACH, PtyHud, descendants, running, wait_gone

pytestmark = pytest.mark.e2e

EXIT_SECONDS = 2.0
HANGUP_EXIT = 129


@pytest.fixture
def started() -> Iterator[list[int]]:
    """Pids the test saw; any still running at the end is killed (and fails the test)."""
    pids: list[int] = []
    yield pids
    left = [pid for pid in pids if running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "processes outlived the HUD"


def test_a_closed_terminal_ends_the_demo_and_its_simulator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, started: list[int]
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where `hud demo` makes its directory
    hud = PtyHud(["demo", "--missions", "2"])
    try:
        hud.wait_for("live")
        started += [hud.process.pid, *descendants(hud.process.pid)]
        assert len(started) >= 2, "the simulator runs"
        assert list(tmp_path.glob("hud-demo-*")), "the demo directory exists"
        took = hud.hang_up(EXIT_SECONDS)
        assert took is not None, "the HUD still runs after its terminal went away"
        assert hud.process.exitstatus == HANGUP_EXIT  # it exited; no signal killed it
        assert wait_gone(started, EXIT_SECONDS) is not None
        assert list(tmp_path.glob("hud-demo-*")) == []  # it cleaned up after itself
    finally:
        if hud.process.isalive():
            hud.process.terminate(force=True)


def test_a_closed_terminal_ends_a_hud_that_gets_no_sighup(
    state_dir: Path, started: list[int]
) -> None:
    hud = PtyHud.spawn([sys.executable, "-c", DETACH, *PtyHud.hud_argv(str(state_dir))])
    try:
        hud.wait_for("Deploy the")
        started += descendants(hud.process.pid)
        assert started, "the HUD runs below the wrapper"
        hud.hang_up()  # the wrapper, the terminal's session leader, dies of SIGHUP
        took = wait_gone(started, EXIT_SECONDS)
        assert took is not None, "the HUD still runs after its terminal went away"
    finally:
        if hud.process.isalive():
            hud.process.terminate(force=True)


def test_sighup_ends_the_hud_through_its_own_exit(state_dir: Path) -> None:
    """`kill -HUP` (sshd ending a session, a terminal multiplexer closing a pane)."""
    hud = PtyHud([str(state_dir)])
    try:
        hud.wait_for("Deploy the")
        hud.process.kill(signal.SIGHUP)
        assert hud.close() == HANGUP_EXIT  # exited with its code: no signal killed it
        assert hud.process.signalstatus is None
    finally:
        if hud.process.isalive():
            hud.process.terminate(force=True)
