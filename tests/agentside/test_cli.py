"""`hud agent` from a shell: each subcommand writes through the agents' writer only, and
the exit codes say approved (0), refused or rejected (1), cannot run (2), expired or
timed out (3)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agentside.conftest import MISSION, Approver, Ran, set_constraints

PLAN = {
    "steps": [
        {"id": "build", "title": "Build", "risk": "read_only"},
        {"id": "deploy", "title": "Deploy", "risk": "external_write", "needs_approval": True},
    ],
    "assumptions": ["CI is green"],
}
Agent = Callable[..., Ran]


def mission_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def planned(root: Path, agent: Agent) -> Path:
    ran = agent("plan", root, "--mission", MISSION, "-", stdin=json.dumps(PLAN).encode())
    assert ran.code == 0, ran.err
    return root


def request(agent: Agent, root: Path, *extra: str) -> Ran:
    return agent(
        "request", root, "--mission", MISSION, "--step", "deploy", "--tool", "deploy",
        "--args", '{"target": "prod"}', "--id", "r1", *extra,
    )  # fmt: skip


def test_plan_versions_count_up_and_a_replan_needs_a_reason(
    planned: Path, agent: Agent, valid: None
) -> None:
    again = agent("plan", planned, "--mission", MISSION, "-", stdin=json.dumps(PLAN).encode())
    assert again.code == 1 and "need a reason" in again.err
    proposal = planned / "v2.json"
    proposal.write_text(json.dumps({**PLAN, "reason": "split the deploy"}))
    ran = agent("plan", planned, "--mission", MISSION, proposal, "--json")
    assert ran.code == 0 and ran.json() == {"mission": MISSION, "version": 2, "steps": 2}
    proposal.unlink()
    on_disk = json.loads((planned / "missions" / MISSION / "plan" / "v2.json").read_text())
    assert on_disk["author"] == "agent" and on_disk["reason"] == "split the deploy"


@pytest.mark.parametrize(
    ("stdin", "code", "said"),
    [
        (b"{not json", 2, "is not JSON"),
        (b'{"reason": "no steps"}', 1, "steps"),
        (b'{"steps": [{"id": "a", "title": "A", "risk": "huge"}]}', 1, "risk"),
        (b'{"steps": [{"id": "a", "title": "A"}], "extra": 1}', 1, "extra"),
    ],
)
def test_a_bad_proposal_writes_nothing(
    root: Path, agent: Agent, stdin: bytes, code: int, said: str
) -> None:
    before = mission_files(root)
    ran = agent("plan", root, "--mission", MISSION, "-", stdin=stdin)
    assert ran.code == code and said in ran.err
    assert mission_files(root) == before


def test_step_and_evidence_with_an_artifact(
    planned: Path, agent: Agent, tmp_path: Path, valid: None
) -> None:
    assert agent("step", planned, "--mission", MISSION, "build", "running").code == 0
    output = tmp_path / "build.log"
    output.write_bytes(b"ok: 12 tests\n")
    ran = agent(
        "evidence", planned, "--mission", MISSION, "build", "--observed", "12 tests pass",
        "--method", "pytest", "--proves", "it builds", "--artifact", output,
        "--artifact-name", "build/log.txt", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    digest = hashlib.sha256(b"ok: 12 tests\n").hexdigest()
    assert ran.json()["artifact"] == {"path": "build/log.txt", "sha256": digest, "bytes": 13}
    stored = planned / "missions" / MISSION / "artifacts" / "build" / "log.txt"
    assert stored.read_bytes() == b"ok: 12 tests\n"
    assert agent("step", planned, "--mission", MISSION, "build", "succeeded").code == 0


def test_a_step_must_be_in_the_plan(planned: Path, agent: Agent) -> None:
    ran = agent("step", planned, "--mission", MISSION, "lint", "running")
    assert ran.code == 1 and "'lint' is not in plan v1" in ran.err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["step", "{root}/nowhere", "--mission", MISSION, "build", "running"], "no such directory"),
        (["step", "{root}", "--mission", "other", "build", "running"], "no mission 'other'"),
        (["step", "{root}", "--mission", "a..b", "build", "running"], "unsafe mission id"),
        (["step", "{root}", "--mission", MISSION, "build", "dancing"], "invalid choice"),
        (["request", "{root}", "--mission", MISSION, "--step", "deploy"], "--tool"),
        (["nonsense"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(planned: Path, agent: Agent, args: list[str], said: str) -> None:
    ran = agent(*(a.format(root=planned) for a in args))
    assert ran.code == 2 and said in ran.err
    assert not (planned / "missions" / "other").exists()


def test_request_without_wait_is_pending(planned: Path, agent: Agent, valid: None) -> None:
    ran = request(agent, planned, "--summary", "ship it", "--json")
    assert ran.code == 0, ran.err
    assert ran.json()["status"] == "pending" and ran.json()["risk"] == "external_write"
    raw = json.loads((planned / "missions" / MISSION / "approvals" / "r1.json").read_text())
    assert raw["args"] == {"target": "prod"} and raw["summary"] == "ship it"
    events = (planned / "missions" / MISSION / "events.jsonl").read_text().splitlines()
    assert json.loads(events[-1])["state"] == "waiting_for_approval"
    assert request(agent, planned).code == 1  # write-once: the id is taken


def test_request_wait_approved_then_authorize_once(
    planned: Path, agent: Agent, approver: Callable[..., Approver], valid: None
) -> None:
    decided = approver(reason="checked the diff")
    ran = request(agent, planned, "--wait", "10")
    decided.join()
    assert ran.code == 0, ran.err
    assert ran.out.splitlines()[-1].startswith("approved by alice at ")
    assert ran.out.rstrip().endswith(": checked the diff")
    first = agent("authorize", planned, "--mission", MISSION, "r1", "--json")
    assert first.code == 0 and first.json()["ok"] is True
    again = agent("authorize", planned, "--mission", MISSION, "r1", "--key", "other")
    assert again.code == 1 and "already used by attempt 1 of step deploy" in again.out


def test_request_wait_rejected_exits_1(
    planned: Path, agent: Agent, approver: Callable[..., Approver]
) -> None:
    approver(verdict="reject", reason="not on a Friday")
    ran = request(agent, planned, "--wait", "10", "--json")
    assert ran.code == 1
    assert ran.json()["status"] == "rejected" and ran.json()["reason"] == "not on a Friday"
    assert ran.json()["decided_by"] == "alice"
    assert agent("authorize", planned, "--mission", MISSION, "r1").code == 1


def test_request_wait_times_out_with_exit_3_and_stops_at_the_deadline(
    planned: Path, agent: Agent
) -> None:
    started = time.monotonic()
    ran = request(agent, planned, "--wait", "0.5", "--json")
    assert 0.5 <= time.monotonic() - started < 2
    assert ran.code == 3 and ran.json()["status"] == "timed_out"


def test_an_expired_request_exits_3(planned: Path, agent: Agent) -> None:
    ran = request(agent, planned, "--expires-in", "0.3", "--wait", "10", "--json")
    assert ran.code == 3 and ran.json()["status"] == "expired"
    assert agent("authorize", planned, "--mission", MISSION, "r1").code == 3


def test_authorize_refuses_what_was_never_decided(planned: Path, agent: Agent) -> None:
    request(agent, planned)
    ran = agent("authorize", planned, "--mission", MISSION, "r1", "--json")
    assert ran.code == 1 and ran.json()["status"] == "pending"
    assert agent("authorize", planned, "--mission", MISSION, "nope").code == 1


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        ({"deny": ["deploy"]}, "constraints [tools] deny 'deploy'"),
        ({"allow": ["Bash"]}, "constraints [tools] allow does not list 'deploy'"),
    ],
)
def test_a_request_that_could_never_be_approved_is_not_written(
    planned: Path, agent: Agent, tools: dict[str, list[str]], said: str
) -> None:
    set_constraints(planned, tools=tools)
    ran = request(agent, planned)
    assert ran.code == 1 and said in ran.err
    assert not (planned / "missions" / MISSION / "approvals" / "r1.json").exists()


def test_risk_comes_from_the_plan_step_unless_given(planned: Path, agent: Agent) -> None:
    assert request(agent, planned, "--json").json()["risk"] == "external_write"
    ran = agent(
        "request", planned, "--mission", MISSION, "--step", "deploy", "--tool", "drop",
        "--risk", "irreversible", "--json",
    )  # fmt: skip
    assert ran.json()["risk"] == "irreversible" and ran.json()["request"].startswith("req-")


def test_bad_args_are_a_usage_error(planned: Path, agent: Agent) -> None:
    for given in ('["a list"]', "{broken"):
        ran = agent(
            "request", planned, "--mission", MISSION, "--step", "deploy", "--tool", "t",
            "--args", given,
        )  # fmt: skip
        assert ran.code == 2 and "not a JSON object" in ran.err


def test_the_agent_never_writes_a_toml(
    planned: Path, agent: Agent, approver: Callable[..., Approver]
) -> None:
    before = {f for f in mission_files(planned) if f.endswith(".toml")}
    approver()
    request(agent, planned, "--wait", "10")
    agent("authorize", planned, "--mission", MISSION, "r1")
    after = {f for f in mission_files(planned) if f.endswith(".toml")}
    assert after - before == {f"missions/{MISSION}/approvals/r1.toml"}  # the human's decision


def test_text_output_shows_hostile_characters_as_escapes(planned: Path, agent: Agent) -> None:
    ran = agent(
        "evidence", planned, "--mission", MISSION, "build", "--id", "e\x1b[2J\u202e",
        "--observed", "x", "--method", "m", "--proves", "p",
    )  # fmt: skip
    assert ran.code == 0
    assert "\x1b" not in ran.out and "e\\u001b[2J\\u202e" in ran.out


def test_args_the_hud_could_not_show_are_refused_before_writing(
    planned: Path, agent: Agent
) -> None:
    ran = agent(
        "request", planned, "--mission", MISSION, "--step", "deploy", "--tool", "sh",
        "--args", '{"script": "make\\u202emake install"}',
    )  # fmt: skip
    assert ran.code == 1 and "control or invisible character" in ran.err
    assert not (planned / "missions" / MISSION / "approvals").exists()
