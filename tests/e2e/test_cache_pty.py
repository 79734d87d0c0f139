"""The real `hud` over the verified-prefix cache: a log whose prefix the cache holds is
read from there, the header says "cached, not verified" until the background scrub has
hashed it, and an edit inside the prefix that came with an append is on the Problems
screen within 30 s."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from store.index.check import check
from tests.e2e.pty_screen import PtyHud
from tests.factory import T0, chain, mission, resume, stamp

pytestmark = pytest.mark.e2e

BOUND = 30.0


def test_an_edit_hidden_behind_an_append_is_found_after_first_paint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "state"
    mission(root, "m")
    steps = [
        {
            "at": stamp(T0),
            "actor": "agent",
            "type": "step",
            "step": "s1",
            "plan_version": 1,
            "state": "running",
            "reason": f"line {n}",
        }
        for n in range(300)
    ]
    log = root / "missions/m/events.jsonl"
    log.write_bytes(chain(steps))  # over 32 KiB: worth keeping
    check(root, cached=True)  # the prefix verified and kept
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"reason":"line 1"', b'"reason":"line 7"', 1))  # in place
    resume(root, "m").step("s2", "running")  # and an append chained to the last line
    hud = PtyHud([str(root)], cols=160, rows=40)
    try:
        hud.wait_for("cached, not verified", timeout=60)
        painted = time.monotonic()
        hud.press("!")
        hud.wait_for("hash chain broken", timeout=BOUND)
        assert time.monotonic() - painted <= BOUND
        assert "cached, not verified" not in hud.text()
    finally:
        hud.process.terminate(force=True)
