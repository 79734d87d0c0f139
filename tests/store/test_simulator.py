"""The simulator (`python -m simulator`): a clean stop, a valid workspace, every status,
determinism, and approvals honoured through `store.writers.agent.authorize()` (checked in files)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tomli_w

import simulator.mission as sim_mission
from simulator.__main__ import main
from simulator.runner import Runner
from store.analysis.metrics import Ratio, directory_metrics
from store.analysis.replay import Replay
from store.analysis.review import review
from store.derivation.invariants import RUN_CODES
from store.format.layout import Kind, is_transient, log_path
from store.format.load import LogReader
from store.format.records import request_digest
from store.index.check import check
from store.index.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
ALL_STATUSES = {"needs_you", "failed", "blocked", "stale", "running", "idle", "done"}


def start(root: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "simulator", str(root), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def stop(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    _, err = proc.communicate(timeout=5)
    assert time.monotonic() - started < 2, "simulator did not stop promptly on SIGTERM"
    return proc.returncode, err.decode()


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the simulator"
        time.sleep(0.05)


def missions(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "missions").iterdir())


def read_log(root: Path, mission: str, kind: Kind) -> list[Any]:
    """Every record of a log, asserting no problem at all (no torn or unterminated line)."""
    rel = log_path(mission, kind)
    if not (root / rel).exists():
        return []
    reader = LogReader(root, rel, kind)
    batch = reader.poll()
    assert batch.problems == [], [str(p) for p in batch.problems]
    assert reader.pending_problem is None, f"{rel}: unterminated last line"
    return batch.records


def assert_valid(root: Path, allowed_codes: frozenset[str] = frozenset()) -> None:
    for mission in missions(root):
        for kind in (Kind.EVENTS, Kind.EVIDENCE):
            records = read_log(root, mission, kind)
            assert [r.seq for r in records] == list(range(1, len(records) + 1))
    report = check(root)
    errors = [p for p in report.all_problems() if p.severity == "error"]
    assert [str(p) for p in errors if p.code not in allowed_codes] == []
    warnings = [p for p in report.all_problems() if p.severity == "warn"]
    assert [str(p) for p in warnings if p.code not in RUN_CODES] == []  # the demo stages those
    leftovers = [
        str(path) for path in root.rglob("*") if is_transient(path.relative_to(root).as_posix())
    ]
    assert leftovers == []


def events(root: Path, mission: str) -> list[Any]:
    return read_log(root, mission, Kind.EVENTS)


def decide(
    root: Path,
    mission: str,
    request_id: str,
    decision: str = "approve",
    *,
    reason: str = "",
    digest: str | None = None,
    valid_until: datetime | None = None,
) -> None:
    """A human decision as store.writers.human writes it (here directly, with tomli_w)."""
    folder = root / "missions" / mission / "approvals"
    raw = json.loads((folder / f"{request_id}.json").read_bytes())
    now = datetime.now(UTC)
    doc = {
        "schema": 1,
        "request": request_id,
        "digest": digest or request_digest(raw),
        "decision": decision,
        "reason": reason,
        "decided_by": "tester",
        "decided_at": now,
        "valid_until": valid_until or now + timedelta(minutes=30),  # within valid_for_seconds
        "origin": "local tty",
    }
    temp = folder / f".{request_id}.toml.tmp"
    temp.write_text(tomli_w.dumps(doc), encoding="utf-8")
    os.link(temp, folder / f"{request_id}.toml")
    temp.unlink()


# ---- a demo run ------------------------------------------------------------------------------


def shows_everything(root: Path) -> bool:
    """Every status, two pending requests and the re-plan are on disk (polled while the
    simulator runs, instead of a fixed wait)."""
    if not (root / "missions/release-notes/plan/v2.json").is_file():
        return False
    workspace = Workspace(root)
    workspace.scan()
    statuses = {workspace.status(m).value for m in workspace.missions}
    return statuses == ALL_STATUSES and len(workspace.pending_requests()) >= 2


@pytest.mark.slow
def test_sigterm_stops_cleanly_with_every_status_and_pending_requests(tmp_path: Path) -> None:
    root = tmp_path / "state"
    proc = start(root, "--seed", "1", "--rate", "100")
    wait_for(lambda: shows_everything(root), timeout=30)
    assert proc.poll() is None, "simulator exited early"
    code, err = stop(proc)
    assert code == 0, err
    assert "stopped after" in err
    assert_valid(root)
    workspace = Workspace(root)
    workspace.scan()
    statuses = {m: workspace.status(m).value for m in workspace.missions}
    assert set(statuses.values()) == ALL_STATUSES, statuses
    pending = workspace.pending_requests()
    assert len(pending) >= 2, pending
    requests = sorted(root.glob("missions/*/approvals/*.json"))
    assert len(requests) >= 2
    assert sorted(root.glob("missions/*/approvals/*.toml")) == []  # it never decides
    for mission in missions(root):
        assert (root / "missions" / mission / "intent.toml").is_file()
        assert (root / "missions" / mission / "constraints.toml").is_file()
    # a re-plan with a reason happened, and the stalled mission's events are old
    assert (root / "missions/release-notes/plan/v2.json").is_file()
    plan = json.loads((root / "missions/release-notes/plan/v2.json").read_bytes())
    assert plan["reason"]
    assert statuses["nightly-index"] == "stale"


def test_sigint_stops_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "state"
    proc = start(root, "--rate", "500")
    wait_for(lambda: len(list(root.glob("missions/*/events.jsonl"))) >= 6)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=5)
    assert proc.returncode == 0, err.decode()
    assert_valid(root)


# ---- determinism -----------------------------------------------------------------------------

VOLATILE = {"at", "prev", "created_at", "requested_at", "expires_at"}


def sequence(root: Path) -> list[Any]:
    """Everything the agents wrote, minus clock-dependent fields."""
    found: list[Any] = []
    for mission in missions(root):
        base = root / "missions" / mission
        for kind in (Kind.EVENTS, Kind.EVIDENCE):
            log = base / f"{kind.value}.jsonl"
            for line in log.read_bytes().splitlines() if log.exists() else []:
                record = json.loads(line)
                found.append(
                    (mission, kind.value, {k: v for k, v in record.items() if k not in VOLATILE})
                )
        for path in sorted([*base.glob("plan/*.json"), *base.glob("approvals/*.json")]):
            record = json.loads(path.read_bytes())
            found.append(
                (mission, path.name, {k: v for k, v in record.items() if k not in VOLATILE})
            )
        for path in sorted(base.glob("artifacts/*")):
            found.append((mission, path.name, path.read_bytes()))
    return found


def run_ticks(root: Path, *args: str) -> None:
    proc = start(root, "--ticks", "400", "--rate", "100000", *args)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()


def test_same_seed_same_sequence(tmp_path: Path) -> None:
    run_ticks(tmp_path / "a", "--seed", "7")
    run_ticks(tmp_path / "b", "--seed", "7")
    first, second = sequence(tmp_path / "a"), sequence(tmp_path / "b")
    assert len(first) > 80
    assert first == second
    types = [r["type"] for _, kind, r in first if kind == "events"]
    assert {"step", "attempt", "usage", "error", "halt"} <= set(types)
    assert_valid(tmp_path / "a")


def test_another_seed_another_sequence(tmp_path: Path) -> None:
    root = tmp_path / "c"
    Runner(root, seed=7, ticks=400, rate=1e9).run()
    other = tmp_path / "d"
    Runner(other, seed=8, ticks=400, rate=1e9).run()
    assert sequence(root) != sequence(other)


def test_restart_in_the_same_directory_adds_missions(tmp_path: Path) -> None:
    Runner(tmp_path, missions=3, ticks=60, rate=1e9).run()
    Runner(tmp_path, missions=3, ticks=60, rate=1e9).run()
    first = ["deploy-gateway", "release-notes", "flaky-migration"]
    assert missions(tmp_path) == sorted([*first, *(f"{m}-2" for m in first)])
    assert_valid(tmp_path)


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    for argv in (["--rate", "0"], ["--missions", "0"], ["--ticks", "x"]):
        with pytest.raises(SystemExit) as exc:
            main([str(tmp_path), *argv])
        assert exc.value.code == 2


# ---- approvals honoured ----------------------------------------------------------------------


def started_with(root: Path, mission: str, request_id: str) -> list[Any]:
    return [
        e
        for e in events(root, mission)
        if e.type == "attempt" and e.phase == "started" and e.approval == request_id
    ]


def last_state(root: Path, mission: str, step: str) -> tuple[str, str] | None:
    latest = None
    for e in events(root, mission):
        if e.type == "step" and e.step == step:
            latest = (e.state, e.reason)
    return latest


def test_decisions_are_honoured_through_authorize(tmp_path: Path) -> None:
    root = tmp_path / "state"
    # 17 missions: three play the approvals scenario (deploy-gateway, -2, -3)
    proc = start(root, "--missions", "17", "--rate", "400")
    try:
        a, b, c = "deploy-gateway", "deploy-gateway-2", "deploy-gateway-3"
        asked = ("metrics", "staging", "notify")
        wait_for(
            lambda: all(
                (root / f"missions/{m}/approvals/{m}-{s}.json").exists()
                for m in (a, b, c)
                for s in asked
            )
        )
        risks = {
            json.loads((root / f"missions/{a}/approvals/{a}-{s}.json").read_bytes())["risk"]
            for s in asked
        }
        assert risks == {"read_only", "reversible_write", "external_write"}
        decide(root, a, f"{a}-metrics")  # approved: runs once
        decide(root, a, f"{a}-staging", "reject", reason="not during the freeze")
        decide(root, a, f"{a}-notify", digest="sha256:" + "0" * 64)  # approved something else
        for s in asked:
            decide(root, b, f"{b}-{s}")
        past = datetime.now(UTC) - timedelta(minutes=1)
        decide(root, c, f"{c}-metrics", valid_until=past)  # approval no longer valid

        retire = root / f"missions/{b}/approvals/{b}-retire.json"
        wait_for(retire.exists)  # B's three steps ran; now it asks for the irreversible one
        assert json.loads(retire.read_bytes())["risk"] == "irreversible"
        decide(root, b, f"{b}-retire")
        wait_for(lambda: (last_state(root, b, "retire") or ("",))[0] == "succeeded")
        wait_for(lambda: (last_state(root, a, "retire") or ("",))[0] == "blocked")
        wait_for(lambda: (last_state(root, c, "metrics") or ("",))[0] == "blocked")
    finally:
        code, err = stop(proc)
    assert code == 0, err

    assert len(started_with(root, a, f"{a}-metrics")) == 1
    assert last_state(root, a, "metrics") == ("succeeded", "")
    assert started_with(root, a, f"{a}-staging") == []
    state, reason = last_state(root, a, "staging") or ("", "")
    assert state == "blocked" and "rejected: not during the freeze" in reason
    assert started_with(root, a, f"{a}-notify") == []
    state, reason = last_state(root, a, "notify") or ("", "")
    assert state == "blocked" and "stale" in reason
    for s in (*asked, "retire"):
        assert len(started_with(root, b, f"{b}-{s}")) == 1, s
        assert (last_state(root, b, s) or ("",))[0] == "succeeded"
    assert started_with(root, c, f"{c}-metrics") == []
    state, reason = last_state(root, c, "metrics") or ("", "")
    assert state == "blocked" and "expired" in reason
    # C's other requests still wait; the stale decision is the only error hud check reports
    assert (last_state(root, c, "staging") or ("",))[0] == "waiting_for_approval"
    assert_valid(root, allowed_codes=frozenset({"stale-decision"}))


def test_requests_that_expire_undecided_are_asked_again_then_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sim_mission, "REQUEST_VALID_FOR", timedelta(0))
    Runner(tmp_path, missions=1, ticks=200, rate=1e9).run()
    mission = "deploy-gateway"
    names = sorted(p.name for p in (tmp_path / f"missions/{mission}/approvals").iterdir())
    for step in ("metrics", "staging", "notify"):
        asked = [f"{mission}-{step}.json", f"{mission}-{step}-r2.json", f"{mission}-{step}-r3.json"]
        assert set(asked) <= set(names)
        state, reason = last_state(tmp_path, mission, step) or ("", "")
        assert state == "blocked" and "expired" in reason
    assert not any(e.type == "attempt" for e in events(tmp_path, mission))
    assert (last_state(tmp_path, mission, "retire") or ("",))[0] == "blocked"
    assert_valid(tmp_path)


# ---- what a review, a replay and the metrics find in a demo --------------------------------------


def test_the_demo_leaves_what_review_replay_and_metrics_look_for(tmp_path: Path) -> None:
    Runner(tmp_path, ticks=600, rate=1e9).run()
    assert_valid(tmp_path)
    workspace = Workspace(tmp_path)
    workspace.scan()
    now = workspace.clock()
    report = directory_metrics(workspace, now - timedelta(days=1), now)
    verdicts = {
        m: {a.key: a.verdict for a in review(workspace.missions[m]).answers}
        for m in ("release-notes", "nightly-index", "refund-batch")
    }
    # a handoff to another agent that finished the work, on independent evidence
    assert "fail" not in verdicts["release-notes"].values()
    assert verdicts["release-notes"]["independent-evidence"] == "pass"
    assert report.missions["release-notes"].handoffs == Ratio(1, 1)
    # two workers on one step, one on a superseded plan, repeating an effect without a key
    index = workspace.missions["nightly-index"]
    failing = {  # each attempt counts for the plan version it ran under
        a.key
        for version in index.plans
        for a in review(index, version).answers
        if a.verdict == "fail"
    }
    assert {"risk-recovery", "safe-resume", "unkeyed-repeat"} <= failing
    stale = report.missions["nightly-index"]
    assert (stale.conflicts, stale.stale_context, stale.handoffs_open) == (1, 1, 1)
    # a request the agent's re-plan left stale: an authorization refused
    assert workspace.request_status("refund-batch", "refund-batch-resubmit").value == "stale"
    assert report.missions["refund-batch"].rejections == Ratio(1, 1)
    # a failed run worth replaying: failed, re-planned, failed again
    replay = Replay(tmp_path, "flaky-migration")
    replay.refresh()
    failures = [m.line for m in replay.mission.ledger.marks() if m.subject == "failed"]
    assert len(failures) == 2
    assert replay.frame(failures[0]).moment.status == "failed"
    retried = replay.frame(failures[0] + 1)
    assert retried.moment.plan_version == 2 and ("plan", "", "v1", "v2") in {
        (c.what, c.key, c.before, c.after) for c in retried.changes
    }
