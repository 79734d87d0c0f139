"""loopx goals, read-only: rows, gates, todos, leases, quota, handoffs; bad files are
problems with path and line; the runtime root is followed (or not, per hud.toml)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import store.format.confined
from cli.main import main as hud_main
from store.format.row import MissionStatus
from store.index.approval_checks import approval_queue
from store.index.check import check
from store.index.workspace import Workspace
from tests.loopx_support import LOOPX_NOW, place_loopx

GOAL = "loopx:demo-goal"


def scan(project: Path) -> Workspace:
    workspace = Workspace(project, clock=lambda: LOOPX_NOW)
    workspace.scan()
    return workspace


def codes(workspace: Workspace) -> set[tuple[str, str, int | None]]:
    return {(p.code, p.path, p.line) for p in workspace.problems()}


def runtime(project: Path) -> Path:
    return project.parent / "runtime" / "goals" / "demo-goal"


def state_file(project: Path) -> Path:
    return next(project.glob(".*/goals/demo-goal/ACTIVE_GOAL_STATE.md"))


def test_a_loopx_0_5_goal_as_loopx_status_shows_it(tmp_path: Path) -> None:
    workspace = scan(place_loopx("v0.5.1", tmp_path))
    assert workspace.problems() == []
    row = workspace.rows()[GOAL]
    assert row.status is MissionStatus.NEEDS_YOU  # loopx: waiting_on=controller, user gate
    assert row.title == "loopx: Ship the export job"
    assert row.pending == 2  # two open user gates (loopx status: asset_todos user_open=2)
    assert row.current_step is not None and row.current_step.startswith("gate: [P1] Choose")
    goal = workspace.loopx.goal(GOAL)
    assert goal is not None
    cutover = next(t for t in goal.gates() if t.text == "Approve the cutover window?")
    assert cutover.blocks_agent == "agent-a"
    assert goal.by_status() == {"open": 4, "done": 1}
    done = next(t for t in goal.state.todos if t.status == "done")
    assert done.evidence == "docs/checkpoints.md#L1"  # URL-decoded
    assert done.claimed_by == "agent-a"
    assert set(goal.holders().values()) == {"agent-a"}  # the lease on "Write the resume test"
    assert [e.event_kind for e in goal.events].count("todo_claim") == 2
    assert goal.quota() is None and goal.runs == []


def test_a_loopx_2_1_goal_reads_its_markdown_projection(tmp_path: Path) -> None:
    workspace = scan(place_loopx("v2.1.1", tmp_path))
    assert workspace.problems() == []
    goal = workspace.loopx.goal(GOAL)
    assert goal is not None and goal.state_path == ".loopx/goals/demo-goal/ACTIVE_GOAL_STATE.md"
    assert [t.text for t in goal.gates()] == ["[P0] Approve the cutover window?"]
    assert workspace.rows()[GOAL].status is MissionStatus.NEEDS_YOU


def test_hud_check_reports_bad_lines_versions_missing_and_escaping_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    log = runtime(project) / "rollout-event-log.jsonl"
    with log.open("a") as handle:
        handle.write('{"schema_version": "loopx_rollout_event_v9", "event_kind": "x"}\n')
        handle.write("{not json\n")
    registry = project / ".loopx" / "registry.json"
    data = json.loads(registry.read_text())
    data["schema_version"] = "0.9"
    data["goals"].append({**data["goals"][0], "id": "escape", "state_file": "../../etc/passwd"})
    data["goals"].append({**data["goals"][0], "id": "gone", "state_file": "nowhere/STATE.md"})
    registry.write_text(json.dumps(data, indent=2))
    found = codes(scan(project))
    assert ("loopx-schema-version", ".loopx/registry.json", 2) in found
    assert ("loopx-schema-version", str(log), 8) in found
    assert ("bad-json", str(log), 9) in found
    escapes = [c for c in found if c[0] == "loopx-state-file-escapes"]
    assert escapes and escapes[0][1] == ".loopx/registry.json" and escapes[0][2] is not None
    assert ("loopx-state-missing", "nowhere/STATE.md", None) in found
    assert hud_main(["check", str(project)]) == 1
    out = capsys.readouterr().out
    assert f"{log}:9" in out and "unknown schema_version '0.9'" in out
    assert "loopx:escape" in out and "loopx:gone" in out


def test_the_runtime_root_is_followed_unless_hud_toml_restricts_it(tmp_path: Path) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    assert scan(project).watch_paths() == {"@loopx0": project.parent / "runtime"}
    (project / "hud.toml").write_text('schema = 1\nloopx_roots = ["/somewhere/else"]\n')
    workspace = scan(project)
    assert {p.code for p in workspace.problems()} == {"loopx-not-followed"}
    goal = workspace.loopx.goal(GOAL)
    assert goal is not None and goal.events == [] and workspace.watch_paths() == {}
    (project / "hud.toml").write_text(f'schema = 1\nloopx_roots = ["{project.parent}"]\n')
    assert scan(project).problems() == []


def test_a_symlinked_state_file_is_not_followed(tmp_path: Path) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    path = state_file(project)
    secret = tmp_path / "secret.md"
    secret.write_text(path.read_text())
    path.unlink()
    os.symlink(secret, path)
    found = {p.code for p in scan(project).problems()}
    assert found & {"symlink", "symlink-escape"}


def test_quota_runs_and_handoffs(tmp_path: Path) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    runs = runtime(project) / "runs"
    runs.mkdir()
    record = {  # the fields loopx 0.5.1 writes (control_plane/quota/slot_accounting.py)
        "classification": "quota_slot_spent",
        "generated_at": "2026-12-01T15:55:00Z",
        "quota_event": {
            "event_type": "quota_slot_spent",
            "slots": 1,
            "before": {"spent_slots": 1, "allowed_slots": 4, "state": "eligible"},
            "after": {"spent_slots": 2, "allowed_slots": 4, "state": "eligible"},
        },
    }
    (runs / "20261201T155500Z.json").write_text(json.dumps(record))
    entry = {
        "generated_at": "2026-12-01T15:55:00Z",
        "classification": "quota_slot_spent",
        "json_path": "/elsewhere/runs/20261201T155500Z.json",
    }
    (runs / "index.jsonl").write_text(json.dumps(entry) + "\n")
    log = runtime(project) / "rollout-event-log.jsonl"
    todo = json.loads(log.read_text().splitlines()[4])["todo_id"]  # claimed by agent-a
    claim = {"schema_version": "loopx_rollout_event_v0", "event_kind": "todo_claim"}
    with log.open("a") as handle:
        handle.write(json.dumps({**claim, "todo_id": todo, "agent_id": "agent-b"}) + "\n")
    workspace = scan(project)
    assert workspace.problems() == []
    row = workspace.rows()[GOAL]
    assert row.budget_fraction == 0.5
    goal = workspace.loopx.goal(GOAL)
    assert goal is not None
    assert [(h.from_agent, h.to_agent) for h in goal.handoffs()] == [("agent-a", "agent-b")]


def test_the_live_view_and_check_agree(tmp_path: Path) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    (runtime(project) / "rollout-event-log.jsonl").open("a").write("oops\n")
    workspace = scan(project)
    report = check(project)
    row = workspace.rows()[GOAL]
    assert (report.missions[GOAL].status, report.missions[GOAL].title) == (row.status, row.title)
    assert report.missions[GOAL].problems == workspace.problems_by_row()[GOAL]


def test_read_ahead_then_fold_without_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = place_loopx("v0.5.1", tmp_path)
    workspace = Workspace(project, clock=lambda: LOOPX_NOW)
    workspace.scan()
    log = runtime(project) / "rollout-event-log.jsonl"
    event = {"schema_version": "loopx_rollout_event_v0", "event_kind": "refresh_state"}
    with log.open("a") as handle:
        handle.write(json.dumps(event) + "\n")
    ahead = workspace.read_ahead({"@loopx0/goals/demo-goal/rollout-event-log.jsonl"})

    def no_disk(root: Path, relpath: str) -> None:
        raise AssertionError(f"{relpath} read while folding")

    monkeypatch.setattr(store.format.confined, "open_on_disk", no_disk)
    assert workspace.apply_read(ahead) == {GOAL}
    goal = workspace.loopx.goal(GOAL)
    assert goal is not None and goal.events[-1].event_kind == "refresh_state"


def test_open_gates_are_in_the_approvals_queue_as_the_row_counts_them(tmp_path: Path) -> None:
    workspace = scan(place_loopx("v0.5.1", tmp_path))
    gates = [item for item in approval_queue(workspace, LOOPX_NOW) if item.tool == "loopx"]
    assert len(gates) == workspace.rows()[GOAL].pending == 2
    assert "loopx gate: Approve the cutover window? (blocks agent-a)" in {g.summary for g in gates}
    assert {g.mission for g in gates} == {GOAL}
