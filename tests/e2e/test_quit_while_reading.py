"""`q` quits within a second even while a thread reads a huge log: the first scan, or the
Replay tab's first read of the events log (cli.launch does not wait for such reads)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.pty_screen import PtyHud
from tests.factory import T0, chain, mission, stamp

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LINES = 300_000
"""Enough lines that reading them takes seconds on any machine this runs on."""


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state directory whose one mission has a LINES-line events log."""
    root = tmp_path_factory.mktemp("huge") / "state"
    mission(root, "m")
    step = {"at": stamp(T0), "actor": "agent", "type": "step", "plan_version": 1}
    records = [{**step, "step": f"s{n % 2}", "state": "running"} for n in range(LINES)]
    (root / "missions" / "m" / "events.jsonl").write_bytes(chain(records))
    return root


@contextmanager
def hud_on(root: Path) -> Iterator[PtyHud]:
    hud = PtyHud([str(root)], cols=100, rows=30)
    try:
        yield hud
    finally:
        if hud.process.isalive():
            hud.process.terminate(force=True)


def quit_seconds(hud: PtyHud) -> float:
    """Seconds from pressing q to the process having ended with 0 (10 at most)."""
    pressed = time.monotonic()
    hud.press("q")
    hud.pump_until(lambda: not hud.process.isalive(), timeout=10)
    took = time.monotonic() - pressed
    assert hud.close() == 0
    return took


def test_q_during_the_first_scan(huge: Path) -> None:
    with hud_on(huge) as hud:
        hud.wait_for("scanning")
        took = quit_seconds(hud)
    assert took < 1.0, f"q took {took:.2f} s while the scan read"


def test_q_during_the_replay_tab_s_first_read(huge: Path) -> None:
    with hud_on(huge) as hud:
        hud.wait_for("● live", timeout=120)
        hud.press("\r")
        hud.wait_for("Replay")
        hud.press("7")
        hud.wait_for("Reading the events log")
        took = quit_seconds(hud)
    assert took < 1.0, f"q took {took:.2f} s while the replay read"
