"""`hud check` on 1,000 missions with 1,000,000 log lines: lines per second and peak RSS.

Target (issue 2): >= 200,000 lines/s (schema and chain) with peak RSS < 300 MB.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.measure import run_measured
from bench.scenario import workspace

MISSIONS, LINES_EACH = 1000, 1000


def main() -> None:
    root = workspace(MISSIONS, LINES_EACH)
    lines = MISSIONS * LINES_EACH
    hud = str(Path(sys.executable).with_name("hud"))
    for jobs in (1, 2):
        wall, peak, code = run_measured(
            [hud, "check", str(root), "--json", "--jobs", str(jobs)], stdout=subprocess.DEVNULL
        )
        print(
            f"hud check, {MISSIONS:,} missions, {lines:,} lines, --jobs {jobs}: "
            f"{wall:.2f} s, {lines / wall:,.0f} lines/s, peak RSS {peak:.0f} MiB "
            f"(process tree), exit {code}"
        )


if __name__ == "__main__":
    main()
