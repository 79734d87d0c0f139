"""Peak RSS of the HUD on 1,000 missions with 1,000,000 log lines in all.

Target (issue 3): <= 400 MB.
"""

from __future__ import annotations

import time

from bench.measure import tree_rss_mib
from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud


def main() -> None:
    root = workspace(1000, 1000)
    hud = PtyHud.spawn(PtyHud.hud_argv(str(root)))
    peak = 0.0
    try:
        started = time.monotonic()
        while time.monotonic() - started < 300:
            hud.pump(0.2)
            peak = max(peak, tree_rss_mib(hud.process.pid))
            if "● live" in hud.text():
                break
        loaded = time.monotonic() - started
        for _ in range(10):
            hud.pump(0.2)
            peak = max(peak, tree_rss_mib(hud.process.pid))
        print(
            f"hud on 1,000 missions / 1,000,000 lines: scanned in {loaded:.1f} s, "
            f"peak RSS {peak:.0f} MiB, now {tree_rss_mib(hud.process.pid):.0f} MiB"
        )
    finally:
        hud.process.terminate(force=True)


if __name__ == "__main__":
    main()
