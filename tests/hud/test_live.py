"""The live view tells the truth: the watcher's health shows, the directory coming back
is read again, tampering is found while the HUD runs, and counts equal their lists."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import store.index.workspace
from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen
from hud.screens.problems import ProblemsScreen
from store.index.check import check
from store.index.workspace import Workspace
from store.writers.agent import AgentWriter
from tests.factory import mission, three_missions
from tests.hud.conftest import until
from widgets.header import HudHeader


def header_text(app: HudApp) -> str:
    return str(app.screen.query_one(HudHeader).render())


async def test_the_directory_gone_and_back(tmp_path: Path, make_app: Callable[..., HudApp]) -> None:
    root = tmp_path / "state"
    three_missions(root)
    app = make_app(root)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set() and "● live" in header_text(app))
        shutil.rmtree(root)
        await until(pilot, lambda: "state/ is gone" in header_text(app))
        assert "● live" not in header_text(app)
        root.mkdir()
        mission(root, "delta").step("s1", "running")
        await until(pilot, lambda: set(app.summaries) == {"delta"}, timeout=10)
        await until(pilot, lambda: "● live" in header_text(app))


async def test_the_directory_moved_away_and_another_in_its_place(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    """A move sends the watcher nothing: the HUD sees it all the same, and reads the
    folder that takes the name afterwards."""
    root = tmp_path / "state"
    three_missions(root)
    app = make_app(root)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set() and "● live" in header_text(app))
        root.rename(tmp_path / "moved")
        await until(pilot, lambda: "state/ is gone" in header_text(app))
        other = tmp_path / "other"
        mission(other, "delta").step("s1", "running")
        other.rename(root)
        await until(pilot, lambda: set(app.summaries) == {"delta"}, timeout=10)
        await until(pilot, lambda: "● live" in header_text(app))


async def test_an_in_place_edit_is_a_problem_while_the_hud_runs(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    three_missions(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set() and "● live" in header_text(app))
        log = tmp_path / "missions/alpha/events.jsonl"
        data = log.read_bytes()
        log.write_bytes(data.replace(b'"actor":"agent"', b'"actor":"Agent"', 1))  # size kept
        codes = lambda: {p.code for p in app.workspace.missions["alpha"].problems()}  # noqa: E731
        await until(pilot, lambda: "chain-broken" in codes())
        assert app.summaries["alpha"].problems == len(app.workspace.missions["alpha"].problems())


async def test_a_nested_artifact_written_while_the_hud_runs_is_no_problem(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    """`hud agent evidence --artifact-name run-1/out.txt` with the HUD open: the watcher
    reports the folder run-1 on its own; the live view must still say what `hud check`
    says (valid, done), not 'run-1 is a folder, not a regular file' (needs you)."""
    three_missions(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set() and "● live" in header_text(app))
        assert app.workspace.status("gamma").value == "done"
        writer = AgentWriter(tmp_path, "gamma", "agent")
        for name in ("run-1/out.txt", "logs/deep/er/run.txt"):
            writer.evidence("s1", "saw", "ran", "works", artifact=b"x\n", artifact_name=name)
        gamma = lambda: app.workspace.missions["gamma"]  # noqa: E731
        wanted = {
            "missions/gamma/artifacts/run-1/out.txt",
            "missions/gamma/artifacts/logs/deep/er/run.txt",
        }
        await until(
            pilot, lambda: wanted <= gamma().artifacts and not gamma().unchecked_artifacts()
        )
        await pilot.pause(0.5)  # late watcher events for the folders
        assert gamma().problems() == []
        assert app.workspace.status("gamma").value == "done"
        assert check(tmp_path, jobs=1).missions["gamma"].problems == []


async def test_keys_are_answered_while_a_huge_append_is_folded(
    tmp_path: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fold goes a step at a time: a key typed mid-way is handled between steps."""
    monkeypatch.setattr(store.index.workspace, "LOG_STEP", 16 * 1024)
    read_ahead = store.index.workspace.Workspace.read_ahead

    def slow_read_ahead(self: store.index.workspace.Workspace, relpaths: Any) -> Any:
        time.sleep(0.05)  # a slow disk (in the reading thread): the fold takes ~2 s
        return read_ahead(self, relpaths)

    monkeypatch.setattr(store.index.workspace.Workspace, "read_ahead", slow_read_ahead)
    three_missions(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        big = mission(tmp_path, "big")
        for n in range(3000):
            big.step("s1", "running", reason=f"tick {n}")
        app.wrote(["missions/big"])
        await until(pilot, lambda: "big" in app.workspace.missions)
        reader = app.workspace.missions["big"].events
        assert reader is not None
        size = (tmp_path / "missions/big/events.jsonl").stat().st_size
        assert reader.offset < size  # still folding
        await pilot.press("a")
        assert isinstance(app.screen, ApprovalsScreen)
        assert reader.offset < size  # answered between two steps, not after the fold
        await until(pilot, lambda: reader.offset == size, timeout=30)


def counted(text: str, pattern: str) -> int:
    found = re.search(pattern, text)
    return int(found.group(1)) if found else 0


async def test_header_counts_equal_the_lists_they_open(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    three_missions(tmp_path)
    shutil.copytree(
        Path(__file__).resolve().parents[1] / "fixtures/loopexec/runs/.loopexec",
        tmp_path / ".loopexec",
    )
    (tmp_path / "missions/alpha/notes.txt").write_text("stray")
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:

        def drawn() -> bool:  # the scan's last frame, not the one before it
            shown = header_text(app)
            return bool(
                counted(shown, r"\? (\d+) approvals") and counted(shown, r"⚠ (\d+) problem")
            )

        await until(pilot, lambda: app.scanned.is_set() and drawn())
        header = header_text(app)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))
        await pilot.pause()
        assert isinstance(app.screen, ApprovalsScreen)
        rows = app.screen.table.row_count
        assert counted(header, r"\? (\d+) approvals") == rows
        await pilot.press("escape", "exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, ProblemsScreen))
        fresh = Workspace(tmp_path, app.workspace.clock)
        fresh.scan()
        assert counted(header, r"⚠ (\d+) problem") == len(fresh.problems())


async def test_a_waiter_that_dies_shows_nobody_waiting_without_a_file_change(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    """A lock drops with its process and the watcher hears nothing: the HUD tests the
    held leases again as time passes, and the queue then says "nobody waiting"."""
    from store.derivation.lease import Lease
    from store.index.approval_checks import approval_queue

    filed = mission(tmp_path, "alpha").intent().plan()
    lease = Lease.take(tmp_path, "alpha", "r1")
    filed.request("r1")
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set() and "● live" in header_text(app))
        queued = lambda: approval_queue(app.workspace, app.now())  # noqa: E731
        assert [item.nobody_waiting for item in queued()] == [None]
        lease.release()  # as the kernel does when the waiter dies
        await until(pilot, lambda: queued()[0].nobody_waiting is not None, timeout=5)
        app.push_screen(ApprovalsScreen())
        await until(pilot, lambda: "nobody waiting" in _table_text(app))


def _table_text(app: HudApp) -> str:
    from widgets.request_view import QueueTable

    tables = app.screen.query(QueueTable)
    if not tables:
        return ""
    table = tables.first()
    return " ".join(str(cell) for row in range(table.row_count) for cell in table.get_row_at(row))
