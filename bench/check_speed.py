"""`hud check` as a user runs it (default jobs) on 200 missions with 200,000 log lines:
CPU per line against a plain `json.loads` + sha256 chain loop over the same files.

Goal (issue 25): within 1.5x, the median of 5 interleaved pairs, each pair one run of
bench/json_baseline.py and one `hud check` (their order alternates), measured in this
run; CPU is user + system seconds of the process and every process it started, so a
parallel check pays for all its workers. Each `hud check` run also prints its wall time,
lines per second and peak RSS. `python -m bench.check_speed --jobs N` measures
`hud check --jobs N` instead.

The runs see a warm page cache and compiled bytecode, as a user's repeated check does:
one `hud check` runs first, unmeasured, with PYTHONDONTWRITEBYTECODE unset.
bench/check_parts.py says where the CPU goes, layer by layer.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from bench.measure import run_measured, with_bytecode
from bench.scenario import workspace

MISSIONS, LINES_EACH = 200, 1000
PAIRS = 5
GOAL = 1.5


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, help="hud check --jobs (default: as a user runs it)")
    jobs = parser.parse_args().jobs
    root = workspace(MISSIONS, LINES_EACH)
    lines = MISSIONS * LINES_EACH
    hud = [str(Path(sys.executable).with_name("hud")), "check", str(root), "--json"]
    if jobs is not None:
        hud += ["--jobs", str(jobs)]
    baseline = [sys.executable, "-m", "bench.json_baseline", str(root)]
    subprocess.run(hud, stdout=subprocess.DEVNULL, check=False)  # warm up
    ratios = []
    for pair in range(PAIRS):
        if pair % 2 == 0:
            base = _cpu(baseline)
        (wall, peak, code), cpu = _measured(hud)
        if pair % 2 == 1:
            base = _cpu(baseline)
        ratios.append(cpu / base)
        print(
            f"pair {pair + 1}: json.loads + sha256 chain CPU {base:.2f} s; "
            f"{' '.join(hud[1:2] + hud[3:])}: CPU {cpu:.2f} s ({cpu / lines * 1e6:.2f} us/line), "
            f"{wall:.2f} s wall, {lines / wall:,.0f} lines/s, peak RSS {peak:.0f} MiB "
            f"(process tree), exit {code}; ratio {ratios[-1]:.2f}x",
            flush=True,
        )
    print(
        f"hud check CPU / json.loads + sha256 chain loop, {MISSIONS:,} missions, "
        f"{lines:,} lines: median {statistics.median(ratios):.2f}x over {PAIRS} interleaved "
        f"pairs (pairs {min(ratios):.2f}-{max(ratios):.2f}x; goal <= {GOAL}x)"
    )


def _measured(argv: list[str]) -> tuple[tuple[float, float, int], float]:
    """`run_measured`'s (wall, peak RSS, exit code) for `argv`, and its CPU seconds."""
    before = _children_cpu()
    result = run_measured(argv, stdout=subprocess.DEVNULL)
    return result, _children_cpu() - before


def _cpu(argv: list[str]) -> float:
    """CPU seconds of running `argv` (and whatever it starts)."""
    before = _children_cpu()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return _children_cpu() - before


def _children_cpu() -> float:
    """User and system seconds of the finished processes this one started, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
