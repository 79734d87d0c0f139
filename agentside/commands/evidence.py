"""`hud agent evidence DIR --mission M STEP --observed ... --method ... --proves ...`.

Appends one evidence line. With `--artifact FILE`, the file's bytes are stored once under
the mission's `artifacts/` (as `--artifact-name`, default the file's name) and the line
cites their sha256 and size.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentside.commands import guarded, read_input, target
from agentside.mission import plan_step
from agentside.output import EXIT_OK, emit, printable
from store.writers.agent import AgentWriter


def build(parser: argparse.ArgumentParser) -> None:
    target(parser)
    parser.add_argument("step", help="the step it is evidence for")
    parser.add_argument("--observed", required=True, help="what was seen")
    parser.add_argument("--method", required=True, help="how it was seen")
    parser.add_argument("--proves", required=True, help="what it establishes")
    parser.add_argument("--verdict", choices=("pass", "fail"), default="pass")
    parser.add_argument("--id", default="", help="evidence id (default: ev-<seq>)")
    parser.add_argument("--artifact", metavar="FILE", help="store this file as an artifact")
    parser.add_argument("--artifact-name", help="its path under artifacts/ (default: its name)")


def _run(writer: AgentWriter, args: argparse.Namespace) -> int:
    plan_step(writer, args.step)
    data = read_input(args.artifact) if args.artifact else None
    name = args.artifact_name or (Path(args.artifact).name if args.artifact else None)
    item = writer.evidence(
        args.step,
        args.observed,
        args.method,
        args.proves,
        args.verdict,
        id=args.id,
        artifact=data,
        artifact_name=name,
    )
    ref = item.artifact
    cited = f", artifact {printable(ref.path)} sha256:{ref.sha256}" if ref else ""
    emit(
        args.json,
        {"seq": item.seq, "id": item.id, "artifact": ref.model_dump() if ref else None},
        f"seq {item.seq}: evidence {printable(item.id)} for {printable(args.step)}{cited}",
    )
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    return guarded(args, _run)
