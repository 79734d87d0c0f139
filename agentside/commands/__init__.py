"""Subcommands of `hud agent`: each module offers `build(parser)` and `run(args) -> exit code`.

The shell subcommands share their first arguments (`target`) and one way to run: a
refusal of the agents' writer exits 1, a mission that cannot be used exits 2
(`guarded`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from agentside.mission import Unusable, open_mission
from agentside.output import EXIT_REFUSED, EXIT_USAGE, fail
from store.writers.agent import AgentError, AgentWriter

Body = Callable[[AgentWriter, argparse.Namespace], int]


def seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def target(parser: argparse.ArgumentParser) -> None:
    """DIR, --mission, --actor and --json."""
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("--mission", required=True, help="the mission id (it must exist)")
    parser.add_argument("--actor", default="agent", help="who writes (default: agent)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def guarded(args: argparse.Namespace, body: Body) -> int:
    """Run `body` with the mission's writer; refusals and unusable missions become exits."""
    try:
        writer = open_mission(args.dir, args.mission, args.actor)
        return body(writer, args)
    except Unusable as exc:
        return fail(EXIT_USAGE, str(exc))
    except (AgentError, OSError) as exc:
        return fail(EXIT_REFUSED, str(exc))


def read_input(name: str) -> bytes:
    """The bytes of file `name`, or of stdin for `-`; Unusable when it cannot be read."""
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise Unusable(f"cannot read {name}: {exc.strerror or exc}") from exc
