"""`hud check` on 1,000 missions with 1,000,000 log lines: lines per second and peak RSS.

Targets: CPU per line within 2x of a plain `json.loads` + sha256 loop over the same
files (bench/json_baseline.py, run between the `--jobs 1` runs: the ratio is what
counts on a machine whose speed drifts 2x), >= 200,000 lines/s, peak RSS < 300 MB.
Each setting runs RUNS times and prints every run, then the median. CPU (the process
tree's user + system seconds) per line varies less than wall time.
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
        rates, ratios = [], []
        for _ in range(RUNS):
            before = _children_cpu()
            wall, peak, code = run_measured(
                [hud, "check", str(root), "--json", "--jobs", str(jobs)],
                stdout=subprocess.DEVNULL,
            )
            cpu = _children_cpu() - before
            rates.append(lines / wall)
            if jobs == 1:
                ratios.append(cpu / _baseline_cpu(root))
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
        if ratios:
            print(
                f"  CPU / json.loads + sha256 loop: median {statistics.median(ratios):.2f}x"
                f" (runs {', '.join(f'{r:.2f}' for r in ratios)}; goal <= 2x)"
            )


def _baseline_cpu(root: Path) -> float:
    """CPU seconds of bench/json_baseline.py over `root`, printed as it runs."""
    before = _children_cpu()
    command = [sys.executable, "-m", "bench.json_baseline", str(root)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    cpu = _children_cpu() - before
    print(f"json.loads + sha256 loop over the same files: CPU {cpu:.2f} s", flush=True)
    return cpu


def _children_cpu() -> float:
    """User and system seconds of the finished processes this one started, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
