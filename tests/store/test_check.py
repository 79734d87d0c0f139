"""check(root) and `hud check DIR [--json]`: grouping, exit codes 0/1/2, the JSON shape."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import store.index.check
from cli.main import main
from store.index.check import check
from tests.factory import mission, resume


@pytest.fixture(autouse=True)
def _nothing_frozen() -> None:
    """Each test here starts with nothing frozen for the collector (what freezes is part
    of what they check; a HUD test before them in this process froze what it built)."""
    gc.unfreeze()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_valid_workspace(state_dir: Path) -> None:
    report = check(state_dir)
    assert (report.errors, report.warnings) == (0, 0)
    assert sorted(report.missions) == ["alpha", "beta", "gamma"]
    assert report.missions["beta"].status.value == "needs_you"
    assert report.missions["gamma"].title == "Write the docs"
    assert report.root == str(state_dir.resolve())


def test_problems_are_grouped_by_mission(state_dir: Path) -> None:
    resume(state_dir, "alpha").step("s7", "running")
    (state_dir / "missions/gamma/handoff.json").write_text("{")
    (state_dir / "stray.txt").write_text("x")
    report = check(state_dir)
    assert [p.code for p in report.missions["alpha"].problems] == ["unknown-step"]
    assert [p.code for p in report.missions["gamma"].problems] == ["bad-json"]
    assert report.missions["beta"].problems == []
    assert [(p.path, p.code) for p in report.workspace_problems] == [("stray.txt", "unknown-file")]
    assert (report.errors, report.warnings) == (2, 1)


def test_a_mission_named_workspace_keeps_its_problems(tmp_path: Path) -> None:
    """A mission id may be `workspace`: its problems are its own, not the directory's
    (they were dropped with the loose ones), and the loose ones stay loose."""
    mission(tmp_path, "workspace")
    (tmp_path / "missions/workspace/handoff.json").write_text("{")
    (tmp_path / "stray.txt").write_text("x")
    for jobs in (1, 2):
        report = check(tmp_path, jobs=jobs)
        assert [p.code for p in report.missions["workspace"].problems] == ["bad-json"]
        assert [p.path for p in report.workspace_problems] == ["stray.txt"]
        assert (report.errors, report.warnings) == (1, 1)


def test_unknown_file_inside_a_mission_is_reported(state_dir: Path) -> None:
    """Regression: unknown files under missions/<id>/ were dropped by check()."""
    (state_dir / "missions/alpha/notes.txt").write_text("x")
    (state_dir / "missions/alpha/plan/draft.json").write_text("{}")
    report = check(state_dir)
    found = {(p.path, p.code) for p in report.missions["alpha"].problems}
    assert found == {
        ("missions/alpha/notes.txt", "unknown-file"),
        ("missions/alpha/plan/draft.json", "unknown-file"),
    }
    assert report.warnings == 2 and report.errors == 0


def test_artifacts_are_verified(tmp_path: Path) -> None:
    m = mission(tmp_path, "m")
    good = m.artifact("report.txt", b"all green")
    bad = m.artifact("log.txt", b"original")
    m.evidence("s1", artifact=good)
    m.evidence("s1", artifact=bad)
    m.evidence("s2", artifact={"path": "gone.txt", "sha256": "0" * 64, "bytes": 1})
    (m.dir / "artifacts/log.txt").write_bytes(b"tampered")
    found = {(p.code, p.line) for p in check(tmp_path).missions["m"].problems}
    assert found == {("artifact-mismatch", 2), ("missing-artifact", 3)}


def test_parallel_check_matches_serial(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resume(state_dir, "alpha").step("nope", "running")
    (state_dir / "missions/beta/junk").write_text("x")
    serial = check(state_dir, jobs=1).to_json()
    monkeypatch.setattr(store.index.check, "PARALLEL_BYTES", 0)
    pools: list[tuple[int, int, bool]] = []
    progress: list[tuple[int, int]] = []

    class Pool(ProcessPoolExecutor):
        def __init__(self, workers: int) -> None:
            pools.append((workers, len(progress), gc.get_freeze_count() > 0))
            super().__init__(workers)

    monkeypatch.setattr(store.index.check, "_pool", Pool)
    parallel = check(state_dir, progress=lambda done, total: progress.append((done, total)), jobs=2)
    # the workers fork once a first task ran here (what every task builds first is built
    # once), with the parent's objects frozen for the collector; nothing stays frozen;
    # this process is one of the jobs: one worker besides it
    assert pools == [(1, 1, True)]
    assert gc.get_freeze_count() == 0
    assert parallel.to_json() == serial
    assert progress and progress[-1][0] == progress[-1][1]


def test_a_parallel_check_keeps_what_its_caller_froze(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hud check` freezes what its start-up made (the process ends with the check): a
    parallel check does not hand it back to the collector when it is done."""
    monkeypatch.setattr(store.index.check, "PARALLEL_BYTES", 0)
    gc.freeze()
    frozen = gc.get_freeze_count()
    check(state_dir, jobs=2)
    assert gc.get_freeze_count() >= frozen > 0


def test_a_parallel_check_runs_here_the_tasks_no_worker_started(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process takes tasks too (lightest first), each one no worker has started:
    with workers that never start one, it runs them all and reports what --jobs 1 does."""
    resume(state_dir, "alpha").step("nope", "running")
    serial = check(state_dir, jobs=1).to_json()
    monkeypatch.setattr(store.index.check, "PARALLEL_BYTES", 0)
    submitted: list[Future[object]] = []

    class Idle:
        """Workers that never start a task."""

        def __init__(self, workers: int) -> None:
            pass

        def __enter__(self) -> Idle:
            return self

        def __exit__(self, *_: object) -> None:
            pass

        def submit(self, *_: object) -> Future[object]:
            submitted.append(Future())
            return submitted[-1]

    monkeypatch.setattr(store.index.check, "_pool", Idle)
    assert check(state_dir, jobs=2).to_json() == serial
    assert len(submitted) == 2 and all(future.cancelled() for future in submitted)


def test_check_imports_no_ssh_library_until_a_key_is_read() -> None:
    """asyncssh is most of what `hud check` would import: a workspace with no signature
    never needs it (it is imported where a key or signature is read)."""
    code = "import sys, cli.main, store.index.check; print('asyncssh' in sys.modules)"
    imported = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert imported.strip() == "False"


def test_a_check_of_a_small_folder_imports_no_worker_processes(tmp_path: Path) -> None:
    """multiprocessing (~10 ms of a start) loads only for a check worth workers."""
    mission(tmp_path, "m")
    code = (
        "import sys; from cli.main import main; main(['check', sys.argv[1], '--json']); "
        "print('concurrent.futures.process' in sys.modules, file=sys.stderr)"
    )
    imported = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    ).stderr
    assert imported.strip() == "False"


def test_a_check_without_cached_imports_no_cache(tmp_path: Path) -> None:
    """What `hud check` does not use is not imported by it: the verified-prefix cache
    (`store.cache`, msgspec, platformdirs) loads only for `--cached`."""
    mission(tmp_path, "m").step("s1", "running")
    code = (
        "import sys; from cli.main import main; main(['check', *sys.argv[1:], '--json']); "
        "print(*sorted(m for m in sys.modules if m.split('.')[0] in "
        "('msgspec', 'platformdirs') or m.startswith('store.cache')), "
        "file=sys.stderr)"
    )

    def imported(*args: str) -> set[str]:
        ran = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return set(ran.stderr.split())

    assert imported() == set()
    assert {"store.cache", "msgspec"} <= imported("--cached")  # (so the probe can see them)


def test_a_check_opens_each_folder_of_a_mission_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check's task reads a mission's files through its folder's descriptor, opened
    once (`confined.held_folders`), not by walking from the root again for each file."""
    missions = 10
    for n in range(missions):
        mission(tmp_path, f"m{n}").step("s1", "running")
    opened: list[str] = []
    real_open = os.open

    def counted(path: object, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counted)
    report = check(tmp_path, jobs=1)
    assert report.errors == 0 and len(report.missions) == missions
    files = sum(1 for path in (tmp_path / "missions").rglob("*") if path.is_file())
    # each file once; each mission's folder and its plan/ twice (the walk, its task);
    # the root and missions/ once for the walk and once for each task (a mission each)
    assert len(opened) <= files + 6 * missions + 2
    assert opened.count("m3") == 2


def test_missions_are_split_into_tasks_of_similar_weight_heaviest_first() -> None:
    weights = {"a": 90, "b": 50, "c": 40, "d": 10, "e": 10}
    groups = store.index.check._chunks(weights, 3)
    assert sorted(m for group in groups for m in group) == sorted(weights)
    assert [sum(weights[m] for m in group) for group in groups] == [90, 60, 50]
    assert store.index.check._chunks({"a": 1}, 4) == [["a"]]


def test_cli_valid_exits_0(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(state_dir))
    assert code == 0
    assert "alpha  stale  Migrate the database" in out  # the real clock: 2025 is long ago
    assert out.rstrip().endswith("3 missions, 0 errors, 0 warnings: valid")


def test_cli_errors_exit_1_with_path_line_and_hint(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = state_dir / "missions/alpha/events.jsonl"
    lines = log.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b"running", b"verifying")
    log.write_bytes(b"\n".join(lines))
    code, out, _ = run(capsys, str(state_dir))
    assert code == 1
    assert "error  missions/alpha/events.jsonl:2  hash chain broken at seq 2" in out
    assert "fix: a line before this one was edited or removed" in out
    assert out.rstrip().endswith("invalid")


def test_cli_warnings_only_exit_0(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unterminated last line is a warning: an agent may be mid-write."""
    with open(state_dir / "missions/alpha/events.jsonl", "ab") as handle:
        handle.write(b'{"seq":3,')
    code, out, _ = run(capsys, str(state_dir))
    assert code == 0
    assert "warn   missions/alpha/events.jsonl:3  last line has no newline yet" in out
    assert "0 errors, 1 warning: valid" in out


def test_cli_no_such_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(tmp_path / "nope"))
    assert code == 2
    assert out == "" and "no such directory" in err


def test_cli_a_file_is_not_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    assert run(capsys, str(tmp_path / "file"))[0] == 2


def test_cli_json(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (state_dir / "missions/beta/constraints.toml").write_text("schema = 1\n[budget\n")
    (state_dir / "stray.txt").write_text("x")
    code, out, _ = run(capsys, str(state_dir), "--json")
    assert code == 1
    report = json.loads(out)
    assert set(report) == {"root", "valid", "errors", "warnings", "problems", "missions"}
    assert (report["valid"], report["errors"], report["warnings"]) == (False, 1, 1)
    assert report["problems"] == [
        {
            "path": "stray.txt",
            "line": None,
            "code": "unknown-file",
            "message": "file is not part of the layout",
            "hint": report["problems"][0]["hint"],
            "severity": "warn",
        }
    ]
    assert list(report["missions"]) == ["alpha", "beta", "gamma"]
    beta = report["missions"]["beta"]
    assert set(beta) >= {"status", "title", "problems"}
    assert beta["status"] == "needs_you"
    assert [(p["path"], p["line"], p["code"]) for p in beta["problems"]] == [
        ("missions/beta/constraints.toml", 2, "bad-toml")
    ]


def test_cli_json_of_a_valid_workspace(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(state_dir), "--json")
    report = json.loads(out)
    assert code == 0 and report["valid"] is True and report["errors"] == 0
    assert {m: v["status"] for m, v in report["missions"].items()} == {
        "alpha": "stale",  # `hud check` uses the real clock: the fixture is from 2025
        "beta": "needs_you",
        "gamma": "done",
    }


def test_cli_output_makes_agent_text_visible(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A title with an escape sequence is printed visibly, never as raw control bytes."""
    resume(state_dir, "alpha").intent("evil \x1b[2J title")
    code, out, _ = run(capsys, str(state_dir))
    assert code == 0
    assert "\x1b" not in out
