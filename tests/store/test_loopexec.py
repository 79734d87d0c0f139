"""loopexec runs: receipts, state, heartbeat, escalation, attestation; statuses and problems."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cli.main import main as hud_main
from store.format.row import MissionStatus
from store.index.workspace import Workspace
from store.sources.loopexec.runs import EXIT_CLASSES, HALT_REASONS, exit_class, exit_code
from tests.small_support import LOOPEXEC_FIXTURES, LOOPEXEC_NOW, T_LOOPEXEC, copy_loopexec


def scan(root: Path, now: datetime = LOOPEXEC_NOW) -> Workspace:
    workspace = Workspace(root, clock=lambda: now)
    workspace.scan()
    return workspace


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("success_condition_met", 10),
        ("human_required", 11),
        ("max_iterations_reached", 12),
        ("metric_integrity_violation", 13),
        ("check_flaky", 14),
        ("check_inadequate", 15),
        ("escalation_pending", 16),
        ("no_progress_detected", 17),
        ("budget_exceeded", 18),
        ("heartbeat_stale", 19),
        ("invariant_failed", 20),
        ("workspace_invalid", 30),
        ("execution_failure", 40),
        ("internal_error", 50),
        ("something_new", 50),
    ],
)
def test_halt_reason_exit_classes(reason: str, code: int) -> None:
    assert exit_code(reason) == code
    assert exit_class(reason) == f"{code} {EXIT_CLASSES[code]}"


def test_every_class_has_a_reason() -> None:
    assert set(HALT_REASONS.values()) == set(EXIT_CLASSES) - {0}


def test_runs_fixture() -> None:
    workspace = scan(LOOPEXEC_FIXTURES / "runs")
    rows = workspace.external_summaries()
    assert {k: v.status for k, v in rows.items()} == {
        "loopexec:r-stuck": MissionStatus.NEEDS_YOU,
        "loopexec:r-converged": MissionStatus.DONE,
        "loopexec:r-live": MissionStatus.RUNNING,
    }
    assert workspace.problems() == []
    loopexec = workspace.loopexec
    stuck = loopexec.runs["r-stuck"]
    assert [e.event for e in stuck.events][:3] == ["run_start", "iter_start", "exec"]
    assert loopexec.halt_reason(stuck) == "no_progress_detected"
    assert loopexec.escalation_open(stuck) and rows["loopexec:r-stuck"].pending == 1
    assert stuck.escalation is not None and stuck.escalation["best_fail_count"] == 5
    state = loopexec.run_state(stuck)
    assert state is not None and state.best_fail_count == 5 and state.cost_usd == 0.87
    assert state.model == "anthropic/claude-sonnet-4-5@20250929"
    converged = loopexec.runs["r-converged"]
    assert converged.attested and not stuck.attested
    assert rows["loopexec:r-converged"].current_step == "halt success_condition_met"
    live = loopexec.runs["r-live"]
    heartbeat = loopexec.run_heartbeat(live)
    assert heartbeat is not None and heartbeat.age(LOOPEXEC_NOW) == 100
    assert loopexec.run_heartbeat(stuck) is None
    assert rows["loopexec:r-live"].current_step == "iter 2 exec"
    assert rows["loopexec:r-live"].title == "loopexec r-live: make test"


def test_a_stale_heartbeat() -> None:
    later = datetime.fromtimestamp(T_LOOPEXEC + 2300 + 601, UTC)
    rows = scan(LOOPEXEC_FIXTURES / "runs", later).external_summaries()
    assert rows["loopexec:r-live"].status is MissionStatus.STALE


def test_an_acknowledged_escalation_no_longer_needs_you(tmp_path: Path) -> None:
    root = copy_loopexec("runs", tmp_path)
    path = root / ".loopexec" / "run-r-stuck.state.json"
    state = json.loads(path.read_text())
    state["escalation"] = {"state": "acked", "acked_by": "ana"}
    path.write_text(json.dumps(state))
    rows = scan(root).external_summaries()
    assert rows["loopexec:r-stuck"].status is MissionStatus.BLOCKED  # exit 17, no convergence
    assert rows["loopexec:r-stuck"].pending == 0


def test_bad_input_is_problems() -> None:
    workspace = scan(LOOPEXEC_FIXTURES / "bad")
    found = {(p.path, p.line, p.code, p.severity) for p in workspace.problems()}
    assert found == {
        (".loopexec/notes.txt", None, "loopexec-unknown-file", "warn"),
        (".loopexec/state.json", 1, "bad-json", "error"),
        (".loopexec/run-broken.jsonl", 2, "loopexec-receipt", "error"),
        (".loopexec/run-broken.jsonl", 3, "loopexec-receipt", "error"),
        (".loopexec/run-broken.jsonl", 4, "loopexec-halt-reason", "warn"),
    }
    assert all(p.hint for p in workspace.problems())
    rows = workspace.external_summaries()
    assert rows["loopexec:broken"].status is MissionStatus.NEEDS_YOU
    assert rows["loopexec:broken"].problems == 3


def test_receipt_is_read_incrementally(tmp_path: Path) -> None:
    root = copy_loopexec("runs", tmp_path)
    workspace = scan(root)
    receipt = root / ".loopexec" / "run-r-live.jsonl"
    line = {"ts": T_LOOPEXEC + 2180, "run_id": "r-live", "iteration": 2, "event": "check"}
    text = json.dumps({**line, "exit_code": 0})
    with receipt.open("a") as handle:
        handle.write(text[:20])  # half a line: held back
    assert workspace.apply([".loopexec/run-r-live.jsonl"]) == {"loopexec:r-live"}
    assert len(workspace.loopexec.runs["r-live"].events) == 6
    with receipt.open("a") as handle:
        handle.write(text[20:] + "\n")
        halt = {"ts": T_LOOPEXEC + 2181, "run_id": "r-live", "iteration": 2, "event": "halt"}
        handle.write(json.dumps({**halt, "detail": "success_condition_met"}) + "\n")
    workspace.apply([".loopexec/run-r-live.jsonl"])
    run = workspace.loopexec.runs["r-live"]
    assert [e.event for e in run.events][-2:] == ["check", "halt"]
    assert run.events[-2].exit_code == 0
    assert workspace.external_summaries()["loopexec:r-live"].status is MissionStatus.DONE
    assert workspace.problems() == []
    receipt.write_text(json.dumps({**line, "event": "run_start"}) + "\n")  # replaced: re-read
    workspace.apply([".loopexec/run-r-live.jsonl"])
    assert [e.event for e in workspace.loopexec.runs["r-live"].events] == ["run_start"]


def test_a_receipt_replaced_by_a_longer_one_is_read_from_its_start(tmp_path: Path) -> None:
    """Another file renamed over the receipt, longer than what was read: its own lines,
    from its first (reading it from the old offset would take the middle of a line)."""
    root = copy_loopexec("runs", tmp_path)
    workspace = scan(root)
    receipt = root / ".loopexec" / "run-r-live.jsonl"
    line = {"ts": T_LOOPEXEC + 2180, "run_id": "r-live", "iteration": 2, "event": "check"}
    longer = receipt.read_text() + json.dumps({**line, "exit_code": 0}) + "\n"
    new = receipt.with_name("new.tmp")
    new.write_text(longer.replace('"iteration":1', '"iteration":7', 1))
    new.replace(receipt)
    workspace.apply([".loopexec/run-r-live.jsonl"])
    events = workspace.loopexec.runs["r-live"].events
    assert len(events) == 7 and events[-1].exit_code == 0
    assert [event.iteration for event in events][:3] == [0, 7, 1]
    assert workspace.problems() == []


def test_removing_files_forgets_the_run(tmp_path: Path) -> None:
    root = copy_loopexec("runs", tmp_path)
    workspace = scan(root)
    folder = root / ".loopexec"
    for name in ("run-r-converged.jsonl", "run-r-converged.state.json", "attest-r-converged.sig"):
        (folder / name).unlink()
        workspace.apply([f".loopexec/{name}"])
    assert "r-converged" not in workspace.loopexec.runs
    assert "loopexec:r-converged" not in workspace.external_summaries()


def test_hud_check_reports_loopexec(capsys: pytest.CaptureFixture[str]) -> None:
    assert hud_main(["check", str(LOOPEXEC_FIXTURES / "runs")]) == 0
    assert "loopexec:r-stuck" in capsys.readouterr().out
    assert hud_main(["check", "--json", str(LOOPEXEC_FIXTURES / "bad")]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == 3
    assert [p["line"] for p in report["missions"]["loopexec:broken"]["problems"]] == [2, 3, 4]
