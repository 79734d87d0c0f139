"""Bytes an idle HUD writes to its terminal: nothing should animate for nothing.

Target (issue 3): 0 bytes per second when nothing changes (measured through a pty).
"""

from __future__ import annotations

import time

from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud

SETTLE, WINDOW = 3.0, 10.0


def main() -> None:
    root = workspace(10, 20)
    hud = PtyHud.spawn(PtyHud.hud_argv(str(root)))
    try:
        hud.wait_for("Benchmark mi")
        hud.pump(SETTLE)
        before = hud.received
        started = time.monotonic()
        hud.pump(WINDOW)
        elapsed = time.monotonic() - started
        written = hud.received - before
        print(
            f"idle HUD over {elapsed:.1f} s: {written} bytes written to the terminal "
            f"({written / elapsed:.1f} bytes/s)"
        )
    finally:
        hud.process.terminate(force=True)


if __name__ == "__main__":
    main()
