"""`hud decide DIR MISSION ID approve|reject --reason TEXT`: decide one request, once.

The same act, with the same checks, as the HUD's request screen: a request that is not
pending (stale too when a newer plan version removes or changes its step or adds or
changes a step with effects), does not load, holds hidden characters, does not match its
plan step or its mission's tool rules is refused (fail closed); a rejection needs a
reason. MISSION REQUEST may also be given as one MISSION/REQUEST, as `hud approvals`
prints it. As the HUD asks for a confirmation, approving an external_write needs `--yes`
and approving an irreversible action `--confirm-tool TOOL`. `--digest` binds the decision
to the request you reviewed (from `hud approvals --json`): it is refused if the request
changed since.
`--sign-key PATH` signs the decision (SSHSIG, namespace operator-hud-approval@v1): a
private key file, or a `.pub` whose private key ssh-agent holds (SSH_AUTH_SOCK).
`--print-payload` writes the bytes the decision on disk signs (no decision argument) to
a file or pipe (not a terminal), for `ssh-keygen -Y verify ... < payload`.

Exit 0 decided; 1 refused (checks, an unsafe mission or request id such as `a..b`,
already decided by someone else); 2 cannot run (no such directory, mission or request;
read-only: the user cannot write DIR, or `--read-only`).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from cli.commands import SUMMARIES, sign_key_signer
from hud.acts.decide import decide, decided_first
from hud.acts.session import Session, inline, writer_for
from hud.output import emit_exact, printable, say
from store.derivation.mission import MissionState
from store.format.layout import WORKSPACE_FILE, unsafe_id
from store.index.approval_checks import Review, Verdict, review
from store.index.workspace import Workspace
from store.trust.signatures import decision_payload, signature_state

EXIT_DECIDED, EXIT_REFUSED, EXIT_CANNOT_RUN = 0, 1, 2


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n", 1)[1] if __doc__ else SUMMARIES["decide"]
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("mission", help="the mission id, or MISSION/REQUEST")
    parser.add_argument(
        "request", nargs="?", help="the request id (approvals/<id>.json), unless given above"
    )
    parser.add_argument("decision", nargs="?", metavar="approve|reject")
    parser.add_argument("--reason", default="", help="why (required to reject)")
    parser.add_argument("--yes", action="store_true", help="confirm approving an external_write")
    parser.add_argument(
        "--confirm-tool", metavar="TOOL", help="approve an irreversible action: its tool name"
    )
    parser.add_argument("--digest", help="refuse unless the request still has this digest")
    parser.add_argument(
        "--read-only", action="store_true", help="refuse, as in read-only mode (exit 2)"
    )
    parser.add_argument(
        "--sign-key",
        type=Path,
        metavar="PATH",
        help="sign the decision: a private key file, or a .pub held by ssh-agent",
    )
    parser.add_argument(
        "--print-payload",
        action="store_true",
        help="print the signed payload of the decision on disk, and exit",
    )


def _fail(code: int, message: str) -> int:
    say(f"hud decide: {message}", err=True)
    return code


def _tell(message: str, **_: object) -> None:
    say(f"hud decide: {printable(message)}", err=True)


class Flags:
    """`hud decide`'s answers to the act's questions: the reason and confirmations given as
    flags; `missing` says which flag a refused confirmation needed."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.missing = ""

    async def reason(self, review: Review, verdict: Verdict) -> str | None:
        reason: str = self.args.reason
        return reason.strip()

    async def confirm(self, review: Review) -> bool:
        self.missing = "approving an external_write needs --yes"
        return bool(self.args.yes)

    async def type_tool(self, review: Review) -> bool:
        self.missing = (
            "approving an irreversible action needs --confirm-tool "
            f"{printable(review.tool)!r} (its tool name)"
        )
        return bool(self.args.confirm_tool == review.tool)


def _mission(root: Path, mission_id: str, missing: str) -> tuple[Workspace, MissionState] | int:
    """The scanned directory and the mission; else exit 2, saying `missing`."""
    workspace = Workspace(root)
    workspace.scan()
    mission = workspace.missions.get(mission_id)
    if mission is None:
        return _fail(EXIT_CANNOT_RUN, missing)
    return workspace, mission


def print_payload(root: Path, mission_id: str, request_id: str) -> int:
    """Write the payload the decision on `request_id` signs to stdout, as bytes."""
    missing = f"no decision that loads on {mission_id}/{request_id}"
    found = _mission(root, mission_id, missing)
    if isinstance(found, int):
        return found
    _, mission = found
    decided = mission.decisions.get(request_id)
    if decided is None or decided.record is None:
        return _fail(EXIT_CANNOT_RUN, missing)
    workspace = mission.signature_policy.workspace
    if not isinstance(workspace, str):
        why = workspace.message if workspace is not None else "there is none yet"
        return _fail(EXIT_CANNOT_RUN, f"no state directory id in workspace.toml ({why})")
    if not emit_exact(decision_payload(mission.id, decided.record, workspace)):
        return _fail(EXIT_CANNOT_RUN, "--print-payload writes bytes: redirect it to a file")
    return EXIT_DECIDED


def targets(args: argparse.Namespace) -> tuple[int, str] | None:
    """Read MISSION/REQUEST (as `hud approvals` prints it) into `args.mission` and
    `args.request`, the decision then one word earlier; else (exit code, why): 1 for an
    unsafe id as typed, 2 when the words do not name one request and one decision."""
    if "/" in args.mission:
        if args.decision is not None:
            return EXIT_CANNOT_RUN, f"unexpected {args.decision!r} after MISSION/REQUEST"
        args.decision = args.request
        args.mission, args.request = args.mission.split("/", 1)
    if args.request is None:
        return EXIT_CANNOT_RUN, "name the request: MISSION REQUEST, or MISSION/REQUEST"
    unsafe = unsafe_id(args.mission, args.request)
    if unsafe is not None:  # what was typed: `hud approvals DIR` lists every MISSION/REQUEST
        return EXIT_REFUSED, f"{unsafe}; check what you typed against `hud approvals DIR`"
    if args.decision not in (None, "approve", "reject"):
        return EXIT_CANNOT_RUN, f"the decision is approve or reject, not {args.decision!r}"
    return None


def run(args: argparse.Namespace) -> int:
    root: Path = args.dir
    if not root.is_dir():
        return _fail(EXIT_CANNOT_RUN, f"{root}: no such directory")
    wrong = targets(args)
    if wrong is not None:
        return _fail(wrong[0], printable(wrong[1]))
    if args.print_payload:
        return print_payload(root, args.mission, args.request)
    if args.decision is None:
        return _fail(EXIT_CANNOT_RUN, "say approve or reject (or --print-payload)")
    signer = None
    if args.sign_key is not None:
        signer = sign_key_signer(args.sign_key, "hud decide")
        if signer is None:
            return EXIT_CANNOT_RUN
    writer = writer_for(root.resolve(), args.read_only)
    if writer is None:
        why = "--read-only" if args.read_only else f"you cannot write {root}"
        return _fail(EXIT_CANNOT_RUN, f"read-only ({why}): nothing can be decided")
    found = _mission(root, args.mission, f"no mission {args.mission!r}")
    if isinstance(found, int):
        return found
    workspace, mission = found
    if args.request not in mission.requests:
        return _fail(EXIT_CANNOT_RUN, f"no request {args.request!r} in mission {mission.id}")

    async def reread(relpaths: Iterable[str]) -> None:
        workspace.apply(relpaths)

    def look() -> Review | None:  # the request as the workspace holds it now (None: gone)
        held = workspace.missions.get(mission.id)
        if held is None or args.request not in held.requests:
            return None
        return review(held, args.request, writer.clock())

    session = Session(workspace, writer, lambda _: None, _tell, inline, reread, signer=signer)
    flags = Flags(args)
    outcome = asyncio.run(decide(session, flags, look, args.decision, args.digest))
    decision = outcome.decision
    if outcome.status == "taken":
        return _fail(EXIT_REFUSED, decided_first(decision, datetime.isoformat, printable))
    if outcome.status != "decided" or decision is None:
        return _fail(EXIT_REFUSED, printable(outcome.message or flags.missing))
    done = "approved" if decision.decision == "approve" else "rejected"
    valid = f", valid until {decision.valid_until.isoformat()}" if decision.valid_until else ""
    signed = f", signed by {signer.identity}" if signer is not None else ""
    say(f"{done} {mission.id}/{args.request} ({decision.digest}){valid}{signed}")
    warnings = list(outcome.review.warnings if outcome.review else ())
    workspace.apply([WORKSPACE_FILE])  # the first decision creates it
    signature = signature_state(mission.id, decision, mission.signature_policy)
    if not signature.authorizes or signature.kind in ("invalid", "unvouched"):
        warnings.append(signature.describe())
    for warning in warnings:
        say(f"warning: {printable(warning)}", err=True)
    return EXIT_DECIDED
