"""`hud agent mcp`: the server's tools, through the MCP SDK's own client, in process."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from agentside.mcp_server import build_server
from agentside.mission import Unusable
from store.derivation.lease import waiting
from store.writers.agent import waiter_states
from tests.agentside.conftest import MISSION, Approver, Ran, set_constraints

REPO = Path(__file__).resolve().parents[2]
STEPS = [
    {"id": "build", "title": "Build", "risk": "read_only"},
    {"id": "deploy", "title": "Deploy", "risk": "external_write", "needs_approval": True},
]


async def call(client: Client, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, /, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def test_lists_its_tools(root: Path) -> None:
    async with Client(build_server(root, MISSION)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {
        "read_mission",
        "propose_plan",
        "record_step",
        "record_evidence",
        "request_approval",
        "wait_for_decision",
        "get_request",
        "authorize",
    }


async def test_read_mission_gives_the_bounds(root: Path) -> None:
    set_constraints(root, approval={"auto": ["read_only"]}, tools={"deny": ["rm"]})
    async with Client(build_server(root, MISSION)) as client:
        found = await call(client, "read_mission")
    assert found["intent"]["title"] == "Ship 1.2.3"
    assert found["constraints"]["tools"]["deny"] == ["rm"]
    assert found["constraints"]["approval"]["auto"] == ["read_only"]
    assert found["plan"] is None and "Read" in found["read_only_tools"]


async def test_plan_steps_evidence(root: Path, valid: None) -> None:
    async with Client(build_server(root, MISSION, "mcp-test")) as client:
        assert (await call(client, "propose_plan", steps=STEPS))["version"] == 1
        assert "need a reason" in await refused(client, "propose_plan", steps=STEPS)
        again = await call(client, "propose_plan", steps=STEPS, reason="same, again")
        assert again == {"version": 2, "steps": ["build", "deploy"]}
        assert (await call(client, "record_step", step="build", state="running"))["seq"] == 1
        assert "not in plan v2" in await refused(
            client, "record_step", step="lint", state="running"
        )
        found = await call(
            client,
            "record_evidence",
            step="build",
            observed="12 tests pass",
            method="pytest",
            proves="it builds",
            artifact_name="build.log",
            artifact_text="ok\n",
        )
        assert found["artifact"]["bytes"] == 3
        await call(client, "record_step", step="build", state="succeeded")
        plan = (await call(client, "read_mission"))["plan"]
    assert plan["version"] == 2 and plan["author"] == "mcp-test"


async def test_request_approval_returns_at_once_then_the_client_waits_and_authorizes_once(
    root: Path, approver: Callable[..., Approver], valid: None
) -> None:
    async with Client(build_server(root, MISSION)) as client:
        await call(client, "propose_plan", steps=STEPS)
        asked = await call(
            client,
            "request_approval",
            step="deploy",
            tool="deploy",
            args={"target": "prod"},
            summary="ship it",
        )
        assert asked["status"] == "pending"
        request_id = asked["request"]
        assert (await call(client, "get_request", request_id=request_id))["status"] == "pending"
        decided = approver(reason="go", request=request_id)
        answer = await call(client, "wait_for_decision", request_id=request_id, timeout=10)
        decided.join()
        assert answer["status"] == "approved" and answer["decided_by"] == "alice"
        assert decided.decided == [request_id] and answer["reason"] == "go"
        first = await call(client, "authorize", request_id=request_id)
        assert first["ok"] is True and first["attempt_seq"] is not None
        resumed = await call(client, "authorize", request_id=request_id)
        assert resumed["status"] == "already_authorized" and resumed["ok"] is False
        assert resumed["attempt_seq"] == first["attempt_seq"]
        assert "do not repeat the effect" in resumed["reason"]
        said = await refused(client, "authorize", request_id=request_id, key="another")
        assert "already used" in said


async def test_request_approval_rejected_or_expired(
    root: Path, approver: Callable[..., Approver]
) -> None:
    async with Client(build_server(root, MISSION, expires_in=0.3)) as client:
        await call(client, "propose_plan", steps=STEPS)
        asked = await call(client, "request_approval", step="deploy", tool="t", args={})
        expired = await call(client, "wait_for_decision", request_id=asked["request"], timeout=5)
        assert expired["status"] == "expired"
    async with Client(build_server(root, MISSION)) as client:
        approver(verdict="reject", reason="no")
        rejected = await call(
            client, "request_approval", step="deploy", tool="t", args={}, wait_seconds=5
        )
        assert rejected["status"] == "rejected" and rejected["reason"] == "no"


async def test_a_client_that_stops_asking_leaves_its_request_withdrawn(root: Path) -> None:
    async with Client(build_server(root, MISSION, patience=0.5)) as client:
        await call(client, "propose_plan", steps=STEPS)
        asked = await call(client, "request_approval", step="deploy", tool="t", args={})
        assert waiting(root, MISSION, asked["request"]) is True
        await anyio.sleep(1.5)
        gone = await call(client, "get_request", request_id=asked["request"])
        assert gone["status"] == "withdrawn"
        assert waiting(root, MISSION, asked["request"]) is False
        kept = await call(client, "request_approval", step="deploy", tool="t", args={})
    assert waiter_states(root, MISSION, kept["request"]) == {"withdrawn"}  # session ended


async def test_a_tool_the_constraints_deny_is_refused(root: Path) -> None:
    set_constraints(root, tools={"deny": ["rm"]})
    async with Client(build_server(root, MISSION)) as client:
        await call(client, "propose_plan", steps=STEPS)
        said = await refused(client, "request_approval", step="deploy", tool="rm", args={})
    assert "constraints [tools] deny 'rm'" in said


def test_a_missing_mission_is_unusable(root: Path, agent: Callable[..., Ran]) -> None:
    with pytest.raises(Unusable):
        build_server(root, "other")
    ran = agent("mcp", root, "--mission", "other")
    assert ran.code == 2 and "no mission 'other'" in ran.err


async def test_serves_over_stdio(root: Path) -> None:
    """`hud agent mcp` as a client starts it: a subprocess speaking MCP on stdin/stdout."""
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cli.main", "agent", "mcp", str(root), "--mission", MISSION],
        cwd=str(REPO),
    )
    async with Client(command) as client:
        assert (await call(client, "propose_plan", steps=STEPS))["version"] == 1
        found = await call(client, "read_mission")
    assert found["plan"]["author"] == "mcp-agent"


async def test_45_asks_with_2_s_client_timeouts_leave_the_server_answering(root: Path) -> None:
    """The issue's check, over stdio: 45 concurrent asks (each with a 2 s client timeout)
    all return their request id in time; 45 waits that outlast their client's timeout
    do not hold the server up: read_mission then answers within a second."""
    command = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cli.main", "agent", "mcp", str(root), "--mission", MISSION],
        cwd=str(REPO),
    )
    async with Client(command) as client:
        await call(client, "propose_plan", steps=STEPS)

        async def ask(n: int) -> dict[str, Any]:
            arguments = {"step": "deploy", "tool": "deploy", "args": {"n": n}}
            result = await client.call_tool("request_approval", arguments, read_timeout_seconds=2)
            assert result.structured_content is not None
            return result.structured_content

        started = time.monotonic()
        asked = await asyncio.gather(*(ask(n) for n in range(45)))
        asking = time.monotonic() - started
        assert [a["status"] for a in asked] == ["pending"] * 45
        assert asking < 2

        async def outwait(request_id: str) -> None:
            with contextlib.suppress(Exception):
                await client.call_tool(
                    "wait_for_decision",
                    {"request_id": request_id, "timeout": 30},
                    read_timeout_seconds=2,
                )

        await asyncio.gather(*(outwait(a["request"]) for a in asked))
        started = time.monotonic()
        await call(client, "read_mission")
        answered = time.monotonic() - started
    print(f"\n45 asks: {asking:.2f} s in all; read_mission after: {answered * 1000:.0f} ms")
    assert answered < 1
