"""Where `hud check`'s CPU goes, layer by layer, against the loop bench/check_speed.py
holds it to (issue 25: within 1.5x of a `json.loads` + sha256 chain loop).

In one process, on bench/check_speed.py's workspace (200 missions of 1,000 event lines):
each layer of a log read, the whole `check` with `--jobs 1` (no start-up), and the
start-up of `hud check` on an empty state directory (its own process). The layers run
interleaved, ROUNDS times, and the least CPU of each is printed (the machine is shared:
the least is the one least disturbed). Each line adds one layer to the one above it, so
the differences say what each layer costs; the budget line says what 1.5x leaves for
everything above the schema and the hash.
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.check_speed import GOAL, LINES_EACH, MISSIONS
from bench.measure import with_bytecode
from bench.scenario import workspace
from store.derivation.mission import MissionState
from store.format.layout import Kind
from store.format.load import EVENT_ADAPTER, LogReader, plainly_unique
from store.format.records import GENESIS
from store.index.check import check

ROUNDS = 7
WHOLE = "check(--jobs 1): + documents, invariants, reports"


def _layers(root: Path) -> dict[str, Callable[[], object]]:
    ids = sorted(path.name for path in (root / "missions").iterdir())
    logs = [(root / "missions" / m / "events.jsonl").read_bytes() for m in ids]
    validate = EVENT_ADAPTER.validator.validate_json

    def baseline() -> None:  # bench/json_baseline.py's loop
        for data in logs:
            prev = GENESIS
            for line in data.split(b"\n")[:-1]:
                _ = json.loads(line)["prev"] != prev
                prev = hashlib.sha256(line).hexdigest()

    def schema(chain: bool, unique: bool) -> Callable[[], None]:
        def run() -> None:
            for data in logs:
                prev, seq = GENESIS, 0
                for line in data.split(b"\n")[:-1]:
                    digest = hashlib.sha256(line).hexdigest()
                    record = validate(line)
                    if chain and record.prev == prev and record.seq == seq + 1:
                        seq += 1
                        _ = unique and plainly_unique(line, record)
                    prev = digest

        return run

    def reader(fold: bool) -> Callable[[], None]:
        def run() -> None:
            for m in ids:
                mission = MissionState(root, m)
                on_record = mission._on_event if fold else (lambda record, line: None)
                LogReader(root, f"missions/{m}/events.jsonl", Kind.EVENTS, on_record).poll()

        return run

    return {
        "json.loads + sha256 chain (the baseline's loop)": baseline,
        "sha256 + pydantic validate_json": schema(chain=False, unique=False),
        "  + chain and seq checks": schema(chain=True, unique=False),
        "  + duplicate-key guard (plainly_unique)": schema(chain=True, unique=True),
        "LogReader.poll (offsets, counters, delivery, reads)": reader(fold=False),
        "  + the fold (MissionState._on_event)": reader(fold=True),
        WHOLE: lambda: check(root, jobs=1),
    }


def _least_cpu(run: Callable[[], object], best: float) -> float:
    started = time.process_time()
    run()
    return min(best, time.process_time() - started)


def _start_up(argv: list[str]) -> float:
    """CPU seconds of `argv` + an empty state directory (the least of ROUNDS runs)."""
    best = float("inf")
    with tempfile.TemporaryDirectory() as empty:
        (Path(empty) / "missions").mkdir()
        for _ in range(ROUNDS):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([*argv, empty], stdout=subprocess.DEVNULL, check=False)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            best = min(best, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return best


def main() -> None:
    with_bytecode()
    root = workspace(MISSIONS, LINES_EACH)
    lines = MISSIONS * LINES_EACH
    layers = _layers(root)
    check(root / "missions" / "m00000", jobs=1)  # the validators are built on first use
    best = dict.fromkeys(layers, float("inf"))
    for _ in range(ROUNDS):
        for name, run in layers.items():
            best[name] = _least_cpu(run, best[name])
    start = _start_up([str(Path(sys.executable).with_name("hud")), "check", "--json"])
    base_start = _start_up([sys.executable, "-m", "bench.json_baseline"])
    for name, seconds in best.items():
        print(f"{seconds / lines * 1e6:6.2f} us/line  {seconds:6.3f} s  {name}")
    print(f"                {start:6.3f} s  start-up: hud check on an empty folder")
    print(f"                {base_start:6.3f} s  start-up: the baseline on an empty folder")
    whole = start + best[WHOLE]
    baseline = base_start + next(iter(best.values()))
    budget = GOAL * baseline - whole
    print(
        f"hud check {whole:.3f} s = {whole / baseline:.2f}x the baseline's {baseline:.3f} s; "
        f"{GOAL}x leaves {budget:+.3f} s ({budget / lines * 1e6:+.2f} us a line)"
    )


if __name__ == "__main__":
    main()
