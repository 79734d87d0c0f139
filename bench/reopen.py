"""Opening again in proportion to what changed (issue 25), each figure a ratio against a
baseline measured in the same run:

- a cold open (an empty cache) until the HUD is live, against `hud check --jobs 1` on the
  same directory (target: no later);
- a reopen (the cache the cold open wrote), against the bare Textual app showing a
  DataTable of as many rows (`bench.bare_app`, until its first row is on screen): until
  every row is shown (the header counts all N missions and no longer says `◌ scanning`;
  target within 1.5x) and until live (`● live`: every mission derived, its logs
  verified or cached; target within 2x); the median of PAIRS pairs run in turn (reopen,
  bare, ...), the ratio taken pair by pair; the first row's time is given too;
- peak RSS of each open (target: at most 400 MB);
- `hud approvals --json` three times: with an empty cache, again with nothing changed,
  and after one line was appended to one mission's log.

`python -m bench.reopen [MISSIONS] [LINES] [--reopen]` (default 10,000 missions of 20
lines; the cache keeps logs of 32 KiB and more, so `LINES` of 200 or more exercises its
logs, any count its documents; `--reopen`: a cold open to write the cache, then the
pairs only). The cache is a folder of this run's own (HUD_CACHE_DIR).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.first_paint import ROW, all_rows, row_shown, timed
from bench.measure import run_measured, tree_rss_mib, with_bytecode
from bench.scenario import workspace
from store.format.layout import Kind
from store.writers.agent import AgentWriter
from tests.e2e.pty_screen import PtyHud

BARE = [sys.executable, "-m", "bench.bare_app"]
HUD = [sys.executable, "-m", "cli.main"]
PAIRS = 5


def until_live(
    argv: list[str], needle: str, linger: Callable[[], bool] | None = None, timeout: float = 600
) -> tuple[float, float]:
    """Seconds from spawn until `needle` is on screen, and the peak RSS (MiB) until then
    and for a second after (or until `linger()` holds); the process is then ended."""
    started = time.monotonic()
    hud = PtyHud.spawn(argv)
    peak = 0.0
    try:
        while time.monotonic() - started < timeout:
            hud.pump(0.05)
            peak = max(peak, tree_rss_mib(hud.process.pid))
            if needle in hud.text():
                break
        else:
            raise TimeoutError(f"{needle!r} not on screen in {timeout} s")
        took = time.monotonic() - started
        lingered = time.monotonic()
        while time.monotonic() - lingered < (120 if linger else 1):
            hud.pump(0.1)
            peak = max(peak, tree_rss_mib(hud.process.pid))
            if linger is not None and linger():
                break
        return took, peak
    finally:
        hud.process.terminate(force=True)


def hud_live(root: Path, linger: Callable[[], bool] | None = None) -> tuple[float, float]:
    return until_live([*HUD, str(root)], "● live", linger)


def live(screen: PtyHud) -> bool:
    return "● live" in screen.screen.display[0]


def reopen_pairs(root: Path, missions: int) -> str:
    """The reopen against the bare app, PAIRS interleaved pairs (wall seconds)."""
    hud, bare = [*HUD, str(root)], [*BARE, str(missions)]
    firsts, rows, lives, bares = [], [], [], []
    for _ in range(PAIRS):
        first, shown, up = timed(hud, row_shown, all_rows(missions), live)
        (baseline,) = timed(bare, row_shown)
        firsts.append(first[0] / baseline[0])
        rows.append(shown[0] / baseline[0])
        lives.append(up[0] / baseline[0])
        bares.append(baseline[0])
    median = statistics.median
    return (
        f"  reopen vs the bare DataTable app with {missions:,} rows ({median(bares):.2f} s), "
        f"median of {PAIRS} pairs: first row {median(firsts):.2f}x, every row "
        f"{median(rows):.2f}x (target <= 1.5), live {median(lives):.2f}x (target <= 2); "
        f"per pair, live: {', '.join(f'{r:.2f}' for r in lives)}"
    )


def approvals(root: Path) -> float:
    started = time.monotonic()
    subprocess.run([*HUD, "approvals", str(root), "--json"], check=True, capture_output=True)
    return time.monotonic() - started


def main() -> None:
    with_bytecode()
    args = [arg for arg in sys.argv[1:] if arg != "--reopen"]
    missions = int(args[0]) if args else 10_000
    lines = int(args[1]) if len(args) > 1 else 20
    root = workspace(missions, lines)
    cache = Path(tempfile.mkdtemp(prefix="hud-cache-"))
    os.environ["HUD_CACHE_DIR"] = str(cache)
    label = f"{missions:,} missions x {lines} lines"
    if "--reopen" in sys.argv:  # the cache written by a cold open, then the pairs
        hud_live(root, linger=lambda: any(cache.glob("prefix-*")))
        print(label, flush=True)
        print(reopen_pairs(root, missions), flush=True)
        return

    check, check_peak, _ = run_measured(
        [*HUD, "check", str(root), "--jobs", "1"], stdout=subprocess.DEVNULL
    )
    cold, cold_peak = hud_live(root, linger=lambda: any(cache.glob("prefix-*")))
    warm, warm_peak = hud_live(root)
    bare, _ = until_live([*BARE, str(missions)], ROW)
    print(f"{label}: hud check --jobs 1 {check:.2f} s (peak {check_peak:.0f} MiB)")
    print(f"  cold open live {cold:.2f} s = {cold / check:.2f}x hud check --jobs 1 (target <= 1)")
    print(
        f"  reopen live (one run) {warm:.2f} s = {warm / bare:.2f}x the bare DataTable app with "
        f"{missions:,} rows ({bare:.2f} s; target <= 2), {warm / cold:.2f}x the cold open"
    )
    print(f"  peak RSS: cold {cold_peak:.0f} MiB, reopen {warm_peak:.0f} MiB (target <= 400 MB)")
    print(reopen_pairs(root, missions), flush=True)

    for stale in cache.glob("prefix-*"):
        stale.unlink()
    first = approvals(root)
    again = approvals(root)
    writer = AgentWriter(root, "m00000", "bench-agent")
    with writer.locked(Kind.EVENTS) as log:
        log.append(datetime.now(UTC), {"type": "heartbeat", "actor": "bench-agent"})
    appended = approvals(root)
    print(
        f"  hud approvals --json: empty cache {first:.2f} s, again {again:.2f} s "
        f"({again / first:.2f}x), after one appended line {appended:.2f} s "
        f"({appended / first:.2f}x)"
    )


if __name__ == "__main__":
    main()
