"""store.index.prefetch: a forked child reads .small/ while the HUD starts; the scan
adopts its result only after checking every file against the disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from store.format.row import MissionSummary
from store.index import prefetch
from store.index.workspace import Workspace, utc_now
from store.sources.small import workspace as small_workspace
from tests.small_support import VALID, copy_fixture, spy_parse_yaml

APPENDED = (
    "    - command: echo appended after the child read it\n"
    "      evidence: appended during start-up\n"
    "      status: completed\n"
    "      task_id: task-7\n"
    '      timestamp: "2026-04-02T08:00:00.000000001Z"\n'
)


def _in_process(root: Path) -> small_workspace.SmallWorkspace:
    small = small_workspace.SmallWorkspace(root.resolve())
    small.load()
    return small


def test_the_child_reads_what_the_scan_would(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    started = prefetch.start(root)
    assert started is not None
    small = started.result()
    assert small is not None
    expected = _in_process(root)
    assert [e.line for e in small.entries] == [e.line for e in expected.entries]
    assert len(small.entries) == 16
    assert small.problems() == expected.problems()
    assert small.tasks == expected.tasks
    assert started.result() is None  # taken once
    started.close()


def test_the_row_comes_first(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    started = prefetch.start(root)
    assert started is not None
    row = started.row()
    assert isinstance(row, MissionSummary)
    assert row.id == "small:valid" and row.current_step == "task-5"
    assert row.problems == 0
    assert started.row() is None  # taken once
    small = started.result()
    assert small is not None and len(small.entries) == 16
    workspace = Workspace(root.resolve())
    workspace.load_settings()
    assert row == small.summary(utc_now(), workspace.settings)


def test_the_row_is_shown_without_pydantic(tmp_path: Path) -> None:
    """Taking the row imports neither pydantic nor its core (plain data): the HUD shows
    it before it has imported the store."""
    root = copy_fixture(VALID, tmp_path)
    script = (
        "import sys; from pathlib import Path; from store.index import prefetch\n"
        "started = prefetch.start(Path(sys.argv[1])); row = started.row()\n"
        "print(row.id, sorted(m for m in sys.modules if m.startswith('pydantic')))\n"
        "started.close()\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, check=True
    )
    assert shown.stdout.split() == ["small:valid", "[]"]


def test_the_scan_rereads_what_changed_after_the_child_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_fixture(VALID, tmp_path)
    started = prefetch.start(root)
    assert started is not None
    small = started.result()
    with (root / ".small" / "progress.small.yml").open("a") as handle:
        handle.write(APPENDED)
    parsed = spy_parse_yaml(monkeypatch)
    workspace = Workspace(root)
    workspace.use_prefetched(small)
    assert workspace.small is small
    assert len(small.entries) == 17  # the appended entry, parsed alone
    assert parsed == [".small/progress.small.yml"]  # the five unchanged files are kept
    assert small.entries[-1].command == "echo appended after the child read it"


def test_no_small_folder_no_child(tmp_path: Path) -> None:
    assert prefetch.start(tmp_path) is None


def test_a_child_that_died_leaves_the_scan_to_parse(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    started = prefetch.start(root)
    assert started is not None
    started.close()  # killed (or already done) and reaped: nothing to take
    assert started.result() is None
    workspace = Workspace(root)
    workspace.use_prefetched(None)
    assert workspace.small is not None and not workspace.small.present


def test_a_workspace_for_another_root_is_not_used(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    workspace = Workspace(other)
    theirs = _in_process(root)
    workspace.use_prefetched(theirs)
    assert workspace.small is not theirs


def test_close_leaves_no_process(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    started = prefetch.start(root)
    assert started is not None
    pid = started._pid
    started.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_row_loads_without_pydantic() -> None:
    """The preview row is shown before the HUD imports the store: its module is light."""
    code = "import sys, store.format.row; print(sorted(m for m in sys.modules if 'pydantic' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
