"""Asking a human: file an approval request, wait for the decision, read what it says.

The same path for `hud agent request`, the Claude Code hook and the MCP server. Filing
first refuses what the HUD could never approve (a tool the mission's rules deny; a tool
or args holding a control or invisible character, a newline too, which the HUD refuses
to approve: `store.index.approval_checks`), then writes the request and the step's
`waiting_for_approval` event.
Waiting never uses the approval; `authorize` (`AgentWriter.start_approved_attempt`) does,
at commit time.

A waiter holds the request's lease (`store.derivation.lease`) from before the request is written
until it stops waiting, so the HUD sees whether anyone still waits. Leaving without a
decision (no decision in time, or SIGTERM, SIGINT or SIGHUP while waiting) records a
`waiter` event `withdrawn`: the request can no longer be approved. A waiter that hands
the approval on to another process (`hud agent request --wait`, then `authorize`)
records `received` once it saw it.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import chain
from typing import Any, Literal

from agentside.mission import constraints, plan_step
from agentside.output import EXIT_ALREADY, EXIT_EXPIRED, EXIT_OK, EXIT_REFUSED
from agentside.policy import tool_refusal
from store.derivation.lease import Lease, LeaseTaken
from store.format.records import ApprovalRequest, Risk
from store.writers.agent import AgentError, AgentWriter, Authorization, rfc3339, wait_for_decision

Status = Literal[
    "approved",
    "rejected",
    "expired",
    "timed_out",
    "withdrawn",
    "pending",
    "refused",
    "already_authorized",
]
LEAVE_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Signals on which a waiter withdraws its request before it exits."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where a request stands for the agent, and why."""

    request: str
    status: Status
    reason: str
    decided_by: str = ""
    decided_at: str = ""

    @property
    def exit_code(self) -> int:
        """0 approved; 3 expired, timed out or withdrawn; 4 already authorized under the
        same key (resume: do not repeat the effect); 1 anything else (rejected, refused,
        pending)."""
        if self.status == "approved":
            return EXIT_OK
        if self.status == "already_authorized":
            return EXIT_ALREADY
        no_decision = ("expired", "timed_out", "withdrawn")
        return EXIT_EXPIRED if self.status in no_decision else EXIT_REFUSED

    def as_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "status": self.status,
            "reason": self.reason,
            "decided_by": self.decided_by or None,
            "decided_at": self.decided_at or None,
        }

    def text(self) -> str:
        """One line: `approved by alice at T: reason`, `timed out: not decided` ..."""
        said = self.status.replace("_", " ")
        if self.decided_by:
            said += f" by {self.decided_by} at {self.decided_at}"
        return f"{said}: {self.reason}" if self.reason else said


def outcome(request_id: str, auth: Authorization, *, waited: bool) -> Outcome:
    """What `auth` (from `authorize`) says; "not decided" is `timed_out` after a wait.
    Who decided, and when, is told only for an approval or a rejection that stands."""
    decision = auth.decision
    status: Status
    reason = auth.reason
    if auth.resume:
        return Outcome(request_id, "already_authorized", reason)
    if decision is not None and (auth.ok or decision.decision == "reject"):
        status = "approved" if auth.ok else "rejected"
        return Outcome(
            request_id, status, decision.reason, decision.decided_by, rfc3339(decision.decided_at)
        )
    if auth.reason.startswith("expired: "):
        status, reason = "expired", auth.reason.removeprefix("expired: ")
    elif auth.reason == "not decided":
        status = "timed_out" if waited else "pending"
    else:
        status = "refused"
    return Outcome(request_id, status, reason)


class Interrupted(Exception):
    """A signal in LEAVE_SIGNALS arrived while a waiter filed its request or waited."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.name = signal.Signals(signum).name


def file_request(
    writer: AgentWriter,
    step: str,
    tool: str,
    args: dict[str, Any],
    *,
    summary: str = "",
    risk: Risk | None = None,
    request_id: str | None = None,
    expires_in: float,
    wait: bool = False,
) -> tuple[ApprovalRequest, Lease | None]:
    """Write a request against the latest plan version (its step's risk unless `risk`),
    expiring after `expires_in` seconds, and mark the step waiting for approval. With
    `wait`, the request's lease is taken first and returned, held: the caller waits."""
    refused = tool_refusal(tool, constraints(writer)) or _unreadable(tool, args)
    if refused is not None:
        raise AgentError(f"cannot be approved in the HUD: {refused}")
    version, spec = plan_step(writer, step)
    request_id = request_id or f"req-{secrets.token_hex(6)}"
    lease = None
    if wait:
        try:
            lease = Lease.take(writer.root, writer.mission, request_id)
        except LeaseTaken as exc:
            raise AgentError(str(exc)) from exc
    try:
        request = writer.request_approval(
            request_id,
            step,
            version,
            tool,
            args,
            risk or spec.risk,
            summary,
            valid_for=timedelta(seconds=expires_in),
        )
    except BaseException:
        if lease is not None:
            lease.abandon()
        raise
    try:
        writer.step(step, "waiting_for_approval", version, f"approval requested: {request_id}")
    except BaseException as exc:
        if lease is not None:  # filed, but its waiter leaves at once
            left = f"got {exc.name}" if isinstance(exc, Interrupted) else "failed"
            writer.waiter(request_id, "withdrawn", f"the waiter {left} while filing it")
            lease.release()
        raise
    return request, lease


def _unreadable(tool: str, args: dict[str, Any]) -> str | None:
    """The first character of `tool` or `args` an approver could not read, as the HUD's
    own check names it."""
    from store.index.approval_checks import hazards  # only asking needs it: the hook starts sooner

    found = next(chain(hazards(tool, ("tool",)), hazards(args, ("args",), lines=True)), None)
    return f"tool or args contain a control or invisible character ({found})" if found else None


@contextlib.contextmanager
def leaving_on_signals() -> Iterator[None]:
    """Inside, the first of LEAVE_SIGNALS raises Interrupted and later ones are ignored
    (the withdrawal is being written); handlers are put back on exit. The main thread
    only: elsewhere signals are not ours to handle. A waiter enters it before it files
    its request, so that a signal never finds it waiting with the default handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, _frame: object) -> None:
        for sig in LEAVE_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, leave) for sig in LEAVE_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def await_outcome(
    writer: AgentWriter, request_id: str, seconds: float, lease: Lease, *, hand_on: bool = False
) -> Outcome:
    """Wait up to `seconds` (at most until the request expires) for the decision, holding
    the request's `lease`. Leaving without a decision withdraws the request (a `waiter`
    event), also on SIGTERM, SIGINT or SIGHUP inside `leaving_on_signals` (status
    `withdrawn`); with `hand_on`, an approval seen is recorded as `received`, so that
    another process may authorize it later."""
    try:
        auth = wait_for_decision(writer.root, writer.mission, request_id, seconds, lease=lease)
        result = outcome(request_id, auth, waited=True)
        if result.status == "timed_out":
            writer.waiter(request_id, "withdrawn", f"no decision within {seconds:g} s")
        elif result.status == "approved" and hand_on:
            writer.waiter(request_id, "received", "the waiter saw the approval")
        return result
    except Interrupted as signalled:
        reason = f"the waiter got {signalled.name} and left"
        writer.waiter(request_id, "withdrawn", reason)
        return Outcome(request_id, "withdrawn", reason)
