"""`hud simulate DIR`: run the simulated agents as their own process.

The simulator is an agent; the HUD never imports it. This command replaces itself
with `python -m simulator`, so what runs is exactly what `hud demo` starts.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = "Play simulated agents writing into a state directory."
    parser.add_argument("dir", type=Path, help="the state directory (created if missing)")
    parser.add_argument("--missions", type=int, default=8, help="how many missions (default 8)")
    parser.add_argument("--rate", type=float, default=20.0, help="events per second (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")


def command_line(args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        "-m",
        "simulator",
        str(args.dir),
        "--missions",
        str(args.missions),
        "--rate",
        str(args.rate),
        "--seed",
        str(args.seed),
    ]


def run(args: argparse.Namespace) -> int:
    argv = command_line(args)
    os.execv(argv[0], argv)
    return 0  # not reached: execv replaces this process
