"""A stdio MCP server for one mission, on the official `mcp` SDK (`MCPServer`).

Its tools write through the agents' writer only: `read_mission` (the intent and
constraints humans set: the agent's bounds, and the latest plan), `propose_plan`,
`record_step`, `record_evidence`, `request_approval` (files the request and returns at
once: the server waits in the background, `agentside.mcp_waits`), `wait_for_decision`
and `get_request` (where a request stands; they never use the approval) and `authorize`
(at commit time: uses the approval, once). Nothing blocks the server: it keeps answering
other calls while requests wait. What the writer refuses comes back as a tool error with its reason,
for the model to read.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agentside.approval import outcome
from agentside.mcp_waits import Waits
from agentside.mission import (
    Proposal,
    constraints,
    intent,
    latest_plan,
    open_mission,
    plan_step,
    propose,
)
from agentside.policy import FILE_EDIT_TOOLS, READ_ONLY_TOOLS
from store.format.records import PlanStep, Risk, StepState
from store.writers.agent import AgentError

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_PATIENCE = 30.0
"""Seconds without a call about a request after which its client counts as gone."""
MAX_FIRST_WAIT = 10.0
MAX_WAIT = 600.0

INSTRUCTIONS = """You work on mission {mission} of an Operator HUD state directory.
Call read_mission first: its intent and constraints are your bounds. Propose a plan
(propose_plan) before acting and record each step's state and evidence as you go.
Before any call with effects that the constraints do not let you make alone, call
request_approval, then wait_for_decision again and again until its status is not
"pending" (if you stop asking, the request is withdrawn); at commit time call authorize,
and run the call only if it says ok. Never write the state directory's .toml files."""


def _refusals(tool: F) -> F:
    """A refusal of the writer (or of the file system) as a ToolError the model reads."""
    if inspect.iscoroutinefunction(tool):

        @functools.wraps(tool)
        async def waiting(*args: Any, **kwargs: Any) -> Any:
            try:
                return await tool(*args, **kwargs)
            except (AgentError, OSError) as exc:
                raise ToolError(str(exc)) from exc

        return cast(F, waiting)

    @functools.wraps(tool)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except (AgentError, OSError) as exc:
            raise ToolError(str(exc)) from exc

    return cast(F, wrapper)


def build_server(
    root: Path,
    mission: str,
    actor: str = "mcp-agent",
    *,
    expires_in: float = 600.0,
    patience: float = DEFAULT_PATIENCE,
) -> MCPServer:
    """The server of mission `mission` of `root` (Unusable if it does not exist); approval
    requests expire after `expires_in` seconds and are withdrawn when the client has not
    asked about them for `patience` seconds (`agentside.mcp_waits`)."""
    writer = open_mission(root, mission, actor)
    waits = Waits(writer, expires_in, patience)

    @contextlib.asynccontextmanager
    async def session(_server: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(waits.close)

    server: MCPServer = MCPServer(
        "operator-hud",
        instructions=INSTRUCTIONS.format(mission=mission),
        log_level="WARNING",
        lifespan=session,
    )

    @server.tool()
    @_refusals
    def read_mission() -> dict[str, Any]:
        """The mission's intent and constraints (set by humans: your bounds), its latest
        plan, and which tools count as read-only or as file edits."""
        found, plan = intent(writer), latest_plan(writer)
        return {
            "mission": mission,
            "intent": found.model_dump(mode="json", by_alias=True) if found else None,
            "constraints": constraints(writer).model_dump(mode="json", by_alias=True),
            "plan": plan.model_dump(mode="json", by_alias=True) if plan else None,
            "read_only_tools": sorted(READ_ONLY_TOOLS),
            "file_edit_tools": sorted(FILE_EDIT_TOOLS),
        }

    @server.tool()
    @_refusals
    def propose_plan(
        steps: list[PlanStep],
        reason: str = "",
        assumptions: list[str] | None = None,
        expected_evidence: list[str] | None = None,
    ) -> dict[str, Any]:
        """Write the next plan version (immutable once written). Versions after 1 need a
        reason: why the plan changed. A plan never claims a step happened."""
        proposal = Proposal(
            steps=steps,
            reason=reason,
            assumptions=assumptions or [],
            expected_evidence=expected_evidence or [],
        )
        plan = propose(writer, proposal)
        return {"version": plan.version, "steps": [s.id for s in plan.steps]}

    @server.tool()
    @_refusals
    def record_step(step: str, state: StepState, reason: str = "") -> dict[str, Any]:
        """Record a step's state (in the latest plan version)."""
        version, _ = plan_step(writer, step)
        event = writer.step(step, state, version, reason)
        return {"seq": event.seq, "plan_version": version}

    @server.tool()
    @_refusals
    def record_evidence(
        step: str,
        observed: str,
        method: str,
        proves: str,
        verdict: Literal["pass", "fail"] = "pass",
        artifact_name: str | None = None,
        artifact_text: str | None = None,
    ) -> dict[str, Any]:
        """Record an observation: what was seen, how, and what it proves. With
        `artifact_text`, it is stored once as artifacts/<artifact_name> and cited by sha256."""
        plan_step(writer, step)
        item = writer.evidence(
            step,
            observed,
            method,
            proves,
            verdict,
            artifact=artifact_text,
            artifact_name=artifact_name,
        )
        ref = item.artifact
        return {"seq": item.seq, "id": item.id, "artifact": ref.model_dump() if ref else None}

    @server.tool()
    @_refusals
    async def request_approval(
        step: str,
        tool: str,
        args: dict[str, Any],
        summary: str = "",
        risk: Risk | None = None,
        wait_seconds: float = 0.0,
    ) -> dict[str, Any]:
        """Ask a human to approve one tool call (exact tool and args) for a plan step.
        Returns at once (or once decided, within `wait_seconds`, at most 10) with the
        request id and its status, usually "pending": then call wait_for_decision (or
        get_request) until it is decided. Only "approved" lets you call authorize at
        commit time; anything else means do not run it. Stop asking and the request is
        withdrawn."""
        request_id = await waits.file(step, tool, args, summary=summary, risk=risk)
        first = min(max(wait_seconds, 0.0), MAX_FIRST_WAIT)
        found = await waits.wait(request_id, first) if first else await waits.get(request_id)
        return found.as_json()

    @server.tool()
    @_refusals
    async def wait_for_decision(request_id: str, timeout: float = 20.0) -> dict[str, Any]:
        """Wait up to `timeout` seconds (keep it under your tool-call timeout; at most
        MAX_WAIT) for a human to decide request `request_id`; its status then: "pending"
        means not yet, ask again."""
        return (await waits.wait(request_id, min(max(timeout, 0.0), MAX_WAIT))).as_json()

    @server.tool()
    @_refusals
    async def get_request(request_id: str) -> dict[str, Any]:
        """Where request `request_id` stands now, without waiting."""
        return (await waits.get(request_id)).as_json()

    @server.tool()
    @_refusals
    def authorize(request_id: str, attempt: int = 1, key: str | None = None) -> dict[str, Any]:
        """At commit time, just before running an approved call: ok only if the approval
        still holds and was never used; then the attempt is recorded under idempotency
        `key` (default <mission>/<request>) and the approval is used. Refused: a tool
        error, do not run the call. Called again with the same key after a crash, status
        "already_authorized": the effect may have happened; do not repeat it, record its
        outcome."""
        auth, started = writer.start_approved_attempt(
            request_id, attempt, idempotency_key=key, lease=waits.lease(request_id)
        )
        result = outcome(request_id, auth, waited=False)
        if not auth.ok and not auth.resume:
            raise ToolError(f"not authorized {request_id} ({result.status}): {auth.reason}")
        used = auth.used if auth.resume else None
        seq = started.seq if started else used.seq if used else None
        return {**result.as_json(), "ok": auth.ok, "attempt_seq": seq}

    return server
