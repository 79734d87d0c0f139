"""A cold open until live, against `hud check --jobs 1` on the same directory (issue 25:
no later).

Each pair runs `hud check DIR --jobs 1` and then the HUD on DIR with an empty cache
folder of its own (HUD_CACHE_DIR: nothing cached, everything read and verified), until
its header says `● live` (the scan done: every mission derived and verified); the ratio
is taken pair by pair and the figure is the median of 5 pairs, after a warm-up of each
(the file cache, bytecode). Times are wall seconds, and the CPU seconds each process had
used by then (`hud check`: its own and its children's, from wait4; the HUD: every thread,
from /proc). The states are `bench.scenario` workspaces (N missions x 20 event lines).

Run: `python -m bench.cold_open [N ...]` (default 1000 10000).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.first_paint import HUD, Mark, each_size, timed
from bench.scenario import workspace
from tests.e2e.pty_screen import PtyHud

PAIRS = 5


def check(root: Path) -> Mark:
    """(wall, CPU) seconds of `hud check root --jobs 1`."""
    started = time.monotonic()
    process = subprocess.Popen([*HUD, "check", str(root), "--jobs", "1"], stdout=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped here
    return time.monotonic() - started, usage.ru_utime + usage.ru_stime


def live(screen: PtyHud) -> bool:
    return "● live" in screen.screen.display[0]


def cold_open(root: Path) -> Mark:
    """(wall, CPU) seconds from spawn until the HUD on root, with an empty cache, is live."""
    cache = Path(tempfile.mkdtemp(prefix="hud-cold-"))
    os.environ["HUD_CACHE_DIR"] = str(cache)
    try:
        (mark,) = timed([*HUD, str(root)], live)
        return mark
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def measure(missions: int) -> None:
    root = workspace(missions, 20)
    check(root), cold_open(root)  # warm-up
    pairs = [(check(root), cold_open(root)) for _ in range(PAIRS)]
    said = []
    for what, at in (("wall", 0), ("cpu", 1)):
        checked = statistics.median(c[at] for c, _ in pairs)
        opened = statistics.median(o[at] for _, o in pairs)
        ratios = sorted(o[at] / c[at] for c, o in pairs)
        said.append(
            f"{what}: check {checked:.2f} s, cold open {opened:.2f} s, "
            f"{statistics.median(ratios):.2f}x (pairs {ratios[0]:.2f}-{ratios[-1]:.2f}x)"
        )
    print(
        f"{missions:>6,} missions, cold open live vs hud check --jobs 1 (target <= 1): "
        + "; ".join(said),
        flush=True,
    )


def main() -> None:
    each_size(measure)


if __name__ == "__main__":
    main()
