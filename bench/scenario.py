"""Generate benchmark state directories with store.writers.agent (cached under bench/out/)."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import tomli_w

from store.format.layout import Kind
from store.writers.agent import AgentWriter

OUT = Path(__file__).resolve().parent / "out"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
STEPS = [{"id": f"s{i}", "title": f"step {i}", "risk": "read_only"} for i in range(1, 6)]


def _mission(root: Path, mission_id: str, lines: int) -> None:
    folder = root / "missions" / mission_id
    folder.mkdir(parents=True, exist_ok=True)
    intent = {"schema": 1, "title": f"Benchmark mission {mission_id}", "objective": "measure"}
    (folder / "intent.toml").write_text(tomli_w.dumps(intent))
    budget = {"usd": 1000.0, "tokens": 10**9, "steps": 10**6}
    (folder / "constraints.toml").write_text(tomli_w.dumps({"schema": 1, "budget": budget}))
    writer = AgentWriter(root, mission_id, "bench-agent")
    writer.write_plan(STEPS, at=T0)
    with writer.locked(Kind.EVENTS) as log:
        for n in range(lines):
            at = T0 + timedelta(seconds=n)
            step = STEPS[n % len(STEPS)]["id"]
            if n % 10 == 9:
                log.append(
                    at,
                    {
                        "type": "usage",
                        "actor": "bench-agent",
                        "usd": n / 1000,
                        "tokens": n * 10,
                        "steps": n // 10,
                    },
                )
            else:
                state = "running" if n % 2 else "verifying"
                log.append(
                    at,
                    {
                        "type": "step",
                        "actor": "bench-agent",
                        "step": step,
                        "plan_version": 1,
                        "state": state,
                        "reason": "bench",
                    },
                )


def workspace(missions: int, lines_each: int) -> Path:
    """A state directory of `missions` missions with `lines_each` event lines each."""
    root = OUT / f"ws-{missions}x{lines_each}"
    done = OUT / f"{root.name}.complete"
    if done.exists():
        return root
    started = time.monotonic()
    print(f"generating {root.name} ...", file=sys.stderr, flush=True)
    for index in range(missions):
        _mission(root, f"m{index:05d}", lines_each)
    done.touch()
    print(f"  generated in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return root
