"""Latency from an agent writing an approval request to a notification reaching its target.

The real `hud notify DIR --to json://127.0.0.1:PORT/` runs as its own process, with its
defaults (an event is sent once it has held 0.5 s: `settle_seconds`) but a burst large
enough that pacing does not count; a local HTTP receiver takes Apprise's posts. An agent
files N requests one at a time with `AgentWriter.request_approval`; for each the clock
runs from just before the write until the receiver has the notification. Prints p50,
p90, p99 and max; `--settle 0` measures without the settle wait.

    python -m bench.notify_latency [--requests 100] [--missions 10] [--settle 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import tomli_w

from bench.measure import with_bytecode
from store.writers.agent import AgentWriter

STEPS = [{"id": "deploy", "title": "Deploy", "risk": "external_write", "needs_approval": True}]


class Arrivals:
    """The titles the receiver got, each with when (perf_counter)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.changed = threading.Condition()

    def wait(self, title: str, timeout: float) -> float | None:
        with self.changed:
            self.changed.wait_for(lambda: title in self.at, timeout)
            return self.at.get(title)


def receiver(arrivals: Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            now = time.perf_counter()
            with arrivals.changed:
                arrivals.at[json.loads(body)["title"]] = now
                arrivals.changed.notify_all()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def build(root: Path, missions: int) -> list[AgentWriter]:
    writers = []
    for index in range(missions):
        mission_id = f"m{index:03d}"
        folder = root / "missions" / mission_id
        folder.mkdir(parents=True)
        (folder / "intent.toml").write_text(tomli_w.dumps({"schema": 1, "title": mission_id}))
        (folder / "constraints.toml").write_text(tomli_w.dumps({"schema": 1}))
        writer = AgentWriter(root, mission_id, f"bench-agent/{mission_id}")
        writer.write_plan(STEPS)
        writers.append(writer)
    return writers


def measure(requests: int, missions: int, settle: float) -> list[float]:
    arrivals = Arrivals()
    server = receiver(arrivals)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "state"
        writers = build(root, missions)
        config = Path(tmp) / "notify.toml"
        config.write_text(tomli_w.dumps({"schema": 1, "burst": 1000, "settle_seconds": settle}))
        env = dict(os.environ, HUD_NOTIFY_CONFIG=str(config), HUD_NOTIFY_STATE=f"{tmp}/sent")
        url = f"json://127.0.0.1:{server.server_address[1]}/"
        process = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "notify", str(root), "--to", url],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            for line in process.stdout:  # its first report: it watches
                if "watching" in line:
                    break
            threading.Thread(target=process.stdout.read, daemon=True).start()  # keep draining
            time.sleep(1.0)  # its catch-up read is done
            latencies = []
            for n in range(requests):
                writer = writers[n % len(writers)]
                title = f"Approval needed: {writer.mission}/req-{n}"
                started = time.perf_counter()
                writer.request_approval(
                    f"req-{n}", "deploy", 1, "deploy", {"n": n}, "external_write", f"request {n}"
                )
                arrived = arrivals.wait(title, 30.0)
                if arrived is None:
                    raise SystemExit(f"no notification for {title} within 30 s")
                latencies.append(arrived - started)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(20)
            server.shutdown()
    return latencies


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--missions", type=int, default=10)
    parser.add_argument("--settle", type=float, default=0.5)
    args = parser.parse_args()
    latencies = sorted(measure(args.requests, args.missions, args.settle))
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.0f} ms"

    print(
        f"notification latency over {len(latencies)} requests (settle {args.settle} s): "
        f"p50 {ms(cuts[49])}, p90 {ms(cuts[89])}, p99 {ms(cuts[98])}, max {ms(latencies[-1])}"
    )


if __name__ == "__main__":
    main()
