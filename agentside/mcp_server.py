"""A stdio MCP server for one mission, on the official `mcp` SDK (`MCPServer`).

Its tools write through the agents' writer only: `read_mission` (the intent and
constraints humans set: the agent's bounds, and the latest plan), `propose_plan`,
`record_step`, `record_evidence`, `request_approval` (returns only once a human decided
or the request expired; it never uses the approval) and `authorize` (at commit time: uses
the approval, once). What the writer refuses comes back as a tool error with its reason,
for the model to read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agentside.approval import await_outcome, file_request, outcome
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
from store.agent import AgentError
from store.records import PlanStep, Risk, StepState

F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = """You work on mission {mission} of an Operator HUD state directory.
Call read_mission first: its intent and constraints are your bounds. Propose a plan
(propose_plan) before acting and record each step's state and evidence as you go.
Before any call with effects that the constraints do not let you make alone, call
request_approval and wait for its answer; at commit time call authorize, and run the
call only if it says ok. Never write the state directory's .toml files."""


def _refusals(tool: F) -> F:
    """A refusal of the writer (or of the file system) as a ToolError the model reads."""

    @functools.wraps(tool)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except (AgentError, OSError) as exc:
            raise ToolError(str(exc)) from exc

    return cast(F, wrapper)


def build_server(
    root: Path, mission: str, actor: str = "mcp-agent", *, expires_in: float = 600.0
) -> MCPServer:
    """The server of mission `mission` of `root` (Unusable if it does not exist); approval
    requests expire after `expires_in` seconds."""
    writer = open_mission(root, mission, actor)
    server: MCPServer = MCPServer(
        "operator-hud", instructions=INSTRUCTIONS.format(mission=mission), log_level="WARNING"
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
    def request_approval(
        step: str,
        tool: str,
        args: dict[str, Any],
        summary: str = "",
        risk: Risk | None = None,
    ) -> dict[str, Any]:
        """Ask a human to approve one tool call (exact tool and args) for a plan step, and
        wait: returns only once they decided or the request expired. status "approved"
        means you may call authorize at commit time; anything else means do not run it."""
        request, _ = file_request(
            writer, step, tool, args, summary=summary, risk=risk, expires_in=expires_in
        )
        return await_outcome(writer, request.id, math.inf).as_json()

    @server.tool()
    @_refusals
    def authorize(request_id: str, attempt: int = 1) -> dict[str, Any]:
        """At commit time, just before running an approved call: ok only if the approval
        still holds and was never used; then the attempt is recorded and it is used."""
        auth, started = writer.start_approved_attempt(request_id, attempt)
        result = outcome(request_id, auth, waited=False).as_json()
        return {**result, "ok": auth.ok, "attempt_seq": started.seq if started else None}

    return server
