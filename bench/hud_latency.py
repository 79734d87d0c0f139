"""Write-to-screen latency: an event appended by an agent until the HUD shows it.

1,000 missions, the simulator writing 200 events/s into the same directory, the HUD
in a pty read with pyte. Target (issue 3): p50 <= 50 ms, p99 <= 150 ms.

300 probes, one every ~100 ms: a 99th percentile needs a few hundred samples (of 60,
"p99" is simply the slowest one).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tomli_w

from bench.scenario import STEPS, workspace
from store.writers.agent import AgentWriter
from tests.e2e.pty_screen import PtyHud

PROBES = 300


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="hud-latency-")) / "state"
    shutil.copytree(workspace(1000, 20), root)
    probe = root / "missions" / "aaa-probe"
    probe.mkdir()
    (probe / "intent.toml").write_text(tomli_w.dumps({"schema": 1, "title": "Latency probe"}))
    writer = AgentWriter(root, "aaa-probe", "probe")
    writer.write_plan(STEPS)
    simulator = subprocess.Popen(
        [sys.executable, "-m", "simulator", str(root), "--rate", "200"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    hud = PtyHud.spawn(PtyHud.hud_argv(str(root)), cols=160, rows=50)
    latencies = []
    try:
        hud.wait_for("● live", timeout=120)
        hud.pump(1.0)
        for n in range(PROBES):
            token = f"q{n:04d}"
            started = time.monotonic()
            writer.step(token, "running", 1)
            while token not in hud.text():
                hud.pump(0.002)
                if time.monotonic() - started > 5:
                    raise SystemExit(f"probe {token} not shown within 5 s")
            latencies.append((time.monotonic() - started) * 1000)
            hud.pump(0.05)
    finally:
        hud.process.terminate(force=True)
        simulator.terminate()
        simulator.wait()
        shutil.rmtree(root.parent, ignore_errors=True)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(
        f"write-to-screen, 1,000 missions, simulator at 200 events/s, {PROBES} probes: "
        f"p50 {statistics.median(latencies):.0f} ms, p99 {p99:.0f} ms, max {latencies[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main()
