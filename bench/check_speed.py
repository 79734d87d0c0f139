"""`hud check` on 1,000 missions with 1,000,000 log lines: lines per second and peak RSS.

Target (issue 2): >= 200,000 lines/s (schema and chain) with peak RSS < 300 MB. Each
setting runs RUNS times and prints every run, then the median: a shared 2-core machine
drifts 20-30 % from one minute to the next. CPU (the process tree's user + system
seconds) per line varies less than wall time.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
from pathlib import Path

from bench.measure import run_measured
from bench.scenario import workspace

MISSIONS, LINES_EACH = 1000, 1000
RUNS = 5


def main() -> None:
    root = workspace(MISSIONS, LINES_EACH)
    lines = MISSIONS * LINES_EACH
    hud = str(Path(sys.executable).with_name("hud"))
    for jobs in (1, 2):
        rates = []
        for _ in range(RUNS):
            before = _children_cpu()
            wall, peak, code = run_measured(
                [hud, "check", str(root), "--json", "--jobs", str(jobs)],
                stdout=subprocess.DEVNULL,
            )
            cpu = _children_cpu() - before
            rates.append(lines / wall)
            print(
                f"hud check, {MISSIONS:,} missions, {lines:,} lines, --jobs {jobs}: "
                f"{wall:.2f} s, {lines / wall:,.0f} lines/s, CPU {cpu:.2f} s "
                f"({cpu / lines * 1e6:.1f} us/line), peak RSS {peak:.0f} MiB (process tree), "
                f"exit {code}",
                flush=True,
            )
        print(
            f"  --jobs {jobs}: median {statistics.median(rates):,.0f} lines/s, "
            f"best {max(rates):,.0f}, worst {min(rates):,.0f} over {RUNS} runs"
        )


def _children_cpu() -> float:
    """User and system seconds of the finished processes this one started, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
