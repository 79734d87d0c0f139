"""`hud replay DIR MISSION [--at SEQ] [--json]`: a mission as it was at one event.

Without `--at`: how many events the log has and its landmarks (handoffs, steps that
succeeded, failed or blocked, tool calls, halts, findings), each with its seq. With
`--at SEQ`: the plan version, step states, budget used, requests and evidence as of
that event, and what changed from the event before (docs/review.md).

Exit 0; 2 cannot run (no such directory, mission or event, or an events log that cannot
be read: its problem is said).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.commands import SUMMARIES
from cli.reading import mission_arguments, open_mission, plain
from hud.output import printable, say
from store.analysis.replay import Frame, Moment, Replay
from store.derivation.ledger import Mark
from store.format.text import amount
from widgets.json_text import json_text

EXIT_OK, EXIT_CANNOT_RUN = 0, 2


def build(parser: argparse.ArgumentParser) -> None:
    mission_arguments(parser, __doc__, SUMMARIES["replay"])
    parser.add_argument("--at", type=int, metavar="SEQ", help="the event (line of events.jsonl)")


def run(args: argparse.Namespace) -> int:
    replay = open_mission("replay", args.dir, args.mission, lambda: _read(args.dir, args.mission))
    if replay is None:
        return EXIT_CANNOT_RUN
    unread = replay.unread
    if unread is not None:
        said = f"hud replay: {printable(unread.where)} {printable(unread.message)}"
        say(said + (f"\n  fix: {printable(unread.hint)}" if unread.hint else ""), err=True)
        return EXIT_CANNOT_RUN
    if args.at is None:
        marks = replay.mission.ledger.marks()
        if args.json:
            listed = {"mission": args.mission, "last_seq": replay.last_seq, "landmarks": marks}
            say(json_text(plain(listed)))
        else:
            say(render_timeline(args.mission, replay.last_seq, marks))
        return EXIT_OK
    try:
        frame = replay.frame(args.at)
    except ValueError as exc:
        say(f"hud replay: {exc}", err=True)
        return EXIT_CANNOT_RUN
    say(json_text(plain(frame)) if args.json else render_frame(args.mission, frame))
    return EXIT_OK


def _read(root: Path, mission_id: str) -> Replay | None:
    """The mission's replay, its logs verified: what the cache kept of a log written
    since is hashed again (and read again from the start if it changed)."""
    replay = Replay(root, mission_id)
    if not replay.refresh():
        return None
    replay.verify(changed_only=True)
    return replay


def render_timeline(mission: str, last_seq: int, marks: list[Mark]) -> str:
    lines = [f"{printable(mission)}: {last_seq} events; landmarks (hud replay --at SEQ):"]
    for mark in marks:
        step = f" {mark.step}" if mark.step else ""
        lines.append(
            f"  {mark.line:>7}  {mark.at.isoformat()}  {printable(mark.actor)}{printable(step)}: "
            f"{printable(mark.describe())}"
        )
    if not marks:
        lines.append("  none")
    return "\n".join(lines)


def render_frame(mission: str, frame: Frame) -> str:
    moment = frame.moment
    when = moment.at.isoformat() if moment.at else "no time"
    lines = [
        f"{printable(mission)} at seq {moment.seq} of {frame.last_seq} ({when})",
        f"event: {printable(moment.event)}"
        + (f" by {printable(moment.actor)}" if moment.actor else ""),
        f"status: {moment.status}",
        f"plan: v{moment.plan_version}" if moment.plan_version else "plan: none yet",
    ]
    lines += _details(moment)
    lines.append(f"changed since seq {frame.previous.seq}:")
    for change in frame.changes:
        key = f" {printable(change.key)}" if change.key else ""
        lines.append(
            f"  {change.what}{key}: {printable(change.before) or '-'} -> "
            f"{printable(change.after) or '-'}"
        )
    if not frame.changes:
        lines.append("  nothing")
    return "\n".join(lines)


def _details(moment: Moment) -> list[str]:
    lines = ["steps:"] if moment.steps else []
    for step in moment.steps:
        where = f" (line {step.line})" if step.line else ""
        reason = f": {printable(step.reason)}" if step.reason else ""
        lines.append(
            f"  {printable(step.id)}  {step.risk or '-'}  {step.state or '-'}{where}{reason}"
        )
    if moment.budget:
        used = ", ".join(
            f"{limit.name} {amount(limit.name, limit.used)} of {amount(limit.name, limit.limit)}"
            for limit in moment.budget
        )
        lines.append(f"budget: {used}")
    if moment.requests:
        lines.append("requests:")
    for request in moment.requests:
        lines.append(
            f"  {printable(request.id)}  {request.status}  {printable(request.step)}  "
            f"{printable(request.tool)}"
        )
    lines.append(f"evidence: {moment.evidence_lines} so far")
    for item in moment.evidence[-5:]:
        lines.append(
            f"  {printable(item.id)}  {item.verdict}  {printable(item.step)}  (line {item.line})"
        )
    if moment.halt is not None:
        lines.append(f"halted: {printable(moment.halt)}")
    errors = [p for p in moment.problems if p.severity == "error"]
    if errors:
        lines.append(f"problems: {len(errors)} errors, first: {printable(errors[0].message)}")
    return lines
