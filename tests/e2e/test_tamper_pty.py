"""A byte changed inside a log while the HUD runs on a directory that a simulated agent
keeps writing: the broken chain reaches the Problems screen within the scrub bound that
docs/format.md states (10 s), with the agent's appends going on around the change."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.pty_screen import PtyHud, hud_command

pytestmark = pytest.mark.e2e

BOUND = 10.0


def first_log(root: Path, timeout: float = 15.0) -> Path:
    """A mission log with at least two lines, once the simulator has written one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for log in sorted(root.glob("missions/*/events.jsonl")):
            if log.read_bytes().count(b"\n") >= 2:
                return log
        time.sleep(0.1)
    raise AssertionError(f"the simulator wrote no log under {root}")


def change_one_byte_of_line_1(log: Path) -> None:
    """A digit of line 1's time, changed in place: valid JSON, same size, broken chain."""
    with log.open("r+b") as handle:
        line = handle.readline()
        at = line.index(b'"at":"') + len(b'"at":"') + 3  # the year's last digit
        digit = line[at : at + 1]
        handle.seek(at)
        handle.write(b"7" if digit != b"7" else b"8")


def test_a_byte_changed_in_line_1_is_a_problem_within_the_bound(tmp_path: Path) -> None:
    root = tmp_path / "state"
    agent = subprocess.Popen(
        hud_command("simulate", str(root), "--missions", "3", "--rate", "20"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    hud: PtyHud | None = None
    try:
        log = first_log(root)
        mission = log.parent.name
        hud = PtyHud([str(root)], cols=160, rows=40)
        hud.wait_for(mission)
        hud.press("!")
        hud.wait_for("Problems")
        assert "hash chain broken" not in hud.text()
        change_one_byte_of_line_1(log)
        changed = time.monotonic()
        screen = hud.wait_for("hash chain broken at seq 2", timeout=BOUND)
        found = time.monotonic() - changed
        assert f"missions/{mission}/events.jsonl" in screen
        assert found <= BOUND
        assert agent.poll() is None, "the simulated agent kept writing throughout"
    finally:
        agent.kill()
        agent.wait()
        if hud is not None:
            hud.process.terminate(force=True)
