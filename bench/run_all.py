"""`make bench`: every benchmark, each printing its figures."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

BENCHES = (
    "bench.check_speed",
    "bench.append_cost",
    "bench.first_paint",
    "bench.hud_latency",
    "bench.hud_memory",
    "bench.hud_idle",
    "bench.approval_latency",
    "bench.notify_latency",
    "bench.scrub",
    "bench.small_open",
    "bench.replay",
)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    names = sys.argv[1:] or BENCHES
    for name in names:
        print(f"== {name}", flush=True)
        runpy.run_module(
            name if name.startswith("bench.") else f"bench.{name}", run_name="__main__"
        )


if __name__ == "__main__":
    main()
