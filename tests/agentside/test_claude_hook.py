"""`hud agent claude-hook`: recorded Claude Code hook inputs of each tool's shape, the
answers on stdout, and what lands in the state directory. No Claude Code needed: the
approver is a thread deciding with `store.writers.human`, as a human in the HUD would."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentside.claude_hook import MAX_LOGGED_ARGS
from agentside.commands.claude_hook import build, hook_wait
from tests.agentside.conftest import MISSION, Approver, Ran, set_constraints

SESSION = "5d4c7a1e-0b7f-4c52-9d0e-2f1a3b4c5d6e"
TOOL_INPUTS: dict[str, dict[str, Any]] = {
    "Bash": {"command": "git push origin main", "description": "Push to main", "timeout": 120000},
    "Edit": {
        "file_path": "/work/app/src/main.py",
        "old_string": "DEBUG = True",
        "new_string": "DEBUG = False",
        "replace_all": False,
    },
    "Write": {"file_path": "/work/app/NOTES.md", "content": "# Notes"},
    "Read": {"file_path": "/work/app/src/main.py", "offset": 1, "limit": 200},
    "WebFetch": {"url": "https://example.com/api", "prompt": "What does the API return?"},
    "mcp__github__create_issue": {"owner": "acme", "repo": "app", "title": "Flaky test"},
}
RESPONSES: dict[str, Any] = {
    "Bash": {"stdout": "To github.com:acme/app.git\n", "stderr": "", "interrupted": False},
    "Edit": {"filePath": "/work/app/src/main.py", "oldString": "DEBUG = True"},
    "Write": {"type": "create", "filePath": "/work/app/NOTES.md", "content": "# Notes"},
    "Read": {"type": "text", "file": {"filePath": "/work/app/src/main.py", "numLines": 3}},
    "WebFetch": {"code": 200, "result": "It returns JSON.", "url": "https://example.com/api"},
    "mcp__github__create_issue": [{"type": "text", "text": "created issue #7"}],
}
Agent = Callable[..., Ran]


def hook_input(tool: str, event: str = "PreToolUse", use: str = "toolu_01") -> dict[str, Any]:
    recorded: dict[str, Any] = {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.claude/projects/app/{SESSION}.jsonl",
        "cwd": "/work/app",
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": TOOL_INPUTS.get(tool, {}),
        "tool_use_id": use,
    }
    if event == "PostToolUse":
        recorded["tool_response"] = RESPONSES.get(tool)
    return recorded


@pytest.fixture
def hook(root: Path, agent: Agent) -> Callable[..., tuple[str, str, Ran]]:
    """Run the hook on a recorded input; (permissionDecision, reason, run) for PreToolUse."""

    def run(recorded: dict[str, Any], *options: str) -> tuple[str, str, Ran]:
        args = ("claude-hook", "--state", root, "--mission", MISSION, "--wait", "5", *options)
        ran = agent(*args, stdin=json.dumps(recorded).encode())
        if recorded.get("hook_event_name") != "PreToolUse":
            return "", "", ran
        out = ran.json()["hookSpecificOutput"]
        assert out["hookEventName"] == "PreToolUse"
        return out["permissionDecision"], out["permissionDecisionReason"], ran

    return run


def events(root: Path) -> list[dict[str, Any]]:
    path = root / "missions" / MISSION / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def evidence(root: Path) -> list[dict[str, Any]]:
    path = root / "missions" / MISSION / "evidence.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_read_only_tools_pass_without_a_request(hook: Callable[..., Any], root: Path) -> None:
    decision, reason, ran = hook(hook_input("Read"))
    assert ran.code == 0 and decision == "allow" and "read-only" in reason
    assert not (root / "missions" / MISSION / "approvals").exists()
    plan = json.loads((root / "missions" / MISSION / "plan" / "v1.json").read_text())
    assert [s["id"] for s in plan["steps"]] == ["session"]
    started = events(root)[-1]
    assert started["type"] == "attempt" and started["phase"] == "started"
    assert started["tool"] == "Read" and started["idempotency_key"] == "toolu_01"
    assert started["actor"] == f"claude-code/{SESSION}"


@pytest.mark.parametrize("tool", ["Bash", "Edit", "Write", "WebFetch", "mcp__github__create_issue"])
def test_an_effectful_call_waits_for_a_human_and_runs_once_approved(
    tool: str,
    hook: Callable[..., Any],
    root: Path,
    approver: Callable[..., Approver],
    valid: None,
) -> None:
    decided = approver(reason="looks right")
    decision, reason, _ = hook(hook_input(tool))
    decided.join()
    assert decided.decided == ["toolu_01"]
    assert decision == "allow" and "approved by alice" in reason and "looks right" in reason
    request = json.loads((root / "missions" / MISSION / "approvals" / "toolu_01.json").read_text())
    assert request["tool"] == tool and request["args"] == TOOL_INPUTS[tool]
    assert request["risk"] == (
        "reversible_write" if tool in ("Edit", "Write") else "external_write"
    )
    started = [e for e in events(root) if e["type"] == "attempt"]
    assert [(e["phase"], e["approval"]) for e in started] == [("started", "toolu_01")]
    hook(hook_input(tool, "PostToolUse"))
    finished = events(root)[-1]
    assert finished["phase"] == "finished" and finished["outcome"] == "ok"
    assert finished["attempt"] == started[0]["attempt"]
    assert finished["output_ref"].startswith("sha256:")
    (observed,) = evidence(root)
    assert observed["verdict"] == "pass" and finished["output_ref"] in observed["observed"]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Edit", {"file_path": "/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}),
        ("Bash", {"command": "cat <<EOF > a.txt\nhi\nEOF", "description": "Write a.txt"}),
    ],
)
def test_a_multiline_argument_is_filed_and_approvable(
    tool: str,
    tool_input: dict[str, Any],
    hook: Callable[..., Any],
    root: Path,
    approver: Callable[..., Approver],
) -> None:
    """A line break in an argument is shown (`\\n` in the args, a line in the preview):
    an edit or a script of several lines is filed and can be approved."""
    decided = approver(reason="read it")
    decision, reason, _ = hook({**hook_input(tool), "tool_input": tool_input})
    decided.join()
    assert decided.decided == ["toolu_01"]
    assert decision == "allow" and "approved by alice" in reason


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Bash", {"command": "echo \u202eevil", "description": "bidi"}),
        ("Bash", {"command": "echo ok\r\x1b[2Kevil", "description": "a carriage return"}),
        ("Edit", {"file_path": "/a.py\x07", "old_string": "x", "new_string": "y"}),
        ("Edit", {"file\npath": "/a.py", "old_string": "x", "new_string": "y"}),
    ],
)
def test_what_the_hud_could_not_approve_is_denied_at_once(
    tool: str, tool_input: dict[str, Any], hook: Callable[..., Any], root: Path
) -> None:
    started = time.monotonic()
    decision, reason, _ = hook({**hook_input(tool), "tool_input": tool_input})
    assert time.monotonic() - started < 3
    assert decision == "deny" and "cannot be approved in the HUD" in reason
    assert "control or invisible character" in reason
    assert not (root / "missions" / MISSION / "approvals").exists()


def test_a_rejection_denies_with_the_reason(
    hook: Callable[..., Any], root: Path, approver: Callable[..., Approver], valid: None
) -> None:
    approver(verdict="reject", reason="never push to main")
    decision, reason, _ = hook(hook_input("Bash"))
    assert decision == "deny" and "rejected by alice" in reason and "never push to main" in reason
    assert not [e for e in events(root) if e["type"] == "attempt"]
    assert events(root)[-1]["state"] == "running"


def test_no_decision_in_time_denies_or_asks(hook: Callable[..., Any], root: Path) -> None:
    started = time.monotonic()
    decision, reason, _ = hook(hook_input("Bash", use="toolu_a"), "--wait", "0.4")
    assert time.monotonic() - started < 3
    assert decision == "deny" and "expired" in reason
    decision, reason, _ = hook(
        hook_input("Bash", use="toolu_b"), "--wait", "0.4", "--on-timeout", "ask"
    )
    assert decision == "ask" and "no decision on request toolu_b within 0.4 s" in reason
    # the request expired with the wait: a late approval cannot make it run
    request = json.loads((root / "missions" / MISSION / "approvals" / "toolu_b.json").read_text())
    assert request["expires_at"] is not None


def test_the_wait_ends_15_s_before_the_hook_timeout(hook: Callable[..., Any], agent: Agent) -> None:
    parser = argparse.ArgumentParser()
    build(parser)
    given = ["--state", "s", "--mission", "m"]
    assert hook_wait(parser.parse_args(given)) == 45  # Claude Code's default 60 s timeout
    assert hook_wait(parser.parse_args([*given, "--timeout", "600", "--wait", "570"])) == 570
    assert hook_wait(parser.parse_args([*given, "--timeout", "600", "--wait", "599"])) == 585
    started = time.monotonic()
    decision, reason, _ = hook(
        hook_input("Bash", use="toolu_t"), "--timeout", "16", "--wait", "50", "--on-timeout", "ask"
    )
    assert time.monotonic() - started < 3
    assert decision == "ask" and "within 1 s" in reason
    too_short = agent("claude-hook", "--state", "s", "--mission", "m", "--timeout", "15")
    assert too_short.code == 2 and "--timeout must be over 15 s" in too_short.err


def test_constraints_decide_what_needs_a_human(hook: Callable[..., Any], root: Path) -> None:
    set_constraints(
        root,
        approval={"auto": ["reversible_write"]},
        tools={"deny": ["Read", "WebFetch"], "allow": ["Bash"]},
    )
    assert hook(hook_input("Edit"))[0] == "allow"  # auto
    assert hook(hook_input("Write", use="toolu_02"))[0] == "allow"
    decision, reason, _ = hook(hook_input("Read", use="toolu_03"))
    assert decision == "deny" and "deny 'Read'" in reason  # deny wins, read-only or not
    assert hook(hook_input("WebFetch", use="toolu_04"))[0] == "deny"
    decision, reason, _ = hook(hook_input("mcp__github__create_issue", use="toolu_05"))
    assert decision == "deny" and "allow does not list" in reason
    assert not (root / "missions" / MISSION / "approvals").exists()


def test_constraints_that_do_not_load_deny(hook: Callable[..., Any], root: Path) -> None:
    (root / "missions" / MISSION / "constraints.toml").write_text("schema = [\n")
    decision, reason, _ = hook(hook_input("Read"))
    assert decision == "deny" and "constraints.toml does not load" in reason


def test_a_plan_without_the_session_step_denies(
    hook: Callable[..., Any], root: Path, agent: Agent
) -> None:
    plan = {"steps": [{"id": "build", "title": "Build"}]}
    agent("plan", root, "--mission", MISSION, "-", stdin=json.dumps(plan).encode())
    decision, reason, _ = hook(hook_input("Read"))
    assert decision == "deny" and "step 'session' is not in plan v1" in reason
    assert hook(hook_input("Read"), "--step", "build")[0] == "allow"


def test_bad_input_denies(hook: Callable[..., Any], agent: Agent, root: Path) -> None:
    for stdin in (b"not json", b'{"hook_event_name": "PreToolUse"}'):
        ran = agent("claude-hook", "--state", root, "--mission", MISSION, stdin=stdin)
        out = ran.json()["hookSpecificOutput"]
        assert ran.code == 0 and out["permissionDecision"] == "deny"
    ran = agent(
        "claude-hook",
        "--state",
        root,
        "--mission",
        "missing",
        stdin=json.dumps(hook_input("Read")).encode(),
    )
    assert ran.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    _, _, ran = hook({**hook_input("Read"), "hook_event_name": "Stop"})
    assert ran.code == 1 and "not a tool hook event" in ran.err


def test_post_tool_use_records_read_only_calls_without_evidence(
    hook: Callable[..., Any], root: Path, valid: None
) -> None:
    hook(hook_input("Read"))
    _, _, ran = hook(hook_input("Read", "PostToolUse"))
    assert ran.code == 0 and ran.out == ""
    finished = events(root)[-1]
    assert finished["phase"] == "finished" and finished["effect_possible"] is False
    assert evidence(root) == []


def test_post_tool_use_failure_is_an_error_with_failing_evidence(
    hook: Callable[..., Any], root: Path, valid: None
) -> None:
    set_constraints(root, approval={"auto": ["external_write"]})
    hook(hook_input("Bash"))
    failure = {**hook_input("Bash", "PostToolUseFailure"), "error": "exit status 1"}
    hook(failure)
    assert events(root)[-1]["outcome"] == "error"
    assert evidence(root)[-1]["verdict"] == "fail"


def test_a_huge_input_is_logged_as_its_hash(
    hook: Callable[..., Any], root: Path, valid: None
) -> None:
    set_constraints(root, approval={"auto": ["reversible_write"]})
    big = {"file_path": "/work/app/big.txt", "content": "x" * (MAX_LOGGED_ARGS + 1)}
    assert hook({**hook_input("Write"), "tool_input": big})[0] == "allow"
    args = events(root)[-1]["args"]
    assert set(args) == {"omitted_bytes", "sha256"}


def test_runs_as_claude_code_runs_it(root: Path) -> None:
    """A real process through the router: JSON on stdin, the answer on stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "agent", "claude-hook", "--state", str(root),
         "--mission", MISSION],
        input=json.dumps(hook_input("Read")).encode(),
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow"
