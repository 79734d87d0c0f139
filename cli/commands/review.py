"""`hud review DIR MISSION [--version N] [--json]`: review a plan version.

Seven questions and six failure modes, each answered pass, fail or unknown from the
mission's records, with the records (path:line) that decide it (how each
is decided: docs/review.md). The latest plan version unless `--version N`.

Exit 0 when no answer is fail; 1 when one is; 2 cannot run (no such directory, mission
or plan version).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.commands import SUMMARIES
from cli.reading import mission_arguments, open_mission, plain
from hud.output import printable, say
from store.analysis.review import Answer, PlanReview, review
from store.derivation.mission import MissionState
from store.format.layout import mission_dir
from store.index.workspace import Workspace
from widgets.json_text import json_text

EXIT_PASSED, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2


def build(parser: argparse.ArgumentParser) -> None:
    mission_arguments(parser, __doc__, SUMMARIES["review"])
    parser.add_argument("--version", type=int, metavar="N", help="the plan version (latest)")


def run(args: argparse.Namespace) -> int:
    mission = open_mission("review", args.dir, args.mission, lambda: _read(args.dir, args.mission))
    if mission is None:
        return EXIT_CANNOT_RUN
    try:
        result = review(mission, args.version)
    except KeyError:
        say(f"hud review: mission {args.mission} has no plan v{args.version}", err=True)
        return EXIT_CANNOT_RUN
    say(json_text(plain(result)) if args.json else render(result))
    return EXIT_FAILED if result.failed else EXIT_PASSED


def _read(root: Path, mission_id: str) -> MissionState | None:
    workspace = Workspace(root)
    workspace.load_settings()
    workspace.apply([mission_dir(mission_id)])
    return workspace.missions.get(mission_id)


def render(result: PlanReview) -> str:
    version = f"plan v{result.plan_version}" if result.plan_version else "no plan"
    latest = f" (latest v{result.latest_version})" if result.latest_version else ""
    lines = [f"review of {printable(result.mission)}, {version}{latest}"]
    for number, answer in enumerate(result.questions, start=1):
        lines += _answer(f"{number}.", answer)
    lines.append("failure modes")
    for answer in result.failure_modes:
        lines += _answer("-", answer)
    failed = sum(answer.verdict == "fail" for answer in result.answers)
    lines.append(f"{failed} failed" if failed else "nothing failed")
    return "\n".join(lines)


def _answer(label: str, answer: Answer) -> list[str]:
    lines = [
        f"{label:>3} {answer.verdict:<7} {answer.question}",
        f"            {printable(answer.reason)}",
    ]
    for cite in answer.cites:
        where = f"{cite.path}:{cite.line}" if cite.line is not None else cite.path
        lines.append(f"            {printable(where)}  {printable(cite.note)}")
    return lines
