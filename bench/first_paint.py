"""First paint and rows shown at 1,000 and 10,000 missions, each as a ratio against a
bare ten-line Textual app showing a DataTable of as many rows (`bench.bare_app`).

Measured from outside, through a pty whose screen pyte reads (`tests.e2e.pty_screen`);
nothing in the HUD knows it is measured. Times run from spawn to:
- **first paint**: the first frame with a mission row on screen (`Benchmark mission`);
- **rows shown**: the first frame whose header no longer says `◌ scanning` and counts all
  N missions: every row is in the table (the scan has handed over its last chunk);
- **bare**: the bare app's first frame with a row on screen; its N rows are all in its
  table before that frame (made in memory: no file to read).

The HUD opens each directory two ways, with a cache folder of this run's own
(HUD_CACHE_DIR): **reopened**, over the cache a HUD left once it had settled (its
verified logs and the rows it kept, `store.cache.rows`: the first rows come from there,
before the store is imported), and **cold**, over an empty cache (the first rows come
from the scan: the store, pydantic with it, is imported first).

Each figure is the median of 5 rounds run in turn (reopened HUD, bare, cold HUD, ...),
after a warm-up of each; the ratio is taken against the bare app of the same round, so
a machine whose speed drifts between rounds moves both sides. All run as `python -m`
from this tree. The states are `bench.scenario` workspaces (N missions x 20 event lines,
cached in bench/out/).

Each time is given twice: wall seconds, and the CPU seconds the process had used by
then (/proc/PID/stat, user + system, every thread): on a machine shared by many, the
wall time mostly measures the others; the CPU time is what the process itself spent.

`scan alone` is the scan's share: indexing the same directory in this process (the
store already imported), the work the HUD's scan worker does off the event loop.

Run: `python -m bench.first_paint [N ...]` (default 1000 10000).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.measure import with_bytecode
from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud

PAIRS = 5
TIMEOUT = 300.0
SETTLE_SECONDS = 1.0
"""How long a HUD runs on once live at least, to write its cache (`settled`)."""
HUD = [sys.executable, "-m", "cli.main"]
BARE = [sys.executable, "-m", "bench.bare_app"]
ROW = "Benchmark mi"


Mark = tuple[float, float]
"""(wall seconds, CPU seconds) from spawn."""
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds process `pid` has used, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def timed(argv: list[str], *conditions: Callable[[PtyHud], bool]) -> list[Mark]:
    """(wall, CPU) seconds from spawn until each condition on the screen holds, in order."""
    started = time.monotonic()
    screen = PtyHud.spawn(argv, cols=100, rows=24)
    try:
        marks = []
        for condition in conditions:
            if not screen.pump_until(partial(condition, screen), TIMEOUT):
                raise AssertionError(f"not shown after {TIMEOUT} s:\n{screen.text()}")
            marks.append((time.monotonic() - started, cpu_seconds(screen.process.pid)))
        return marks
    finally:
        screen.process.terminate(force=True)


def settled(argv: list[str]) -> None:
    """Run the HUD until live, and on until its cache is written (its kept rows there,
    no write under way; SETTLE_SECONDS at least), then end it."""
    screen = PtyHud.spawn(argv, cols=100, rows=24)
    folder = Path(os.environ["HUD_CACHE_DIR"])

    def written() -> bool:
        return any(folder.glob("rows-*.sealed")) and not any(folder.glob(".tmp-*"))

    try:
        if not screen.pump_until(lambda: "● live" in screen.screen.display[0], TIMEOUT):
            raise AssertionError(f"not live after {TIMEOUT} s:\n{screen.text()}")
        screen.pump(SETTLE_SECONDS)
        if not screen.pump_until(written, TIMEOUT):
            raise AssertionError(f"no rows kept in {folder} after {TIMEOUT} s")
    finally:
        screen.process.terminate(force=True)


def cold(argv: list[str], *conditions: Callable[[PtyHud], bool]) -> list[Mark]:
    """`timed`, over an empty cache folder of its own."""
    kept = os.environ["HUD_CACHE_DIR"]
    empty = tempfile.mkdtemp(prefix="hud-cold-")
    os.environ["HUD_CACHE_DIR"] = empty
    try:
        return timed(argv, *conditions)
    finally:
        os.environ["HUD_CACHE_DIR"] = kept
        shutil.rmtree(empty, ignore_errors=True)


def row_shown(screen: PtyHud) -> bool:
    return ROW in screen.text()


def all_rows(missions: int) -> Callable[[PtyHud], bool]:
    """The header counts every mission and the scan is over."""
    count = re.compile(rf"\s{missions}(\s|$)")

    def shown(screen: PtyHud) -> bool:
        header = screen.screen.display[0]
        return "scanning" not in header and count.search(header) is not None

    return shown


def scan_alone(root: str) -> Mark:
    """(wall, CPU) seconds to index `root` in this process, the store imported beforehand."""
    from store.index.workspace import Workspace

    wall, cpu = time.perf_counter(), time.process_time()
    Workspace(root).scan()
    return time.perf_counter() - wall, time.process_time() - cpu


def figure(name: str, hud: list[Mark], bare: list[Mark]) -> str:
    """`name`: median wall and CPU seconds, each with its median ratio to the bare app's."""
    said = []
    for what, at in (("wall", 0), ("cpu", 1)):
        seconds = statistics.median(mark[at] for mark in hud)
        pairs = zip(hud, bare, strict=True)
        ratio = statistics.median(mine[at] / theirs[at] for mine, theirs in pairs)
        said.append(f"{what} {seconds:.2f} s ({ratio:.2f}x)")
    return f"{name} " + ", ".join(said)


def measure(missions: int) -> None:
    root = str(workspace(missions, 20))
    hud, bare = [*HUD, root], [*BARE, str(missions)]
    cache = tempfile.mkdtemp(prefix="hud-paint-")
    os.environ["HUD_CACHE_DIR"] = cache
    try:
        settled(hud)  # warm-up: file cache, bytecode, and the cache a reopen finds
        timed(bare, row_shown)
        cold(hud, row_shown)
        paints, rows, baselines, colds = [], [], [], []
        for _ in range(PAIRS):
            paint, shown = timed(hud, row_shown, all_rows(missions))
            (baseline,) = timed(bare, row_shown)
            (first,) = cold(hud, row_shown)
            paints.append(paint)
            rows.append(shown)
            baselines.append(baseline)
            colds.append(first)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    alone = [scan_alone(root) for _ in range(3)]
    bare_wall = statistics.median(mark[0] for mark in baselines)
    bare_cpu = statistics.median(mark[1] for mark in baselines)
    print(
        f"{missions:>6,} missions: bare app wall {bare_wall:.2f} s, cpu {bare_cpu:.2f} s; hud "
        f"{figure('first paint reopened', paints, baselines)}; "
        f"{figure('first paint cold', colds, baselines)}; "
        f"{figure('rows shown reopened', rows, baselines)}; "
        f"scan alone wall {statistics.median(a[0] for a in alone):.2f} s, "
        f"cpu {statistics.median(a[1] for a in alone):.2f} s",
        flush=True,
    )


def each_size(measure: Callable[[int], None]) -> None:
    """`measure` for each mission count the command line names (default 1,000 and 10,000),
    with bytecode (`with_bytecode`)."""
    with_bytecode()
    for missions in [int(n) for n in sys.argv[1:]] or [1000, 10000]:
        measure(missions)


def main() -> None:
    each_size(measure)


if __name__ == "__main__":
    main()
