"""Latency from an agent writing an approval request to the request in the HUD's queue.

Target (issue 4): p50 <= 100 ms. A headless HUD (`App.run_test`, the real watcher)
shows the approvals screen; an agent writes N requests one at a time with
`AgentWriter.request_approval`, and for each the clock runs from just before the write
until the row is in the queue table. Missions: `--missions` (default 10), the requests
spread over them.

    python -m bench.approval_latency [--requests 50] [--missions 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import tomli_w

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen
from store.writers.agent import AgentWriter
from widgets.request_view import QueueTable

STEPS = [{"id": "deploy", "title": "Deploy", "risk": "external_write", "needs_approval": True}]


def build(root: Path, missions: int) -> list[AgentWriter]:
    writers = []
    for index in range(missions):
        mission_id = f"m{index:03d}"
        folder = root / "missions" / mission_id
        folder.mkdir(parents=True)
        (folder / "intent.toml").write_text(tomli_w.dumps({"schema": 1, "title": mission_id}))
        writer = AgentWriter(root, mission_id, f"bench-agent/{mission_id}")
        writer.write_plan(STEPS)
        writers.append(writer)
    return writers


async def measure(root: Path, writers: list[AgentWriter], requests: int) -> list[float]:
    app = HudApp(root)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while not (app.scanned.is_set() and app.watching):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the watcher is up
        await pilot.press("a")
        while not isinstance(app.screen, ApprovalsScreen):
            await asyncio.sleep(0.01)
        table = app.screen.query_one(QueueTable)
        for n in range(requests):
            writer = writers[n % len(writers)]
            key = f"{writer.mission}/req-{n}"
            started = time.perf_counter()
            writer.request_approval(
                f"req-{n}", "deploy", 1, "deploy", {"n": n}, "external_write", f"request {n}"
            )
            while key not in table.keys:
                await asyncio.sleep(0.002)
                if time.perf_counter() - started > 10:
                    raise SystemExit(f"request {n} never showed")
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.05)  # let toasts and the header settle between writes
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--missions", type=int, default=10)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hud-bench-approvals-") as folder:
        root = Path(folder)
        writers = build(root, options.missions)
        latencies = asyncio.run(measure(root, writers, options.requests))
    latencies.sort()
    p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
    print(
        f"request written -> in the approvals queue, {len(latencies)} requests over "
        f"{options.missions} missions: p50 {statistics.median(latencies):.1f} ms, "
        f"p95 {p95:.1f} ms, max {latencies[-1]:.1f} ms (target p50 <= 100 ms)"
    )


if __name__ == "__main__":
    main()
