"""Replay of a 1,000,000-line events log: reading it once, then jumping to any event.

Target (replay issue): a jump to any seq takes <= 100 ms. `Replay.frame(seq)` restores
the checkpoint at or before seq - 1 and folds at most CHECKPOINT_LINES lines; the worst
seqs are those just before a checkpoint. Prints the build time and memory, then every
jump's time as median, p90 and max over random seqs and over the worst ones.
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from bench.measure import self_peak_mib
from bench.scenario import workspace
from store.analysis.replay import CHECKPOINT_LINES, Replay

LINES = 1_000_000
JUMPS = 200
TARGET_MS = 100.0


def _jumps(replay: Replay, seqs: list[int]) -> list[float]:
    times = []
    for seq in seqs:
        started = time.perf_counter()
        replay.frame(seq)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _summary(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"  {name}: {len(times)} jumps, median {statistics.median(times):.1f} ms, "
        f"p90 {p90:.1f} ms, max {max(times):.1f} ms"
    )


def main(every: int = CHECKPOINT_LINES) -> None:
    root = workspace(1, LINES)
    started = time.perf_counter()
    replay = Replay(root, "m00000", every=every, cached=False)  # read whole: the build is measured
    replay.refresh()
    built = time.perf_counter() - started
    last = replay.last_seq
    checkpoints = len(replay.mission.event_checkpoints)
    print(
        f"replay of {last:,} events, a checkpoint every {every:,} lines ({checkpoints} kept): "
        f"read in {built:.1f} s ({last / built:,.0f} lines/s), peak RSS {self_peak_mib():.0f} MiB",
        flush=True,
    )
    rng = random.Random(1)
    anywhere = _jumps(replay, [rng.randint(1, last) for _ in range(JUMPS)])
    worst = _jumps(replay, [rng.randrange(1, last // every) * every for _ in range(JUMPS // 4)])
    ends = _jumps(replay, [1, 2, last - 1, last])
    print(_summary("any seq", anywhere))
    print(_summary("just before a checkpoint (the most lines to fold)", worst))
    print(_summary("first and last seqs", ends))
    slowest = max(anywhere + worst + ends)
    verdict = "met" if slowest <= TARGET_MS else "NOT met"
    print(f"  target <= {TARGET_MS:.0f} ms per jump: {verdict} (slowest {slowest:.1f} ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else CHECKPOINT_LINES)
