"""`hud handoff DIR MISSION [-o FILE]`: a mission's handoff as Markdown."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.commands import SUMMARIES
from hud.export import CitedEvidence, handoff_markdown
from hud.output import say
from store.index.workspace import Workspace


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = SUMMARIES["handoff"]
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("mission", help="the mission id")
    parser.add_argument("-o", "--output", type=Path, help="write to this file, not stdout")


def run(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        say(f"hud handoff: {args.dir}: no such directory", err=True)
        return 2
    workspace = Workspace(args.dir)
    workspace.scan()
    mission = workspace.missions.get(args.mission)
    if mission is None:
        known = ", ".join(sorted(workspace.missions)) or "none"
        say(f"hud handoff: no mission {args.mission!r} (missions: {known})", err=True)
        return 2
    evidence = CitedEvidence.of(mission).read()
    text = handoff_markdown(mission, workspace.clock(), workspace.settings, evidence)
    if args.output is None:
        say(text.removesuffix("\n"))
    else:
        args.output.write_text(text, encoding="utf-8")
        say(f"wrote {args.output}", err=True)
    return 0
