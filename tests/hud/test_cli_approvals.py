"""`hud approvals` and `hud decide`: the queue for scripts, and the same checks as the HUD."""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.main import main
from store.writers.agent import authorize
from store.writers.human import HumanWriter
from tests.factory import mission, stamp
from tests.store.test_plan_binding import CASES, Case, build

HOSTILE = {"cmd": "echo \u202e", "clip": "\x1b]52;c;SGVsbG8=\x07"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Requests of each kind, expiring in the real future (the CLI uses the real clock)."""
    path = tmp_path / "state"
    soon = stamp(datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=20))
    later = stamp(datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2))
    beta = mission(path, "beta", "Deploy the service")
    beta.request("ext", risk="external_write", expires_at=later)
    beta.request("ro", risk="read_only", tool="ls", args={"path": "/"}, expires_at=soon)
    beta.request("irr", risk="irreversible", tool="drop_table", args={"t": "users"})
    beta.request("bad", args=HOSTILE)
    beta.request("gone", expires_at=stamp(datetime(2020, 1, 1, tzinfo=UTC)))
    return path


def decision(root: Path, request_id: str) -> dict[str, object]:
    return tomllib.loads((root / f"missions/beta/approvals/{request_id}.toml").read_text())


def test_approvals_lists_pending_sorted(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approvals", str(root)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "beta/" in line]
    order = [next(t for t in line.split() if t.startswith("beta/")) for line in lines]
    assert order == ["beta/ro", "beta/ext", "beta/irr", "beta/bad"]
    assert "beta/gone" not in out
    assert "\x1b" not in out and "\u202e" not in out
    assert "cannot approve: tool or args contain control or invisible characters" in out
    assert "4 pending" in out


def test_approvals_json(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approvals", str(root), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.isascii()
    listed = json.loads(out)
    by_id = {item["id"]: item for item in listed}
    assert set(by_id) == {"ext", "ro", "irr", "bad"}
    assert by_id["bad"]["args"] == HOSTILE and not by_id["bad"]["can_approve"]
    assert by_id["ro"]["can_approve"] and by_id["ro"]["digest"].startswith("sha256:")
    assert by_id["irr"]["confirmation"] == "type_tool"
    assert main(["approvals", str(root), "--json", "--all"]) == 0
    assert "gone" in {item["id"] for item in json.loads(capsys.readouterr().out)}


def test_decide_approve_and_authorize(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root), "beta", "ro", "approve"]) == 0
    assert "approved beta/ro" in capsys.readouterr().out
    saved = decision(root, "ro")
    assert saved["decision"] == "approve" and saved["valid_until"]
    assert authorize(root, "beta", "ro").ok
    assert main(["decide", str(root), "beta", "ro", "reject", "--reason", "late"]) == 1
    assert "already approved by" in capsys.readouterr().err


def test_decide_reject_needs_reason(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root), "beta", "ext", "reject"]) == 1
    assert "a rejection needs a reason" in capsys.readouterr().err
    assert main(["decide", str(root), "beta", "ext", "reject", "--reason", "no"]) == 0
    assert decision(root, "ext")["reason"] == "no"


def test_decide_confirmations(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root), "beta", "ext", "approve"]) == 1
    assert "needs --yes" in capsys.readouterr().err
    assert main(["decide", str(root), "beta", "irr", "approve", "--yes"]) == 1
    assert "--confirm-tool 'drop_table'" in capsys.readouterr().err
    assert main(["decide", str(root), "beta", "irr", "approve", "--confirm-tool", "drop"]) == 1
    assert (
        main(["decide", str(root), "beta", "irr", "approve", "--confirm-tool", "drop_table"]) == 0
    )
    assert main(["decide", str(root), "beta", "ext", "approve", "--yes"]) == 0


def test_decide_fails_closed(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root), "beta", "bad", "approve", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "control or invisible characters" in err and "\u202e" not in err
    assert not (root / "missions/beta/approvals/bad.toml").exists()
    assert main(["decide", str(root), "beta", "bad", "reject", "--reason", "hostile"]) == 0


def test_decide_expired_and_stale(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root), "beta", "gone", "approve", "--yes"]) == 1
    assert "expired" in capsys.readouterr().err
    raw = json.loads((root / "missions/beta/approvals/ext.json").read_text())
    HumanWriter(root, "alice", "local").decide("beta", "ext", raw, "approve")
    raw["args"] = {"target": "elsewhere"}
    (root / "missions/beta/approvals/ext.json").write_text(json.dumps(raw))
    assert main(["decide", str(root), "beta", "ext", "approve", "--yes"]) == 1
    assert "stale" in capsys.readouterr().err


def test_decide_digest_binds_to_what_was_reviewed(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = "sha256:" + "0" * 64
    assert main(["decide", str(root), "beta", "ro", "approve", "--digest", wrong]) == 1
    assert "changed while you were looking" in capsys.readouterr().err
    main(["approvals", str(root), "--json"])
    digest = {i["id"]: i["digest"] for i in json.loads(capsys.readouterr().out)}["ro"]
    assert main(["decide", str(root), "beta", "ro", "approve", "--digest", digest]) == 0


def test_decide_read_only_refuses(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root), "beta", "ro", "approve", "--read-only"]) == 2
    assert "read-only" in capsys.readouterr().err
    assert not (root / "missions/beta/approvals/ro.toml").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anything")
def test_decide_refuses_an_unwritable_directory(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missions = root / "missions"
    os.chmod(missions, 0o555)
    os.chmod(root, 0o555)
    try:
        assert main(["decide", str(root), "beta", "ro", "approve"]) == 2
        assert "you cannot write" in capsys.readouterr().err
    finally:
        os.chmod(root, 0o755)
        os.chmod(missions, 0o755)


def test_decide_unknown_things(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(root / "nope"), "beta", "ro", "approve"]) == 2
    assert main(["decide", str(root), "nope", "ro", "approve"]) == 2
    assert main(["decide", str(root), "beta", "nope", "approve"]) == 2
    assert main(["approvals", str(root / "nope")]) == 2


# ---- approvals bind to the plan version (store.derivation.plan_binding) ------------------


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_approvals_json_names_the_plan_rule(
    tmp_path: Path, case: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path, case)
    assert main(["approvals", str(tmp_path), "--json", "--all"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    binding = item["plan_binding"]
    assert binding["rule"] == case.rule
    assert binding["stale"] is case.stale
    assert binding["plan_version"] == 1 and binding["latest_plan_version"] == 1 + len(case.later)
    assert item["status"] == ("stale" if case.stale else "pending")
    for words in case.says:
        assert words in binding["message"]
    if case.stale:
        assert not item["can_approve"]
        assert binding["message"].startswith(f"stale ({case.rule}): ")
        assert binding["message"] in item["blockers"]
    elif case.rule == "read-only-change":
        assert item["can_approve"] and binding["message"] in item["warnings"]
        assert {c["kind"] for c in binding["changes"]} <= {"added", "removed", "changed"}
    assert main(["approvals", str(tmp_path), "--json"]) == 0
    pending = json.loads(capsys.readouterr().out)
    assert [i["id"] for i in pending] == ([] if case.stale else ["r1"])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_decide_refuses_a_request_whose_plan_no_longer_holds(
    tmp_path: Path, case: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path, case)
    code = main(["decide", str(tmp_path), "m", "r1", "approve", "--reason", "looked"])
    err = capsys.readouterr().err
    decided = tmp_path / "missions/m/approvals/r1.toml"
    if case.stale:
        assert code == 1
        assert f"cannot approve: stale ({case.rule}): " in err
        for words in case.says:
            assert words in err
        assert not decided.exists()
    elif case.own_version == "ok":
        assert code == 0, err
        assert authorize(tmp_path, "m", "r1").ok
        if case.rule == "read-only-change":
            assert "warning: notice (read-only-change): " in err


def test_the_readme_decide_usage_works_verbatim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """README's synopsis names what approving needs, and its examples run as written."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    synopsis = next(line for line in readme.splitlines() if line.startswith("hud decide "))
    for flag in ("--reason", "--yes", "--confirm-tool"):
        assert flag in synopsis
    examples = re.findall(r"`(hud decide ./state [^`]+)`", readme)
    assert len(examples) == 2
    monkeypatch.chdir(tmp_path)
    for index, example in enumerate(examples):
        state = Path(f"run{index}/state")
        mission(tmp_path / state, "ship").plan().request("deploy-1", risk="external_write")
        monkeypatch.chdir(tmp_path / f"run{index}")
        assert main(shlex.split(example)[1:]) == 0, capsys.readouterr()
    assert "approve" in decision_at(tmp_path / "run0/state") and "reject" in decision_at(
        tmp_path / "run1/state"
    )


def decision_at(root: Path) -> str:
    return str(tomllib.loads((root / "missions/ship/approvals/deploy-1.toml").read_text()))
