"""`hud replay DIR M --at N` on a 1,000,000-line events log, against the same command on a
20-line log and against `hud check` on the big log.

Targets (issue 25): once the log is indexed, `--at N` for any N within 2x of the command
on a 20-line log (a process start is the floor); the first visit (no index yet) no
slower than `hud check` on that log; peak RSS at most 400 MB. Each figure is the median
of RUNS interleaved pairs (the machine's speed drifts: the ratio is what counts).

The logs are written directly (seq, `prev` chain, compact JSON: what an agent writes),
once, into a temp folder; the user's cache folder is a temp folder too (HUD_CACHE_DIR).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.measure import run_measured, with_bytecode

BIG, SMALL = 1_000_000, 20
SEQS = (10, 500_000, 999_990)
RUNS = 5
FIRST_RUNS = 3
"""Pairs for the first visit (each folds the whole log, as `hud check` does)."""
MISSION = "m"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
STEPS = [f"s{i}" for i in range(1, 6)]
EVIDENCE_EVERY = 100
"""An evidence line every this many events (the evidence log is folded as of a time)."""


def _stamp(n: int) -> str:
    return (T0 + timedelta(seconds=n)).isoformat(timespec="milliseconds")[:-6] + "Z"


def _events(lines: int) -> Iterator[str]:
    """The fields of each event after `seq` and `prev`, as JSON text: steps moving
    through their states, attempts, usage (written as text: json.dumps of a million
    dicts takes most of a minute)."""
    for n in range(lines):
        head = f'"at":"{_stamp(n)}","actor":"bench-agent"'
        step = STEPS[(n // 50) % len(STEPS)]
        kind = n % 10
        if kind == 9:
            yield f'{head},"type":"usage","usd":{n / 100000},"tokens":{n * 3},"steps":{n // 10}'
        elif kind in (3, 4):
            phase, outcome = ("started", "") if kind == 3 else ("finished", ',"outcome":"ok"')
            yield (
                f'{head},"type":"attempt","step":"{step}","attempt":{n // 10 + 1},'
                f'"phase":"{phase}","tool":"shell","idempotency_key":"k-{n // 10}",'
                f'"effect_possible":false{outcome}'
            )
        else:
            state = ("running", "verifying", "running")[n % 3]
            yield (
                f'{head},"type":"step","step":"{step}","plan_version":1,"state":"{state}",'
                f'"reason":"working through item {n} of the benchmark run, {state} as planned"'
            )


def _evidence(lines: int) -> Iterator[str]:
    for n in range(EVIDENCE_EVERY - 1, lines, EVIDENCE_EVERY):
        step = STEPS[(n // 50) % len(STEPS)]
        verdict = "pass" if n % 300 else "fail"
        yield (
            f'"at":"{_stamp(n)}","id":"ev-{n}","step":"{step}","observed":"the tests pass",'
            f'"method":"ran the suite","proves":"the step works","verdict":"{verdict}"'
        )


def write_log(path: Path, records: Iterator[str]) -> None:
    """A hash-chained log (seq, prev, compact JSON), written in large blocks."""
    prev, block = "0" * 64, []
    with path.open("wb") as out:
        for seq, fields in enumerate(records, start=1):
            schema = '"schema":1,' if seq == 1 else ""
            line = f'{{{schema}"seq":{seq},"prev":"{prev}",{fields}}}'.encode()
            prev = hashlib.sha256(line).hexdigest()
            block.append(line)
            if len(block) >= 10_000:
                out.write(b"\n".join(block) + b"\n")
                block.clear()
        if block:
            out.write(b"\n".join(block) + b"\n")


def state_dir(root: Path, lines: int) -> Path:
    """A state directory with one mission whose events log has `lines` lines."""
    folder = root / "missions" / MISSION
    (folder / "plan").mkdir(parents=True)
    (folder / "intent.toml").write_text(
        'schema = 1\ntitle = "Replay benchmark"\nobjective = "measure"\n'
    )
    (folder / "constraints.toml").write_text(
        "schema = 1\n\n[budget]\nusd = 100000.0\ntokens = 10000000000\nsteps = 10000000\n"
    )
    steps = [{"id": s, "title": f"step {s}", "risk": "read_only"} for s in STEPS]
    plan = {
        "schema": 1,
        "version": 1,
        "created_at": "2026-01-01T00:00:00Z",
        "author": "bench-agent",
        "steps": steps,
    }
    (folder / "plan" / "v1.json").write_text(json.dumps(plan, indent=2))
    write_log(folder / "events.jsonl", _events(lines))
    write_log(folder / "evidence.jsonl", _evidence(lines))
    return root


def _hud() -> str:
    return str(Path(sys.executable).with_name("hud"))


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one run; it must exit 0."""
    wall, peak, code = run_measured(argv, stdout=subprocess.DEVNULL, env=env)
    if code not in (0, 1):  # `hud check` exits 1 on problems: the log has none
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return wall, peak


def main() -> None:
    with_bytecode()
    temp = Path(tempfile.mkdtemp(prefix="replay-jump-"))
    try:
        big, small = state_dir(temp / "big", BIG), state_dir(temp / "small", SMALL)
        size = (big / "missions" / MISSION / "events.jsonl").stat().st_size
        print(f"events log: {BIG:,} lines, {size / 1e6:.0f} MB", flush=True)
        env = {**os.environ, "HUD_CACHE_DIR": str(temp / "cache")}
        hud = _hud()

        def replay(root: Path, seq: int) -> list[str]:
            return [hud, "replay", str(root), MISSION, "--at", str(seq)]

        check = [hud, "check", str(big)]
        firsts, first_ratios, peaks = [], [], []
        for _ in range(FIRST_RUNS):  # each with no index yet
            shutil.rmtree(temp / "cache", ignore_errors=True)
            first, peak = _timed(replay(big, SEQS[1]), env)
            checked, _ = _timed(check, env)
            firsts.append(first)
            first_ratios.append(first / checked)
            peaks.append(peak)
        print(
            f"first visit (no index yet): {statistics.median(firsts):.2f} s, "
            f"{statistics.median(first_ratios):.2f}x `hud check` (target <= 1; median of "
            f"{FIRST_RUNS} pairs: {', '.join(f'{r:.2f}' for r in first_ratios)})",
            flush=True,
        )
        for seq in SEQS:
            small_ratios, check_ratios, walls = [], [], []
            for _ in range(RUNS):
                wall, peak = _timed(replay(big, seq), env)
                base, _ = _timed(replay(small, min(seq, SMALL)), env)
                checked, _ = _timed(check, env)
                walls.append(wall)
                peaks.append(peak)
                small_ratios.append(wall / base)
                check_ratios.append(wall / checked)
            print(
                f"--at {seq:>7,}: {statistics.median(walls):.2f} s, "
                f"{statistics.median(small_ratios):.2f}x the 20-line log (target <= 2; "
                f"pairs: {', '.join(f'{r:.2f}' for r in small_ratios)}), "
                f"{statistics.median(check_ratios):.3f}x `hud check`",
                flush=True,
            )
        print(f"peak RSS of a replay: {max(peaks):.0f} MiB (target <= 400 MB)")
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
