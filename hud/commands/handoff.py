"""`hud handoff DIR MISSION [-o FILE]`: a mission's handoff as Markdown."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hud.commands import SUMMARIES
from hud.export import handoff_markdown
from store.workspace import Workspace


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = SUMMARIES["handoff"]
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("mission", help="the mission id")
    parser.add_argument("-o", "--output", type=Path, help="write to this file, not stdout")


def run(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        print(f"hud handoff: {args.dir}: no such directory", file=sys.stderr)
        return 2
    workspace = Workspace(args.dir)
    workspace.scan()
    mission = workspace.missions.get(args.mission)
    if mission is None:
        known = ", ".join(sorted(workspace.missions)) or "none"
        print(f"hud handoff: no mission {args.mission!r} (missions: {known})", file=sys.stderr)
        return 2
    text = handoff_markdown(mission, workspace.clock(), workspace.settings)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0
