"""Peak RSS of the real HUD (the `hud` script on a pty) from start until live and 2 s after.

`python -m bench.hud_memory [MISSIONS] [LINES]`: default 1,000 missions of 1,000 log lines
(1,000,000 in all; issue 3); `10000 20` is issue 25's 10,000 missions. Target: <= 400 MB.
The cache is a folder of this run's own (HUD_CACHE_DIR): a cold open.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from bench.measure import tree_rss_mib
from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud


def main() -> None:
    missions = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    root = workspace(missions, lines)
    os.environ["HUD_CACHE_DIR"] = tempfile.mkdtemp(prefix="hud-cache-")
    hud = PtyHud.spawn(PtyHud.hud_argv(str(root)))
    peak = 0.0
    try:
        started = time.monotonic()
        while time.monotonic() - started < 600:
            hud.pump(0.2)
            peak = max(peak, tree_rss_mib(hud.process.pid))
            if "● live" in hud.text():
                break
        loaded = time.monotonic() - started
        for _ in range(10):
            hud.pump(0.2)
            peak = max(peak, tree_rss_mib(hud.process.pid))
        print(
            f"hud on {missions:,} missions x {lines:,} lines: live in {loaded:.1f} s, "
            f"peak RSS {peak:.0f} MiB, now {tree_rss_mib(hud.process.pid):.0f} MiB "
            "(target <= 400 MB)"
        )
    finally:
        hud.process.terminate(force=True)


if __name__ == "__main__":
    main()
