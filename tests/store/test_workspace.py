"""Workspace: one scan, then incremental apply(paths) touching only what changed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import store.derivation.mission
from store.derivation.derive import RequestStatus
from store.format.row import MissionStatus
from store.index.workspace import Workspace
from tests.factory import Mission, mission, resume

Open = Callable[[Path], Workspace]


def test_scan_indexes_every_mission(workspace: Workspace) -> None:
    assert sorted(workspace.missions) == ["alpha", "beta", "gamma"]
    assert workspace.problems() == []
    assert workspace.settings.stale_after_seconds == 600
    assert workspace.missions["alpha"].title == "Migrate the database"
    assert {m: workspace.status(m) for m in workspace.missions} == {
        "alpha": MissionStatus.RUNNING,
        "beta": MissionStatus.NEEDS_YOU,
        "gamma": MissionStatus.DONE,
    }
    assert workspace.pending_requests() == [("beta", "r1")]


def test_apply_one_appended_line_touches_only_its_mission(
    workspace: Workspace, alpha: Mission, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {m: (s.events.offset if s.events else 0) for m, s in workspace.missions.items()}
    documents: list[str] = []
    original = store.derivation.mission.load_document

    def counting(root: Path, relpath: str, model: Any) -> Any:
        documents.append(relpath)
        return original(root, relpath, model)

    monkeypatch.setattr(store.derivation.mission, "load_document", counting)
    line = alpha.step("s1", "failed", reason="disk full")

    touched = workspace.apply([alpha.rel("events.jsonl")])

    assert touched == {"alpha"}
    assert documents == []  # no document re-read for a log append
    events = workspace.missions["alpha"].events
    assert events is not None and events.offset == before["alpha"] + len(line) + 1
    for other in ("beta", "gamma"):
        state = workspace.missions[other]
        assert (state.events.offset if state.events else 0) == before[other]
    assert workspace.status("alpha") is MissionStatus.FAILED
    assert workspace.status("gamma") is MissionStatus.DONE


def test_apply_keeps_other_missions_problem_cache(workspace: Workspace, alpha: Mission) -> None:
    beta_problems = workspace.missions["beta"].problems()
    alpha.step("s9", "running")  # a step in no plan: an invariant breaks in alpha only
    workspace.apply([alpha.rel("events.jsonl")])
    assert [p.code for p in workspace.missions["alpha"].problems()] == ["unknown-step"]
    assert workspace.missions["beta"].problems() is beta_problems  # cached, not recomputed


def test_apply_a_document_change(workspace: Workspace, state_dir: Path) -> None:
    beta = resume(state_dir, "beta")
    beta.decision("r1")
    workspace.apply([beta.rel("approvals/r1.toml")])
    assert workspace.request_status("beta", "r1") is RequestStatus.APPROVED
    assert workspace.pending_requests() == []
    assert workspace.status("beta") is MissionStatus.RUNNING

    beta.intent("Renamed")
    workspace.apply([beta.rel("intent.toml")])
    assert workspace.missions["beta"].title == "Renamed"


def test_apply_a_deleted_file(workspace: Workspace, state_dir: Path) -> None:
    (state_dir / "missions/beta/approvals/r1.json").unlink()
    assert workspace.apply(["missions/beta/approvals/r1.json"]) == {"beta"}
    assert workspace.missions["beta"].requests == {}
    assert workspace.pending_requests() == []


def test_apply_a_deleted_folder(workspace: Workspace, state_dir: Path) -> None:
    shutil.rmtree(state_dir / "missions/beta/approvals")
    workspace.apply(["missions/beta/approvals"])
    assert workspace.missions["beta"].requests == {}

    shutil.rmtree(state_dir / "missions/gamma")
    assert workspace.apply(["missions/gamma"]) == {"gamma"}
    assert sorted(workspace.missions) == ["alpha", "beta"]


def test_apply_a_deleted_log_resets_its_aggregates(workspace: Workspace, state_dir: Path) -> None:
    (state_dir / "missions/alpha/events.jsonl").unlink()
    workspace.apply(["missions/alpha/events.jsonl"])
    alpha = workspace.missions["alpha"]
    assert alpha.events is None and alpha.step_latest == {} and len(alpha.usage) == 0
    assert workspace.status("alpha") is MissionStatus.IDLE


def test_replaced_log_rebuilds_aggregates(workspace: Workspace, state_dir: Path) -> None:
    """Deleted and written again, longer (the file system may reuse the inode)."""
    path = state_dir / "missions/alpha/events.jsonl"
    path.unlink()
    fresh = Mission(state_dir, "alpha")
    for _ in range(3):
        fresh.step("s2", "blocked", reason="a new log, longer than the old one")
    workspace.apply([fresh.rel("events.jsonl")])
    alpha = workspace.missions["alpha"]
    assert set(alpha.step_latest) == {"s2"}  # s1 from the old file is gone
    assert alpha.problems() == []  # the bytes are fine: a fresh scan says so too
    assert [p.code for p in workspace.notices] == ["log-replaced"]
    assert alpha.events is not None and alpha.events.line_no == 3


def test_new_mission_appears(workspace: Workspace, state_dir: Path) -> None:
    delta = mission(state_dir, "delta")
    paths = [delta.rel("intent.toml"), delta.rel("constraints.toml"), delta.rel("plan/v1.json")]
    touched = workspace.apply(paths)
    assert touched == {"delta"}
    assert workspace.status("delta") is MissionStatus.IDLE
    assert workspace.missions["delta"].latest_plan is not None


def test_a_new_folder_stands_for_its_files(workspace: Workspace, state_dir: Path) -> None:
    """A watcher may report only the folder: its first files can land before the
    folder is watched, and a folder moved in brings its files without events."""
    resume(state_dir, "alpha").request("r5")  # makes missions/alpha/approvals/
    assert workspace.apply(["missions/alpha/approvals"]) == {"alpha"}
    assert ("alpha", "r5") in workspace.pending_requests()

    staged = mission(state_dir.parent / "staging", "delta", "Moved in whole")
    staged.step("s1", "running")
    (state_dir.parent / "staging/missions/delta").rename(state_dir / "missions/delta")
    assert workspace.apply(["missions/delta"]) == {"delta"}
    assert workspace.missions["delta"].title == "Moved in whole"
    assert workspace.status("delta") is MissionStatus.RUNNING
    assert workspace.problems() == []


def test_settings_reload(workspace: Workspace, state_dir: Path) -> None:
    (state_dir / "hud.toml").write_text("schema = 1\nstale_after_seconds = 5\n")
    assert workspace.apply(["hud.toml"]) == set()
    assert workspace.settings.stale_after_seconds == 5
    assert workspace.status("alpha") is MissionStatus.STALE  # last event 58 s before now

    (state_dir / "hud.toml").write_text("schema = 1\nstale_after_seconds = -1\n")
    workspace.apply(["hud.toml"])
    assert [p.path for p in workspace.problems()] == ["hud.toml"]
    assert workspace.settings.stale_after_seconds == 5  # the last good settings stay

    (state_dir / "hud.toml").unlink()
    workspace.apply(["hud.toml"])
    assert workspace.problems() == [] and workspace.settings.stale_after_seconds == 600


def test_unknown_files_come_and_go(workspace: Workspace, state_dir: Path) -> None:
    for rel in ("notes.md", "missions/alpha/scratch.txt", "missions/alpha/tmp"):
        target = state_dir / rel
        if rel.endswith("tmp"):
            target.mkdir()
        else:
            target.write_text("x")
    workspace.apply(["notes.md", "missions/alpha/scratch.txt", "missions/alpha/tmp"])
    found = {(p.path, p.code, p.severity) for p in workspace.problems()}
    assert found == {
        ("notes.md", "unknown-file", "warn"),
        ("missions/alpha/scratch.txt", "unknown-file", "warn"),
        ("missions/alpha/tmp", "unknown-folder", "warn"),
    }
    (state_dir / "notes.md").unlink()
    workspace.apply(["notes.md"])
    assert "notes.md" not in {p.path for p in workspace.problems()}


def test_layout_folders_appearing_are_not_problems(workspace: Workspace, state_dir: Path) -> None:
    """A watcher reports new folders too: a new mission's, its first history/."""
    (state_dir / "missions/delta/history").mkdir(parents=True)
    (state_dir / "missions/alpha/history").mkdir()
    workspace.apply(["missions/delta", "missions/delta/history", "missions/alpha/history"])
    assert workspace.problems() == []


def test_transient_files_are_ignored(workspace: Workspace, state_dir: Path) -> None:
    (state_dir / "missions/alpha/.intent.toml.tmp123").write_text("garbage")
    (state_dir / "missions/alpha/events.jsonl.lock").write_text("")
    rels = ["missions/alpha/.intent.toml.tmp123", "missions/alpha/events.jsonl.lock"]
    assert workspace.apply(rels) == set()
    assert workspace.problems() == []
    rescanned = Workspace(state_dir)
    rescanned.scan()
    assert rescanned.problems() == []


def test_apply_is_idempotent(workspace: Workspace, state_dir: Path) -> None:
    everything = list(workspace.walk())
    before = {m: workspace.status(m) for m in workspace.missions}
    workspace.apply(everything)
    workspace.apply(everything)
    assert {m: workspace.status(m) for m in workspace.missions} == before
    assert workspace.missions["alpha"].events is not None
    assert workspace.missions["alpha"].events.line_no == 2  # not read twice


def test_clock_is_injected(state_dir: Path) -> None:
    from datetime import timedelta

    from tests.conftest import NOW

    moments = [NOW]
    workspace = Workspace(state_dir, clock=lambda: moments[-1])
    workspace.scan()
    assert workspace.status("alpha") is MissionStatus.RUNNING
    moments.append(NOW + timedelta(hours=1))
    assert workspace.status("alpha") is MissionStatus.STALE


def test_walk_does_not_enter_unknown_folders(workspace: Workspace, state_dir: Path) -> None:
    (state_dir / "junk/deep").mkdir(parents=True)
    (state_dir / "junk/deep/file").write_text("x")
    walked = set(workspace.walk())
    assert "junk" in walked and "junk/deep/file" not in walked
    assert "missions/alpha/events.jsonl" in walked
