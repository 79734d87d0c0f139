"""Which tool calls need a human: the tool classes, and the mission's rules applied to them.

A tool's risk class, by name (Claude Code's built-in tools; every other tool, an MCP tool
`mcp__<server>__<tool>` included, counts as an external_write):

* read_only: READ_ONLY_TOOLS, which change nothing outside the agent's own session;
* reversible_write: FILE_EDIT_TOOLS, which edit files in the working tree;
* external_write: everything else (Bash, WebFetch, which sends a request the model
  wrote to any address, MCP tools, tools this table does not know).

The gate, in this order (the first rule that holds decides):

1. constraints.toml `[tools] deny` names the tool: **deny**;
2. the tool is read_only, or its class is in `[approval] auto`: **pass** (no human);
3. `[tools] allow` is not empty and does not name it: **deny** (it could never be
   approved);
4. otherwise: **ask** a human (an approval request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from store.format.records import Constraints, Risk

READ_ONLY_TOOLS = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "NotebookRead",
        "WebSearch",
        "TodoWrite",
        "BashOutput",
        "Task",  # a subagent: each of its own tool calls passes the hook
        "ExitPlanMode",
    }
)
FILE_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})

Verdict = Literal["pass", "ask", "deny"]


@dataclass(frozen=True, slots=True)
class Gate:
    """What to do with one tool call, and why."""

    verdict: Verdict
    risk: Risk
    reason: str


def tool_risk(tool: str) -> Risk:
    if tool in READ_ONLY_TOOLS:
        return "read_only"
    return "reversible_write" if tool in FILE_EDIT_TOOLS else "external_write"


def tool_refusal(tool: str, constraints: Constraints) -> str | None:
    """Why no request for `tool` could be approved (the HUD's own tool rules), or None."""
    rules = constraints.tools
    if tool in rules.deny:
        return f"constraints [tools] deny {tool!r}"
    if rules.allow and tool not in rules.allow:
        return f"constraints [tools] allow does not list {tool!r}"
    return None


def gate(tool: str, constraints: Constraints) -> Gate:
    """Rules 1-4 of the module's docstring."""
    risk = tool_risk(tool)
    refused = tool_refusal(tool, constraints)
    if refused is not None and tool in constraints.tools.deny:
        return Gate("deny", risk, refused)
    if risk == "read_only":
        return Gate("pass", risk, f"{tool} is read-only")
    if risk in constraints.approval.auto:
        return Gate("pass", risk, f"constraints [approval] auto includes {risk}")
    if refused is not None:
        return Gate("deny", risk, refused)
    return Gate("ask", risk, f"{tool} is a {risk}: a human decides")
