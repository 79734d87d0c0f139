"""`hud agent request DIR --mission M --step S --tool T [--args JSON] [--wait SECONDS]`.

Writes an approval request for the tool call (against the latest plan version; its risk
is the step's, unless `--risk`) and marks the step waiting for approval. Refused (exit 1)
when the mission's `[tools]` rules mean it could never be approved. With `--wait`, waits
until a human decides, the request expires or SECONDS pass, prints the decision, and
exits 0 approved, 1 rejected, 3 expired, timed out or withdrawn. While it waits it holds
the request's lease (`store.derivation.lease`); leaving without a decision (also on SIGTERM, SIGINT,
SIGHUP) withdraws the request, and an approval it saw is recorded as received. Waiting
does not use the approval: run `hud agent authorize` at commit time.
"""

from __future__ import annotations

import argparse
from typing import Any, get_args

from pydantic import TypeAdapter, ValidationError

from agentside.approval import Interrupted, await_outcome, file_request, leaving_on_signals
from agentside.commands import guarded, read_input, seconds, target
from agentside.mission import Unusable
from agentside.output import EXIT_EXPIRED, EXIT_OK, emit, fail, printable
from store.format.records import Risk
from store.writers.agent import AgentWriter, rfc3339

ARGS: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


def build(parser: argparse.ArgumentParser) -> None:
    target(parser)
    parser.add_argument("--step", required=True, help="the plan step the call serves")
    parser.add_argument("--tool", required=True, help="the exact tool name")
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--args", default="{}", help="the call's arguments, a JSON object")
    given.add_argument("--args-file", metavar="FILE", help="the arguments from a file (- stdin)")
    parser.add_argument("--summary", default="", help="one line for the approver")
    parser.add_argument("--risk", choices=get_args(Risk), help="default: the plan step's risk")
    parser.add_argument("--id", help="the request id (default: req-<random>)")
    parser.add_argument("--expires-in", type=seconds, default=1800.0, help="seconds (default 1800)")
    parser.add_argument("--wait", type=seconds, metavar="SECONDS", help="wait for a decision")


def _args(args: argparse.Namespace) -> dict[str, Any]:
    data = read_input(args.args_file) if args.args_file else args.args.encode()
    try:
        return ARGS.validate_json(data)
    except ValidationError as exc:
        raise Unusable(f"the arguments are not a JSON object: {exc.errors()[0]['msg']}") from exc


def _run(writer: AgentWriter, args: argparse.Namespace) -> int:
    with leaving_on_signals():
        try:
            return _ask(writer, args)
        except Interrupted as signalled:
            said = f"interrupted by {signalled.name}: the request withdrawn (or never filed)"
            return fail(EXIT_EXPIRED, said)


def _ask(writer: AgentWriter, args: argparse.Namespace) -> int:
    request, lease = file_request(
        writer,
        args.step,
        args.tool,
        _args(args),
        summary=args.summary,
        risk=args.risk,
        request_id=args.id,
        expires_in=args.expires_in,
        wait=args.wait is not None,
    )
    expires = rfc3339(request.expires_at) if request.expires_at else None
    data = {"request": request.id, "risk": request.risk, "expires_at": expires}
    asked = f"requested {request.id}: {printable(request.tool)} ({request.risk}), expires {expires}"
    if lease is None:
        emit(args.json, {**data, "status": "pending"}, asked)
        return EXIT_OK
    with lease:
        if not args.json:
            print(f"{asked}; waiting up to {args.wait:g} s", flush=True)
        result = await_outcome(writer, request.id, args.wait, lease, hand_on=True)
    emit(args.json, {**data, **result.as_json()}, printable(result.text()))
    return result.exit_code


def run(args: argparse.Namespace) -> int:
    return guarded(args, _run)
