"""Workspace.read_ahead / apply_read: files are read off the event loop, then folded
without touching the disk, in steps, to the same index a fresh scan builds."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

import store.format.confined
import store.index.workspace
from store.format.problems import Problem
from store.index.scrub import scrub, targets
from store.index.workspace import Workspace
from tests.factory import Mission, mission, resume, three_missions


def catch_up(workspace: Workspace, paths: Iterable[str], disk_closed: pytest.MonkeyPatch) -> int:
    """Apply `paths` step by step as the HUD does; the disk is closed while folding.
    Returns the number of steps."""
    steps = 0
    pending = set(paths)
    while pending:
        ahead = workspace.read_ahead(pending)
        with disk_closed.context() as closed:
            closed.setattr(store.format.confined, "open_on_disk", _no_disk)
            workspace.apply_read(ahead)
        pending = ahead.more
        steps += 1
        assert steps < 1000
    return steps


def _no_disk(root: Path, relpath: str) -> None:
    raise AssertionError(f"{relpath} read while folding")


def same_as_a_fresh_scan(workspace: Workspace) -> None:
    fresh = Workspace(workspace.root, workspace.clock)
    fresh.scan()
    assert set(workspace.problems()) == set(fresh.problems())
    assert {m: workspace.status(m) for m in workspace.missions} == {
        m: fresh.status(m) for m in fresh.missions
    }
    for mission_id, state in fresh.missions.items():
        mine = workspace.missions[mission_id]
        for log in ("events", "evidence"):
            theirs, ours = getattr(state, log), getattr(mine, log)
            assert (ours.offset if ours else 0) == (theirs.offset if theirs else 0)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    three_missions(tmp_path)
    return tmp_path


def test_a_scan_in_steps_needs_no_read_while_folding(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(root)
    catch_up(workspace, [""], monkeypatch)
    same_as_a_fresh_scan(workspace)


def test_a_large_append_is_folded_a_step_at_a_time(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(root)
    workspace.scan()
    alpha = mission(root, "big")
    for n in range(400):
        alpha.step("s1", "running", reason=f"tick {n}")
    monkeypatch.setattr(store.index.workspace, "LOG_STEP", 4096)
    steps = catch_up(workspace, ["missions/big/events.jsonl", "missions/big"], monkeypatch)
    size = (root / "missions/big/events.jsonl").stat().st_size
    assert steps >= size // 4096
    same_as_a_fresh_scan(workspace)


def test_a_step_budget_defers_paths_to_the_next_step(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.index.workspace, "READ_AHEAD", 512)
    workspace = Workspace(root)
    steps = catch_up(workspace, [""], monkeypatch)
    assert steps > 3
    same_as_a_fresh_scan(workspace)


def test_a_log_rewritten_in_place_is_read_again_from_the_start(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(root)
    workspace.scan()
    log = root / "missions/alpha/events.jsonl"
    head, _, last = log.read_bytes().rstrip(b"\n").rpartition(b"\n")
    edited = last.replace(b'"actor":"agent"', b'"actor":"Agent"')  # size kept
    log.write_bytes(head + b"\n" + edited + b"\n")
    os.utime(log, ns=(1, 1))  # a new mtime, whatever the clock's resolution
    catch_up(workspace, ["missions/alpha/events.jsonl"], monkeypatch)
    assert [p.code for p in workspace.notices] == ["log-rewritten"]
    same_as_a_fresh_scan(workspace)


def test_a_line_changed_in_place_anywhere_is_found_at_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same size, line 1 edited: the bytes already read are verified on the change."""
    workspace = Workspace(root)
    catch_up(workspace, [""], monkeypatch)
    log = root / "missions/alpha/events.jsonl"
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"actor":"agent"', b'"actor":"Agent"', 1))
    os.utime(log, ns=(1, 1))  # a new mtime, whatever the clock's resolution
    catch_up(workspace, ["missions/alpha/events.jsonl"], monkeypatch)
    assert [p.code for p in workspace.notices] == ["log-rewritten"]
    assert "chain-broken" in {p.code for p in workspace.missions["alpha"].problems()}
    same_as_a_fresh_scan(workspace)


@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink"])
def test_a_log_that_is_no_regular_file_is_a_problem_read_ahead_too(
    root: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(root)
    workspace.scan()
    log = root / "missions/alpha/evidence.jsonl"
    log.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(log)
    elif kind == "folder":
        log.mkdir()
    else:
        log.symlink_to("/dev/zero")
    catch_up(workspace, ["missions/alpha/evidence.jsonl"], monkeypatch)
    problems = [p for p in workspace.problems() if p.path == "missions/alpha/evidence.jsonl"]
    assert [p.severity for p in problems] == ["error"]
    assert isinstance(problems[0], Problem)
    same_as_a_fresh_scan(workspace)


def test_the_scrub_finds_an_edit_hidden_by_an_append(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line 1 edited and a line appended in one batch: an append by size; the watcher's
    step misses it, the scrub finds it and the log is read again."""
    workspace = Workspace(root)
    catch_up(workspace, [""], monkeypatch)
    first = scrub(root, targets(workspace.readers()), share=1.0)
    assert first.rewritten == {} and len(first.verified) == 4  # every log
    assert workspace.take_scrub(first) == set()
    log = root / "missions/alpha/events.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"actor":"agent"', b'"actor":"Agent"', 1))
    resume(root, "alpha").step("s2", "running")
    catch_up(workspace, ["missions/alpha/events.jsonl"], monkeypatch)
    assert workspace.notices == []  # missed by the step: it looks like an append
    second = scrub(root, targets(workspace.readers()), share=1.0)
    assert set(second.rewritten) == {"missions/alpha/events.jsonl"}
    assert set(second.verified) == set()  # the others did not change: not hashed again
    again = workspace.take_scrub(second)
    catch_up(workspace, again, monkeypatch)
    assert [p.code for p in workspace.notices] == ["log-rewritten"]
    same_as_a_fresh_scan(workspace)


def test_the_scrub_keeps_to_its_share_of_a_core(root: Path) -> None:
    workspace = Workspace(root)
    workspace.scan()
    began_wall, began_cpu = time.monotonic(), time.thread_time()
    scrub(root, targets(workspace.readers()), share=0.5)
    wall, cpu = time.monotonic() - began_wall, time.thread_time() - began_cpu
    assert cpu <= wall * 0.5 + 0.01


def test_a_plan_version_changed_after_it_was_written_is_a_notice(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(root)
    workspace.scan()
    Mission(root, "alpha").plan(1, ["s1", "s9"])  # v1 written again, other steps
    catch_up(workspace, ["missions/alpha/plan/v1.json"], monkeypatch)
    assert [p.code for p in workspace.notices] == ["plan-changed"]
    same_as_a_fresh_scan(workspace)
