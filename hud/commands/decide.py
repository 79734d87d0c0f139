"""`hud decide DIR MISSION ID approve|reject --reason TEXT`: decide one request, once.

The same checks as the HUD's request screen (`store.approval_checks`): a request that
is not pending (stale too when a newer plan version removes or changes its step or adds or
changes a step with effects: `store.plan_binding`), does not load, holds hidden
characters, does not match its plan step or its mission's tool rules is refused (fail
closed); a rejection needs a reason. As the
HUD asks for a confirmation, approving an external_write needs `--yes` and approving an
irreversible action `--confirm-tool TOOL`. `--digest` binds the decision to the request
you reviewed (from `hud approvals --json`): it is refused if the request changed since.

Exit 0 decided; 1 refused (checks, an unsafe mission or request id such as `a..b`,
already decided by someone else); 2 cannot run (no such directory, mission or request;
read-only: the user cannot write DIR, or `--read-only`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hud.commands import SUMMARIES
from hud.commands.output import printable, say
from store.approval_checks import id_blocker, refusal, review
from store.human import AlreadyDecided, HumanWriteError, writer_for
from store.workspace import Workspace

EXIT_DECIDED, EXIT_REFUSED, EXIT_CANNOT_RUN = 0, 1, 2


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n", 1)[1] if __doc__ else SUMMARIES["decide"]
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("mission", help="the mission id")
    parser.add_argument("request", help="the request id (approvals/<id>.json)")
    parser.add_argument("decision", choices=("approve", "reject"))
    parser.add_argument("--reason", default="", help="why (required to reject)")
    parser.add_argument("--yes", action="store_true", help="confirm approving an external_write")
    parser.add_argument(
        "--confirm-tool", metavar="TOOL", help="approve an irreversible action: its tool name"
    )
    parser.add_argument("--digest", help="refuse unless the request still has this digest")
    parser.add_argument(
        "--read-only", action="store_true", help="refuse, as in read-only mode (exit 2)"
    )


def _fail(code: int, message: str) -> int:
    say(f"hud decide: {message}", err=True)
    return code


def run(args: argparse.Namespace) -> int:
    root: Path = args.dir
    if not root.is_dir():
        return _fail(EXIT_CANNOT_RUN, f"{root}: no such directory")
    writer = writer_for(root.resolve(), args.read_only)
    if writer is None:
        why = "--read-only" if args.read_only else f"you cannot write {root}"
        return _fail(EXIT_CANNOT_RUN, f"read-only ({why}): nothing can be decided")
    unsafe = id_blocker(args.mission, args.request)
    if unsafe is not None:
        return _fail(EXIT_REFUSED, printable(unsafe))
    workspace = Workspace(root)
    workspace.scan()
    mission = workspace.missions.get(args.mission)
    if mission is None:
        return _fail(EXIT_CANNOT_RUN, f"no mission {args.mission!r}")
    if args.request not in mission.requests:
        return _fail(EXIT_CANNOT_RUN, f"no request {args.request!r} in mission {mission.id}")
    checked = review(mission, args.request, writer.clock())
    problem = refusal(checked, args.decision, args.reason, seen_digest=args.digest)
    if problem is None and args.decision == "approve":
        if checked.confirmation == "confirm" and not args.yes:
            problem = "approving an external_write needs --yes"
        elif checked.confirmation == "type_tool" and args.confirm_tool != checked.tool:
            problem = (
                "approving an irreversible action needs --confirm-tool "
                f"{printable(checked.tool)!r} (its tool name)"
            )
    if problem is not None or checked.raw is None:
        return _fail(EXIT_REFUSED, printable(problem or "the request does not load"))
    until = checked.valid_until(writer.clock()) if args.decision == "approve" else None
    try:
        decision = writer.decide(
            mission.id, args.request, checked.raw, args.decision, args.reason.strip(), until
        )
    except AlreadyDecided as exc:
        theirs = exc.decision
        if theirs is None:
            return _fail(EXIT_REFUSED, "already decided (the existing decision does not load)")
        said = f" ({printable(theirs.reason)})" if theirs.reason else ""
        return _fail(
            EXIT_REFUSED,
            f"already decided by {printable(theirs.decided_by)} at "
            f"{theirs.decided_at.isoformat()}: {theirs.decision}{said}",
        )
    except (HumanWriteError, OSError) as exc:
        return _fail(EXIT_REFUSED, printable(str(exc)))
    done = "approved" if decision.decision == "approve" else "rejected"
    valid = f", valid until {decision.valid_until.isoformat()}" if decision.valid_until else ""
    say(f"{done} {mission.id}/{args.request} ({decision.digest}){valid}")
    for warning in checked.warnings:
        say(f"warning: {printable(warning)}", err=True)
    return EXIT_DECIDED
