"""`python -m simulator DIR [--missions N] [--rate EVENTS_PER_S] [--seed S] [--ticks N]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simulator.runner import Runner
from simulator.scenarios import SCENARIOS


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def parser() -> argparse.ArgumentParser:
    names = ", ".join(f"{s.base_id} ({s.name})" for s in SCENARIOS)
    result = argparse.ArgumentParser(
        prog="python -m simulator",
        description="Play simulated agents into a state directory, through store.writers.agent "
        "only. "
        f"Scenarios, in order: {names}. More missions than scenarios repeat them.",
    )
    result.add_argument("dir", type=Path, help="the state directory (created if missing)")
    result.add_argument(
        "--missions",
        type=_positive_int,
        default=len(SCENARIOS),
        help=f"how many missions to play (default {len(SCENARIOS)}: one per scenario)",
    )
    result.add_argument(
        "--rate", type=_positive_float, default=20.0, help="actions per second (default 20)"
    )
    result.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    result.add_argument(
        "--ticks", type=_positive_int, default=None, help="stop after this many ticks (tests)"
    )
    return result


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    root: Path = args.dir
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"simulator: cannot use {root}: {exc}", file=sys.stderr)
        return 2
    runner = Runner(root, args.missions, args.rate, args.seed, args.ticks)
    print(
        f"simulator: {args.missions} missions in {root} at {args.rate:g}/s (seed {args.seed}); "
        "Ctrl+C stops",
        file=sys.stderr,
    )
    return runner.run()


if __name__ == "__main__":
    sys.exit(main())
