"""Cold start of the HUD, side by side with bare Textual apps showing a DataTable.

Measured through a pty: from spawn to the first frame showing the table header
("first paint"), and until mission rows are on screen. Targets: at 1,000 missions,
first paint within 1.5x the bare app's with an empty table, rows on screen within 2.5x
the bare app's with the same number of rows (made in memory: no files to read).
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud

RUNS = 3
BARE = [sys.executable, "-m", "bench.bare_app"]


def timed(argv: list[str], *needles: str) -> list[float]:
    """Seconds from spawn until each needle is on screen, in order."""
    started = time.monotonic()
    hud = PtyHud.spawn(argv)
    try:
        marks = []
        for needle in needles:
            hud.wait_for(needle, timeout=120)
            marks.append(time.monotonic() - started)
        return marks
    finally:
        hud.process.terminate(force=True)


def main() -> None:
    bare = statistics.median(timed(BARE, "Status")[0] for _ in range(RUNS))
    print(f"bare Textual app, empty DataTable: first paint {bare:.2f} s")
    for missions in (10, 1000, 10000):
        root = workspace(missions, 20)
        marks = [timed(PtyHud.hud_argv(str(root)), "Status", "Benchmark mi") for _ in range(RUNS)]
        bare_rows = statistics.median(
            timed([*BARE, str(missions)], "Benchmark mi")[0] for _ in range(RUNS)
        )
        paint = statistics.median(m[0] for m in marks)
        rows = statistics.median(m[1] for m in marks)
        print(
            f"hud, {missions:>6,} missions: first paint {paint:.2f} s ({paint / bare:.2f}x bare), "
            f"rows on screen {rows:.2f} s ({rows / bare_rows:.2f}x bare with "
            f"{missions:,} rows: {bare_rows:.2f} s)"
        )


if __name__ == "__main__":
    main()
