"""Claude Code's tool hooks, answered from the mission's rules and a human's decision.

**PreToolUse**: the gate (`agentside.policy`) decides. A denied tool is denied; a call
that passes (read-only, or a risk the mission's `[approval] auto` allows) is allowed and
its attempt's start recorded; any other call becomes an approval request (id: the tool
use id; denied at once when the HUD could not approve it, see
`agentside.approval.file_request`), expiring when the wait does, and the hook waits for
the decision, holding the request's lease (`store.derivation.lease`): approved, the attempt starts
through `start_approved_attempt` with that lease (the approval is used, once, and only
by this waiter) and the call is allowed; SIGTERM, SIGINT or SIGHUP while waiting
withdraws the request and denies; rejected, denied with the approver's
reason; no decision in time, `ask` (Claude Code asks its user) with `--on-timeout ask`,
else denied. Anything that goes wrong denies: the hook fails closed.

**PostToolUse** / **PostToolUseFailure**: the attempt's end (outcome, and `output_ref`:
the sha256 of the tool's response) and, for a call with effects, an evidence line citing
that hash, so the Execution tab follows the session live.

The session's calls are attempts of one plan step (`--step`, default `session`); a
mission without a plan gets plan v1 holding only that step. Attempts are numbered by the
events log's length when they start; the end finds its start by the tool use id.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentside.approval import (
    Interrupted,
    Outcome,
    await_outcome,
    file_request,
    leaving_on_signals,
    outcome,
)
from agentside.mission import Unusable, constraints, open_mission, plan_step
from agentside.policy import gate, tool_risk
from store.format.layout import Kind, safe_request_id
from store.format.records import Risk, canonical_json
from store.writers.agent import AgentError, AgentWriter, PlanError, compact_json, find_attempt

MAX_LOGGED_ARGS = 64 * 1024
"""Larger tool inputs (a big Write) are logged as their size and sha256: a log line is
capped at 1 MiB. An approval request always holds the whole input."""

Permission = Literal["allow", "deny", "ask"]
MIN_WAIT = 0.05


class HookInput(BaseModel):
    """What Claude Code writes on a tool hook's stdin (fields this hook does not use, such
    as `transcript_path` and `permission_mode`, are ignored)."""

    model_config = ConfigDict(extra="ignore")

    hook_event_name: str
    session_id: str = ""
    cwd: str = ""
    tool_name: str = Field(min_length=1)
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tool_use_id: str = ""
    tool_response: Any = None
    error: Any = None
    """PostToolUseFailure: what went wrong."""


@dataclass(frozen=True, slots=True)
class Session:
    """Where and how the hook works: `hud agent claude-hook`'s options."""

    root: Path
    mission: str
    step: str = "session"
    wait: float = 45.0
    on_timeout: Literal["deny", "ask"] = "deny"
    since: float = field(default_factory=time.monotonic)
    """When the wait's clock started (monotonic): the hook process's start, so that a
    slow start on a busy machine eats into the wait, not into the answer's margin."""

    def left(self) -> float:
        """Seconds of the wait still left (at least a little: the request must expire
        after it is written)."""
        return max(self.wait - (time.monotonic() - self.since), MIN_WAIT)


def answer(decision: Permission, reason: str) -> dict[str, Any]:
    """PreToolUse's answer on stdout."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": f"Operator HUD: {reason}",
        }
    }


def pre_tool_use(hook: HookInput, session: Session) -> dict[str, Any]:
    """Allow, deny or ask, as the module's docstring says; never raises."""
    try:
        return _pre(hook, session)
    except (AgentError, Unusable, OSError) as exc:
        return answer("deny", str(exc))
    except Exception as exc:
        return answer("deny", f"the hook failed ({type(exc).__name__}: {exc})")


def _pre(hook: HookInput, session: Session) -> dict[str, Any]:
    writer = _writer(hook, session)
    tool, step = hook.tool_name, session.step
    verdict = gate(tool, constraints(writer))
    if verdict.verdict == "deny":
        return answer("deny", verdict.reason)
    version = _session_step(writer, step)
    if verdict.verdict == "pass":
        writer.attempt(
            step,
            _next_attempt(writer),
            "started",
            tool,
            _logged(hook.tool_input),
            idempotency_key=hook.tool_use_id,
            effect_possible=verdict.risk != "read_only",
        )
        return answer("allow", verdict.reason)
    request_id = _request_id(hook)
    with leaving_on_signals():
        try:
            result = _ask(writer, hook, session, verdict.risk, request_id)
        except Interrupted as signalled:
            said = f"interrupted by {signalled.name}: request {request_id} withdrawn"
            return answer("deny", f"{said} (or never filed)")
    if result.status == "approved":
        writer.step(step, "running", version, f"approved: {request_id}")
        return answer("allow", f"request {request_id} {result.text()}")
    writer.step(step, "running", version, f"{result.status.replace('_', ' ')}: {request_id}")
    if result.status in ("expired", "timed_out") and session.on_timeout == "ask":
        return answer("ask", f"no decision on request {request_id} within {session.wait:g} s")
    return answer("deny", f"request {request_id} {result.text()}")


def _ask(
    writer: AgentWriter, hook: HookInput, session: Session, risk: Risk, request_id: str
) -> Outcome:
    """File the request, wait for the decision holding its lease and, approved, start the
    attempt with that lease: status `approved` only once the attempt started. The request
    expires when the wait ends."""
    seconds = session.left()
    _, lease = file_request(
        writer,
        session.step,
        hook.tool_name,
        hook.tool_input,
        summary=_summary(hook),
        risk=risk,
        request_id=request_id,
        expires_in=seconds,
        wait=True,
    )
    if lease is None:  # file_request takes it when asked to wait
        raise AgentError(f"no lease on request {request_id}")
    with lease:
        result = await_outcome(writer, request_id, seconds, lease)
        if result.status != "approved":
            return result
        auth, _ = writer.start_approved_attempt(
            request_id,
            _next_attempt(writer),
            idempotency_key=hook.tool_use_id or None,
            lease=lease,
        )
        return result if auth.ok else outcome(request_id, auth, waited=True)


def post_tool_use(hook: HookInput, session: Session) -> None:
    """Record the attempt's end and, for a call with effects, evidence of its output."""
    writer = _writer(hook, session)
    step, tool, key = session.step, hook.tool_name, hook.tool_use_id
    _session_step(writer, step)
    started = find_attempt(writer.root, writer.mission, key) if key else None
    failed = hook.hook_event_name == "PostToolUseFailure"
    output = canonical_json(hook.error if failed else hook.tool_response)
    digest = f"sha256:{hashlib.sha256(output).hexdigest()}"
    effect = tool_risk(tool) != "read_only"
    writer.attempt(
        step,
        started.attempt if started is not None else _next_attempt(writer),
        "finished",
        tool,
        idempotency_key=key,
        effect_possible=effect,
        outcome="error" if failed else "ok",
        output_ref=digest,
    )
    if effect:
        writer.evidence(
            step,
            f"{tool} {'failed' if failed else 'returned'}: {len(output):,} bytes, {digest}",
            f"Claude Code {hook.hook_event_name} hook",
            f"the outcome of tool call {key or '(no id)'}",
            "fail" if failed else "pass",
        )


def _writer(hook: HookInput, session: Session) -> AgentWriter:
    actor = f"claude-code/{hook.session_id}" if hook.session_id else "claude-code"
    return open_mission(session.root, session.mission, actor)


def _session_step(writer: AgentWriter, step: str) -> int:
    """The latest plan version, which must hold `step`; first, when the mission has no plan,
    plan v1 of that one step (and the step running)."""
    if not writer.plan_versions():
        with contextlib.suppress(PlanError):  # another call of the session wrote it first
            writer.write_plan(
                [
                    {
                        "id": step,
                        "title": "Claude Code session",
                        "risk": "external_write",
                        "effect": "the session's tool calls: files, shell commands, MCP tools",
                        "verification": "each call's outcome is recorded (attempts, evidence)",
                        "needs_approval": True,
                    }
                ],
                version=1,
            )
            writer.step(step, "running", 1, "Claude Code session started")
    version, _ = plan_step(writer, step)
    return version


def _next_attempt(writer: AgentWriter) -> int:
    return writer.tail(Kind.EVENTS).seq + 1


def _request_id(hook: HookInput) -> str:
    return hook.tool_use_id if safe_request_id(hook.tool_use_id) else f"cc-{secrets.token_hex(8)}"


def _logged(tool_input: dict[str, Any]) -> dict[str, Any]:
    data = compact_json(tool_input)
    if len(data) <= MAX_LOGGED_ARGS:
        return tool_input
    return {"omitted_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _summary(hook: HookInput) -> str:
    """One line for the approver: the call's description, command, path, URL or query."""
    for key in ("description", "command", "file_path", "notebook_path", "url", "query"):
        value = hook.tool_input.get(key)
        if isinstance(value, str) and value.strip():
            line = value.strip().splitlines()[0]
            return f"Claude Code {hook.tool_name}: {line[:200]}"
    return f"Claude Code {hook.tool_name}"
