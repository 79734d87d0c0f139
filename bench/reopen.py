"""Opening again in proportion to what changed (issue 25), each figure a ratio against a
baseline measured in the same run:

- a cold open (an empty cache) until the HUD is live, against `hud check --jobs 1` on the
  same directory (target: no later);
- a reopen (the cache the cold open wrote) until live, against the bare Textual app
  showing a DataTable of as many rows (target: within 2x), and against the cold open;
- peak RSS of each open (target: at most 400 MB);
- `hud approvals --json` three times: with an empty cache, again with nothing changed,
  and after one line was appended to one mission's log.

`python -m bench.reopen [MISSIONS] [LINES]` (default 10,000 missions of 20 lines; the
cache keeps logs of 32 KiB and more, so `LINES` of 200 or more exercises it). The cache
is a folder of this run's own (HUD_CACHE_DIR).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.measure import run_measured, tree_rss_mib
from bench.scenario import workspace
from store.format.layout import Kind
from store.writers.agent import AgentWriter
from tests.e2e.pty_screen import PtyHud

BARE = [sys.executable, "-m", "bench.bare_app"]
HUD = [sys.executable, "-m", "cli.main"]


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
    return until_live(PtyHud.hud_argv(str(root)), "● live", linger)


def approvals(root: Path) -> float:
    started = time.monotonic()
    subprocess.run([*HUD, "approvals", str(root), "--json"], check=True, capture_output=True)
    return time.monotonic() - started


def main() -> None:
    missions = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    root = workspace(missions, lines)
    cache = Path(tempfile.mkdtemp(prefix="hud-cache-"))
    os.environ["HUD_CACHE_DIR"] = str(cache)
    label = f"{missions:,} missions x {lines} lines"

    check, check_peak, _ = run_measured(
        [*HUD, "check", str(root), "--jobs", "1"], stdout=subprocess.DEVNULL
    )
    cold, cold_peak = hud_live(root, linger=lambda: any(cache.glob("prefix-*")))
    warm, warm_peak = hud_live(root)
    bare, _ = until_live([*BARE, str(missions)], "Benchmark mi")
    print(f"{label}: hud check --jobs 1 {check:.2f} s (peak {check_peak:.0f} MiB)")
    print(f"  cold open live {cold:.2f} s = {cold / check:.2f}x hud check --jobs 1 (target <= 1)")
    print(
        f"  reopen live {warm:.2f} s = {warm / bare:.2f}x the bare DataTable app with "
        f"{missions:,} rows ({bare:.2f} s; target <= 2), {warm / cold:.2f}x the cold open"
    )
    print(f"  peak RSS: cold {cold_peak:.0f} MiB, reopen {warm_peak:.0f} MiB (target <= 400 MB)")

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
