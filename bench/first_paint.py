"""First paint and rows shown at 1,000 and 10,000 missions, each as a ratio against a
bare ten-line Textual app showing a DataTable of as many rows (`bench.bare_app`).

Measured from outside, through a pty whose screen pyte reads (`tests.e2e.pty_screen`);
nothing in the HUD knows it is measured. Times run from spawn to:
- **first paint**: the first frame with a mission row on screen (`Benchmark mission`);
- **rows shown**: the first frame whose header no longer says `◌ scanning` and counts all
  N missions: every row is in the table (the scan has handed over its last chunk);
- **bare**: the bare app's first frame with a row on screen; its N rows are all in its
  table before that frame (made in memory: no file to read).

Each figure is the median of 5 pairs run in turn (HUD, bare, HUD, bare, ...), after a
warm-up of each; the ratio is taken pair by pair, so a machine whose speed drifts
between pairs moves both sides. Both run as `python -m` from this tree. The states are
`bench.scenario` workspaces (N missions x 20 event lines, cached in bench/out/).

`scan alone` is the scan's share: indexing the same directory in this process (the
store already imported), the work the HUD's scan worker does off the event loop.

Run: `python -m bench.first_paint [N ...]` (default 1000 10000).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud

PAIRS = 5
TIMEOUT = 300.0
HUD = [sys.executable, "-m", "cli.main"]
BARE = [sys.executable, "-m", "bench.bare_app"]
ROW = "Benchmark mi"


def timed(argv: list[str], *conditions: Callable[[PtyHud], bool]) -> list[float]:
    """Seconds from spawn until each condition on the screen holds, in order."""
    started = time.monotonic()
    screen = PtyHud.spawn(argv, cols=100, rows=24)
    try:
        marks = []
        for condition in conditions:
            if not screen.pump_until(partial(condition, screen), TIMEOUT):
                raise AssertionError(f"not shown after {TIMEOUT} s:\n{screen.text()}")
            marks.append(time.monotonic() - started)
        return marks
    finally:
        screen.process.terminate(force=True)


def row_shown(screen: PtyHud) -> bool:
    return ROW in screen.text()


def all_rows(missions: int) -> Callable[[PtyHud], bool]:
    """The header counts every mission and the scan is over."""
    count = re.compile(rf"\s{missions}(\s|$)")

    def shown(screen: PtyHud) -> bool:
        header = screen.screen.display[0]
        return "scanning" not in header and count.search(header) is not None

    return shown


def scan_alone(root: str) -> float:
    """Seconds to index `root` in this process, the store imported beforehand."""
    from store.index.workspace import Workspace

    started = time.perf_counter()
    Workspace(root).scan()
    return time.perf_counter() - started


def measure(missions: int) -> None:
    root = str(workspace(missions, 20))
    hud, bare = [*HUD, root], [*BARE, str(missions)]
    timed(hud, row_shown, all_rows(missions))  # warm-up: file cache, bytecode
    timed(bare, row_shown)
    pairs = []
    for _ in range(PAIRS):
        paint, rows = timed(hud, row_shown, all_rows(missions))
        (baseline,) = timed(bare, row_shown)
        pairs.append((paint, rows, baseline))
    paint = statistics.median(p / b for p, _, b in pairs)
    rows = statistics.median(r / b for _, r, b in pairs)
    alone = statistics.median(scan_alone(root) for _ in range(3))
    print(
        f"{missions:>6,} missions: bare app {statistics.median(b for *_, b in pairs):.2f} s; "
        f"hud first paint {statistics.median(p for p, _, _ in pairs):.2f} s ({paint:.2f}x bare), "
        f"rows shown {statistics.median(r for _, r, _ in pairs):.2f} s ({rows:.2f}x bare); "
        f"scan alone {alone:.2f} s",
        flush=True,
    )


def main() -> None:
    for missions in [int(n) for n in sys.argv[1:]] or [1000, 10000]:
        measure(missions)


if __name__ == "__main__":
    main()
