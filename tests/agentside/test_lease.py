"""A request knows whether anyone waits for it (`store.derivation.lease`): a waiter that leaves
withdraws its request, a waiter that dies leaves "nobody waiting"; neither can be
approved in the HUD, and a late approval never authorizes the call."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from cli.main import main as hud_main
from store.derivation.lease import Lease, waiting
from store.format.layout import lease_path
from store.index.approval_checks import approval_queue, refusal, review
from store.index.workspace import Workspace
from store.writers.agent import AgentWriter, authorize, waiter_states
from tests.agentside.conftest import MISSION, Ran, human

REPO = Path(__file__).resolve().parents[2]
HOOK_INPUT = {
    "session_id": "s1",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git push", "description": "Push"},
    "tool_use_id": "toolu_lease",
}


def _spawn(root: Path, *args: str, stdin: bytes = b"") -> subprocess.Popen[bytes]:
    """`hud agent ARGS` in a process of its own, `stdin` (under a pipe's size) already
    written and closed."""
    read_end, write_end = os.pipe()
    os.write(write_end, stdin)
    os.close(write_end)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "cli.main", "agent", *args],
            stdin=read_end,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
        )
    finally:
        os.close(read_end)


def _until_waiting(root: Path, request_id: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    request = root / "missions" / MISSION / "approvals" / f"{request_id}.json"
    while not (request.exists() and waiting(root, MISSION, request_id)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the waiter never filed its request"
        time.sleep(0.05)


def _scan(root: Path) -> Workspace:
    workspace = Workspace(root)
    workspace.scan()
    return workspace


def _approve_anyway(root: Path, request_id: str) -> None:
    """A decision written past the HUD's checks (an approver racing the waiter's death)."""
    writer = human(root)
    raw = json.loads((root / "missions" / MISSION / "approvals" / f"{request_id}.json").read_text())
    writer.decide(MISSION, request_id, raw, "approve", "", writer.clock() + timedelta(hours=1))


def test_a_hook_killed_with_sigterm_withdraws_its_request_and_still_answers(root: Path) -> None:
    process = _spawn(
        root,
        "claude-hook", "--state", str(root), "--mission", MISSION, "--wait", "30",
        stdin=json.dumps(HOOK_INPUT).encode(),
    )  # fmt: skip
    try:
        _until_waiting(root, "toolu_lease", process)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "withdrawn" in answer["permissionDecisionReason"]
    assert "SIGTERM" in answer["permissionDecisionReason"]
    assert waiter_states(root, MISSION, "toolu_lease") == {"withdrawn"}

    checked = review(_scan(root).missions[MISSION], "toolu_lease", human(root).clock())
    assert not checked.can_approve and checked.can_reject
    assert any("withdrew" in blocker for blocker in checked.blockers), checked.blockers
    assert refusal(checked, "approve", "") is not None
    assert refusal(checked, "reject", "too late") is None
    _approve_anyway(root, "toolu_lease")
    assert authorize(root, MISSION, "toolu_lease").reason.startswith("withdrawn:")


def test_a_sigkilled_waiter_leaves_nobody_waiting(
    root: Path, agent: Callable[..., Ran], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [{"id": "deploy", "title": "Deploy"}]}))
    assert agent("plan", root, "--mission", MISSION, plan).code == 0
    process = _spawn(
        root,
        "request", str(root), "--mission", MISSION, "--step", "deploy", "--tool", "deploy",
        "--id", "r1", "--wait", "60",
    )  # fmt: skip
    try:
        _until_waiting(root, "r1", process)
        workspace = _scan(root)
        assert workspace.missions[MISSION].leases == {"r1": True}
        now = human(root).clock()
        assert review(workspace.missions[MISSION], "r1", now).can_approve
        assert authorize(root, MISSION, "r1").reason == "not decided"
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=20)
    finally:
        process.kill()

    assert waiting(root, MISSION, "r1") is False
    workspace.apply([lease_path(MISSION, "r1")])  # the HUD's tick tests held leases again
    mission = workspace.missions[MISSION]
    assert mission.leases == {"r1": False}
    checked = review(mission, "r1", now)
    assert not checked.can_approve and checked.can_reject
    assert any(b.startswith("nobody waiting") for b in checked.blockers), checked.blockers
    (item,) = approval_queue(workspace, now)
    assert item.nobody_waiting is not None
    assert workspace.held_leases() == []

    listed = io.StringIO()
    with contextlib.redirect_stdout(listed):
        assert hud_main(["approvals", str(root)]) == 0
    assert "nobody waiting" in listed.getvalue()
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        assert hud_main(["decide", str(root), MISSION, "r1", "approve", "--yes"]) == 1
    assert "nobody waiting" in said.getvalue()

    _approve_anyway(root, "r1")
    refused = agent("authorize", root, "--mission", MISSION, "r1")
    assert refused.code == 1 and "nobody waiting" in refused.err + refused.out


def test_only_the_waiter_holding_the_lease_may_use_an_approval_it_did_not_hand_on(
    root: Path,
) -> None:
    writer = AgentWriter(root, MISSION, "agent")
    writer.write_plan([{"id": "deploy", "title": "Deploy", "risk": "external_write"}])
    with Lease.take(root, MISSION, "r1") as lease:
        writer.request_approval("r1", "deploy", 1, "deploy", {}, "external_write")
        _approve_anyway(root, "r1")
        other = authorize(root, MISSION, "r1")
        assert not other.ok and other.reason.startswith("nobody waiting")
        auth, started = writer.start_approved_attempt("r1", 1, lease=lease)
        assert auth.ok and started is not None
    with pytest.raises(Exception, match="exists already"):
        Lease.take(root, MISSION, "r1")


def test_request_wait_hands_an_approval_on_to_authorize(
    root: Path, agent: Callable[..., Ran], approved: Callable[..., Ran]
) -> None:
    approved("r1")
    assert waiter_states(root, MISSION, "r1") == {"received"}
    assert waiting(root, MISSION, "r1") is False  # it left, after it saw the approval
    assert agent("authorize", root, "--mission", MISSION, "r1").code == 0


def test_a_waiter_that_times_out_withdraws(root: Path, agent: Callable[..., Ran]) -> None:
    writer = AgentWriter(root, MISSION, "agent")
    writer.write_plan([{"id": "deploy", "title": "Deploy", "risk": "external_write"}])
    asked = agent(
        "request", root, "--mission", MISSION, "--step", "deploy", "--tool", "deploy",
        "--id", "r1", "--wait", "0.3",
    )  # fmt: skip
    assert asked.code == 3
    assert waiter_states(root, MISSION, "r1") == {"withdrawn"}
    workspace = _scan(root)
    assert "withdrew" in (approval_queue(workspace, human(root).clock())[0].nobody_waiting or "")


def test_a_lease_that_is_not_a_regular_file_is_nobody_waiting(root: Path) -> None:
    folder = root / "missions" / MISSION / "approvals"
    folder.mkdir()
    os.mkfifo(folder / "r1.wait")
    assert waiting(root, MISSION, "r1") is False  # never blocks on the FIFO
    (folder / "r2.wait").symlink_to("/dev/zero")
    assert waiting(root, MISSION, "r2") is False
    assert waiting(root, MISSION, "r3") is None
    problems = {p.path: p.code for p in _scan(root).missions[MISSION].problems()}
    assert problems[lease_path(MISSION, "r1")] == "not-a-file"
    assert problems[lease_path(MISSION, "r2")].startswith("symlink")


def test_the_execution_tab_says_what_a_waiter_did(root: Path) -> None:
    from widgets.tabs.execution import what_text

    writer = AgentWriter(root, MISSION, "agent")
    event = writer.waiter("r1", "withdrawn", "the waiter got SIGTERM and left\x1b[2J")
    said = what_text(event).plain
    assert said.startswith("⌛ request withdrawn r1 the waiter got SIGTERM and left")
    assert "\x1b" not in said


def test_the_hud_tests_a_lease_without_reading_it(root: Path) -> None:
    """The tick tests held leases every second: a huge lease file costs nothing."""
    writer = AgentWriter(root, MISSION, "agent")
    writer.write_plan([{"id": "deploy", "title": "Deploy", "risk": "external_write"}])
    with Lease.take(root, MISSION, "r1"):
        (root / lease_path(MISSION, "r1")).write_bytes(b"x" * (4 << 20))
        writer.request_approval("r1", "deploy", 1, "deploy", {}, "external_write")
        workspace = _scan(root)
        assert workspace.held_leases() == [lease_path(MISSION, "r1")]
        ahead = workspace.read_ahead(workspace.held_leases())
        assert lease_path(MISSION, "r1") not in ahead.files
        workspace.apply_read(ahead)
        assert workspace.missions[MISSION].leases == {"r1": True}
