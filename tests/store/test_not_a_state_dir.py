"""A folder of something else is one problem that says so, for the live view as for
`hud check`; as soon as `missions/` exists, loose entries are each a problem again."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.index.check import check
from store.index.workspace import Workspace


def _codes(root: Path) -> tuple[list[str], list[str]]:
    workspace = Workspace(root)
    workspace.scan()
    live = sorted(problem.code for problem in workspace.problems())
    checked = sorted(problem.code for problem in check(root).all_problems())
    return live, checked


@pytest.mark.parametrize("entries", [["notes.txt"], ["notes.txt", "src/", "build/", "a.py"]])
def test_a_folder_of_other_things_is_one_problem(tmp_path: Path, entries: list[str]) -> None:
    for entry in entries:
        if entry.endswith("/"):
            (tmp_path / entry).mkdir()
        else:
            (tmp_path / entry).write_text("x\n")
    live, checked = _codes(tmp_path)
    assert live == checked == ["not-a-state-dir"]
    (tmp_path / "missions").mkdir()
    live, checked = _codes(tmp_path)
    assert live == checked and len(live) == len(entries)
    assert set(live) <= {"unknown-file", "unknown-folder"}


def test_an_empty_folder_has_no_problem(tmp_path: Path) -> None:
    assert _codes(tmp_path) == ([], [])


def test_the_live_view_follows_missions_coming_and_going(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    workspace = Workspace(tmp_path)
    workspace.scan()
    assert [p.code for p in workspace.problems()] == ["not-a-state-dir"]
    (tmp_path / "missions").mkdir()
    workspace.apply(["missions"])
    assert [p.code for p in workspace.problems()] == ["unknown-file"]
    (tmp_path / "missions").rmdir()
    workspace.apply(["missions"])
    assert [p.code for p in workspace.problems()] == ["not-a-state-dir"]
