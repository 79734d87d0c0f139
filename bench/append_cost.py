"""Cost to the workspace of one line appended to a 1,000,000-line log.

Target (issue 2): under 5 ms, proportional to the new bytes, not to the log.
"""

from __future__ import annotations

import statistics
import time

from bench.measure import self_peak_mib
from bench.scenario import workspace
from store.index.workspace import Workspace
from store.writers.agent import AgentWriter

APPENDS = 200


def main() -> None:
    root = workspace(1, 1_000_000)
    started = time.perf_counter()
    index = Workspace(root)
    index.scan()
    print(
        f"scan of one 1,000,000-line log: {time.perf_counter() - started:.2f} s, "
        f"peak RSS {self_peak_mib():.0f} MiB"
    )
    mission = next(iter(index.missions))
    rel = f"missions/{mission}/events.jsonl"
    writer = AgentWriter(root, mission, "bench-agent")
    costs = []
    for _n in range(APPENDS):
        writer.heartbeat()
        started = time.perf_counter()
        index.apply([rel])
        index.status(mission)
        costs.append((time.perf_counter() - started) * 1000)
    costs.sort()
    print(
        f"append + apply + status over {APPENDS} appends: p50 {statistics.median(costs):.2f} ms, "
        f"p99 {costs[int(len(costs) * 0.99) - 1]:.2f} ms, max {costs[-1]:.2f} ms"
    )


if __name__ == "__main__":
    main()
