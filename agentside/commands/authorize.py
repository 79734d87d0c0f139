"""`hud agent authorize DIR --mission M ID [--attempt N] [--key KEY]`: the commit-time check.

Ok (exit 0) only when a human approved request ID exactly as it is now, the plan version
it names still holds, neither it nor the approval has expired, and no attempt has used
it: then the attempt's start is recorded (with the request's own step, tool and args), so
the approval is used, once. Else exit 1 (rejected, stale, already used, not decided) or 3
(expired): do not run the call.
"""

from __future__ import annotations

import argparse

from agentside.approval import outcome
from agentside.commands import guarded, target
from agentside.output import emit, printable
from store.agent import AgentWriter


def build(parser: argparse.ArgumentParser) -> None:
    target(parser)
    parser.add_argument("request", help="the request id")
    parser.add_argument("--attempt", type=int, default=1, help="attempt number (default 1)")
    parser.add_argument("--key", help="idempotency key (default: <mission>/<request>)")


def _run(writer: AgentWriter, args: argparse.Namespace) -> int:
    auth, started = writer.start_approved_attempt(
        args.request, args.attempt, idempotency_key=args.key
    )
    result = outcome(args.request, auth, waited=False)
    data = {**result.as_json(), "ok": auth.ok, "attempt_seq": started.seq if started else None}
    if started is not None:
        text = f"authorized {args.request}: attempt {args.attempt} started (seq {started.seq})"
    else:
        text = f"not authorized {args.request}: {printable(auth.reason)}"
    emit(args.json, data, text)
    return result.exit_code


def run(args: argparse.Namespace) -> int:
    return guarded(args, _run)
