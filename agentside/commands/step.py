"""`hud agent step DIR --mission M STEP STATE [--reason TEXT] [--plan-version N]`.

Appends a step event (the latest plan version unless `--plan-version`); the step must be
in that version.
"""

from __future__ import annotations

import argparse
from typing import get_args

from agentside.commands import guarded, target
from agentside.mission import plan_step
from agentside.output import EXIT_OK, emit, printable
from store.format.records import StepState
from store.writers.agent import AgentWriter


def build(parser: argparse.ArgumentParser) -> None:
    target(parser)
    parser.add_argument("step", help="a step id of the plan")
    parser.add_argument("state", choices=get_args(StepState))
    parser.add_argument("--reason", default="", help="why (shown in the Execution tab)")
    parser.add_argument("--plan-version", type=int, help="default: the latest")


def _run(writer: AgentWriter, args: argparse.Namespace) -> int:
    version, _ = plan_step(writer, args.step, args.plan_version)
    event = writer.step(args.step, args.state, version, args.reason)
    emit(
        args.json,
        {"seq": event.seq, "step": args.step, "state": args.state, "plan_version": version},
        f"seq {event.seq}: {printable(args.step)} {args.state} (plan v{version})",
    )
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    return guarded(args, _run)
