"""One id format: every id a CLI command prints is accepted back by the commands that
take one (`hud approvals` prints MISSION/REQUEST, which `hud decide` takes as it is)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.main import main
from tests.factory import mission, stamp

Capture = pytest.CaptureFixture[str]
MISSION_COMMANDS = ("review", "replay", "handoff")
"""The commands that take a MISSION after DIR."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    later = stamp(datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2))
    alpha = mission(path, "alpha.one", "Migrate the database")
    alpha.step("s1", "running")
    alpha.usage(1.0, 1000, 1)
    alpha.succeed("s1")
    beta = mission(path, "beta_2", "Deploy the service")
    beta.step("s1", "waiting_for_approval")
    beta.request("drop-old.rows_1", risk="read_only", tool="ls", expires_at=later)
    return path


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def accepted(capsys: Capture, root: Path, mission_id: str) -> None:
    """Each mission command takes `mission_id` as printed (exit 0 or 1, never 2)."""
    for command in MISSION_COMMANDS:
        code, _, err = run(capsys, command, str(root), mission_id)
        assert code in (0, 1), (command, mission_id, err)


def test_approvals_ids_are_what_decide_takes(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "approvals", str(root))
    assert code == 0
    printed = re.findall(r"\b[\w.-]+/[\w.-]+\b", out)
    assert printed == ["beta_2/drop-old.rows_1"]
    code, out, err = run(capsys, "decide", str(root), printed[0], "reject", "--reason", "no")
    assert code == 0, err
    assert "rejected beta_2/drop-old.rows_1" in out
    decided = re.findall(r"\b[\w.-]+/[\w.-]+\b", out)[0]
    code, _, err = run(capsys, "decide", str(root), decided, "--print-payload")
    assert "no decision" not in err  # the printed id finds the decision (bytes need a pipe)


def test_decide_takes_mission_and_request_apart_too(root: Path, capsys: Capture) -> None:
    args = ("decide", str(root), "beta_2", "drop-old.rows_1", "reject", "--reason", "no")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "rejected beta_2/drop-old.rows_1" in out


def test_an_unsafe_id_is_about_what_was_typed(root: Path, capsys: Capture) -> None:
    code, _, err = run(capsys, "decide", str(root), "beta_2/a..b", "approve")
    assert code == 1
    assert "unsafe request id 'a..b'" in err and "check what you typed" in err
    assert "the agent" not in err
    code, _, err = run(capsys, "decide", str(root), "beta_2/r1", "approve", "extra")
    assert code == 2 and "unexpected 'extra'" in err
    code, _, err = run(capsys, "decide", str(root), "beta_2", "r1", "maybe")
    assert code == 2 and "approve or reject" in err


def test_check_and_metrics_mission_ids_are_accepted_back(root: Path, capsys: Capture) -> None:
    _, out, _ = run(capsys, "check", str(root))
    headers = [line.split()[0] for line in out.splitlines()[1:-1] if not line.startswith(" ")]
    assert headers == ["alpha.one", "beta_2"]
    _, out, _ = run(capsys, "metrics", str(root))
    listed = [line.strip() for line in out.splitlines()[1:] if not line.startswith(" ")]
    assert listed == ["alpha.one", "beta_2"]
    for mission_id in {*headers, *listed}:
        accepted(capsys, root, mission_id)


def test_review_replay_and_handoff_ids_are_accepted_back(root: Path, capsys: Capture) -> None:
    _, out, _ = run(capsys, "review", str(root), "alpha.one")
    found = re.match(r"review of ([^,]+),", out)
    assert found and found.group(1) == "alpha.one"
    accepted(capsys, root, found.group(1))
    _, out, _ = run(capsys, "replay", str(root), "beta_2")
    found = re.match(r"([^:]+): \d+ events", out)
    assert found and found.group(1) == "beta_2"
    accepted(capsys, root, found.group(1))
    _, out, _ = run(capsys, "handoff", str(root), "alpha.one")
    found = re.search(r"- Mission: `([^`]+)`", out)
    assert found and found.group(1) == "alpha.one"
    accepted(capsys, root, found.group(1))
