"""A HUD opened again shows the rows the last one kept (store.cache.rows) before the store,
pydantic with it, is imported; the scan then replaces each with the one it derives. A
HUD that settled keeps its rows for the next start."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hud.app import HudApp
from store.cache.rows import RACY_NS, Began, load_rows, save_rows
from store.format.row import MissionSummary
from store.index.workspace import Workspace
from tests.factory import three_missions
from tests.fresh import fresh_stdout
from tests.hud.conftest import until

REOPEN = """
import asyncio, sys
from pathlib import Path
from hud.app import HudApp

class Probe(HudApp):
    def _show_last_rows(self, rows, drawn):
        loaded = [m for m in ("pydantic", "store.index.workspace") if m in sys.modules]
        print("kept rows", len(rows), "loaded", *loaded)
        super()._show_last_rows(rows, drawn)

async def main():
    app = Probe(Path(sys.argv[1]))
    async with app.run_test(size=(100, 24)) as pilot:
        await asyncio.wait_for(app.scanned.wait(), 60)
        await pilot.pause()
        print("derived", app.summaries == app.workspace.rows())

asyncio.run(main())
"""


def kept(root: Path) -> list[MissionSummary]:
    return [row for rows in load_rows(root) for row in rows]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("HUD_CACHE_DIR", str(folder))
    return folder


def test_a_reopened_hud_shows_the_kept_rows_before_the_store_loads(
    tmp_path: Path, cache: Path
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    workspace = Workspace(root)
    workspace.scan()
    settled = time.time_ns() + 2 * RACY_NS  # every file written so far is settled by then
    began = Began(settled, time.monotonic_ns() + 2 * RACY_NS)
    assert save_rows(root, list(workspace.rows().values()), began)
    assert fresh_stdout(REOPEN, str(root)).splitlines() == ["kept rows 3 loaded", "derived True"]


async def test_a_settled_hud_keeps_its_rows(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    three_missions(root)
    time.sleep(1.1)  # the files settle before the scan begins (store.cache.rows.RACY_NS)
    app = HudApp(root, live=False)
    async with app.run_test(size=(100, 24)) as pilot:
        await until(pilot, lambda: len(kept(root)) == 3, timeout=20)
        assert sorted(kept(root), key=lambda row: row.id) == sorted(
            app.summaries.values(), key=lambda row: row.id
        )


async def test_a_read_only_hud_keeps_no_rows(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    three_missions(root)
    time.sleep(1.1)
    app = HudApp(root, live=False, read_only=True)
    async with app.run_test(size=(100, 24)) as pilot:
        await until(pilot, app.scanned.is_set, timeout=20)
        await pilot.pause(0.5)
    assert kept(root) == []
