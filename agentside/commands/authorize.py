"""`hud agent authorize DIR --mission M ID [--attempt N] [--key KEY]`: the commit-time check.

Ok (exit 0) only when a human approved request ID exactly as it is now, the plan version
it names still holds, neither it nor the approval has expired, and no attempt has used
it: then the attempt's start is recorded (with the request's own step, tool and args), so
the approval is used, once. Else exit 1 (rejected, stale, already used, not decided,
nobody waiting) or 3 (expired, withdrawn): do not run the call.

Idempotent resume: run again with the key that used the approval (`--key`, or the
default `<mission>/<request>` both times), it exits 4 and says "already authorized for
attempt A under K at T": the effect may have happened; do not repeat it, find out and
record its outcome. A different key stays refused (exit 1).
"""

from __future__ import annotations

import argparse

from agentside.approval import outcome
from agentside.commands import guarded, target
from agentside.output import emit, printable
from store.writers.agent import AgentWriter


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
    used = auth.used if auth.resume else None
    seq = started.seq if started else used.seq if used else None
    data = {**result.as_json(), "ok": auth.ok, "attempt_seq": seq}
    if used is not None:
        data.update(attempt=used.attempt, idempotency_key=used.idempotency_key)
    if started is not None:
        text = f"authorized {args.request}: attempt {args.attempt} started (seq {started.seq})"
    elif used is not None:
        text = f"{args.request}: {printable(auth.reason)}"
    else:
        text = f"not authorized {args.request}: {printable(auth.reason)}"
    emit(args.json, data, text)
    return result.exit_code


def run(args: argparse.Namespace) -> int:
    return guarded(args, _run)
