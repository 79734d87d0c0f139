"""The scan's walk and the documents' stat open each folder once, through its parent's
descriptor (never from the root again for every folder), and still refuse symlinks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from store.format import confined
from store.format.confined import held_folders, lstat_files, read_file
from store.format.problems import Problem
from store.index.workspace import Workspace
from tests.factory import mission

MISSIONS = 20


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every `os.open` from now on, by name."""
    seen: list[str] = []
    real = os.open

    def counted(path: Any, *args: Any, **kwargs: Any) -> int:
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted)
    return seen


def state(tmp_path: Path) -> Path:
    root = tmp_path / "state"
    for n in range(MISSIONS):
        mission(root, f"m{n:02d}").step("s1", "running")
    return root


def test_the_walk_opens_each_folder_once(tmp_path: Path, opens: list[str]) -> None:
    root = state(tmp_path)
    opens.clear()
    walked = list(Workspace(root).walk())
    assert "missions/m07/plan/v1.json" in walked and "missions/m07/events.jsonl" in walked
    # the root, missions/, and each mission's folder and its plan/ folder
    assert len(opens) <= 2 + 2 * MISSIONS


def test_the_walk_yields_a_symlinked_folder_and_never_enters_it(tmp_path: Path) -> None:
    root = state(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "plan").mkdir(parents=True)
    (elsewhere / "plan/v9.json").write_text("{}")
    (root / "missions/m03/plan").rename(tmp_path / "old-plan")
    (root / "missions/m03/plan").symlink_to(elsewhere / "plan")
    walked = list(Workspace(root).walk())
    assert "missions/m03/plan" in walked
    assert not [rel for rel in walked if rel.startswith("missions/m03/plan/")]


def test_documents_are_stated_through_their_folders_held_once(
    tmp_path: Path, opens: list[str]
) -> None:
    root = state(tmp_path)
    (tmp_path / "outside.toml").write_text("")
    (root / "missions/m05/intent.toml").unlink()
    (root / "missions/m05/intent.toml").symlink_to(tmp_path / "outside.toml")
    paths = sorted(
        f"missions/m{n:02d}/{name}"
        for n in range(MISSIONS)
        for name in ("intent.toml", "constraints.toml", "plan/v1.json")
    )
    opens.clear()
    found = lstat_files(root, paths)
    assert len(opens) <= 2 + 2 * MISSIONS
    assert "missions/m05/intent.toml" not in found  # a symlink: no regular file
    assert len(found) == len(paths) - 1
    assert found["missions/m06/plan/v1.json"] == (root / "missions/m06/plan/v1.json").lstat()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_held_folders_refuse_what_a_walk_refuses_and_close_all_they_hold(
    tmp_path: Path, opens: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within `held_folders` a mission's files are opened through its folder, opened once;
    a symlink or a FIFO on the way is the same problem as without; at most HELD_FOLDERS
    stay open, and none once it ends."""
    root = state(tmp_path)
    (root / "missions/m03/plan").rename(tmp_path / "old-plan")
    (root / "missions/m03/plan").symlink_to(tmp_path / "old-plan")
    os.mkfifo(root / "missions/m04/handoff.toml")
    asked = [
        f"missions/m{n:02d}/{name}"
        for n in range(MISSIONS)
        for name in ("intent.toml", "constraints.toml", "plan/v1.json", "handoff.toml")
    ] + ["/missions/m01/intent.toml", "missions//m01/intent.toml", "missions/./m01/intent.toml"]
    unheld = [read_file(root, rel, 1 << 20) for rel in asked]
    monkeypatch.setattr(confined, "HELD_FOLDERS", 8)
    before = open_descriptors()
    opens.clear()
    with held_folders():
        held = [read_file(root, rel, 1 << 20) for rel in asked]
        assert open_descriptors() - before <= 8
    assert open_descriptors() == before
    assert held == unheld
    link = held[asked.index("missions/m03/plan/v1.json")]
    fifo = held[asked.index("missions/m04/handoff.toml")]
    assert isinstance(link, Problem) and link.path == "missions/m03/plan"
    assert link.code == "symlink-escape"
    assert isinstance(fifo, Problem) and fifo.code == "not-a-file"
    assert all(isinstance(found, Problem) and found.code == "unsafe-path" for found in held[-3:])
    assert opens.count("m07") == 1  # m07 and its plan/ held: one open for its 3 files
    assert opens.count("missions") == 2  # held; and walked to again to say why m03/plan
