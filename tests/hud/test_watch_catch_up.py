"""The watcher starts once the scan is done (arming it holds a core for a while at
10,000 missions), so what changed between the scan's walk and the watcher's start has
no event of its own: the HUD catches it up once the watcher is armed (`Live.catch_up`,
`Workspace.changed_since`). Nothing is missed: an append, a new mission, a file gone."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import pytest

import store.index.watch
import store.index.workspace as workspace_module
from hud.app import HudApp
from store.index.workspace import Workspace
from tests.factory import mission, resume, three_missions
from tests.hud.conftest import until


async def test_what_changed_before_the_watcher_armed_is_folded(
    tmp_path: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    three_missions(tmp_path)
    arming = asyncio.Event()

    async def slow_watcher(
        root: Path,
        stop: asyncio.Event | None = None,
        also: Mapping[str, Path] | None = None,
        armed: Callable[[], None] | None = None,
    ) -> AsyncIterator[set[str]]:
        """A watcher that reports nothing, and is armed only once the test says so."""
        await arming.wait()
        if armed is not None:
            armed()
        await (stop or asyncio.Event()).wait()
        for batch in ():
            yield batch

    monkeypatch.setattr(store.index.watch, "watch_batches", slow_watcher)
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        alpha = lambda: app.workspace.missions["alpha"]  # noqa: E731
        assert alpha().step_latest["s1"].state == "running"
        resume(tmp_path, "alpha").step("s1", "blocked", reason="waiting on a fix")
        mission(tmp_path, "delta", "Came during the start").step("s1", "running")
        (tmp_path / "missions/gamma/handoff.json").unlink()
        await pilot.pause(0.3)
        assert alpha().step_latest["s1"].state == "running"  # no event: not folded yet
        arming.set()
        await until(pilot, lambda: alpha().step_latest["s1"].state == "blocked")
        await until(pilot, lambda: "delta" in app.summaries)
        await until(pilot, lambda: app.workspace.missions["gamma"].handoff is None)


def test_changed_since_names_what_came_went_or_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_module, "RACY_NS", 200_000_000)  # a file's time lags a tick
    three_missions(tmp_path)
    workspace = Workspace(tmp_path)
    walked = set(workspace.walk())
    time.sleep(0.3)
    since = time.time_ns()
    assert workspace.changed_since(walked, since) == set()
    resume(tmp_path, "alpha").step("s2", "running")
    mission(tmp_path, "delta").intent()
    (tmp_path / "missions/gamma/handoff.json").unlink()
    changed = workspace.changed_since(walked, since)
    delta = {rel for rel in workspace.walk() if rel.startswith("missions/delta/")}
    assert "missions/delta/intent.toml" in delta
    assert changed == {"missions/alpha/events.jsonl", "missions/gamma/handoff.json"} | delta
    os.utime(tmp_path / "missions/beta/intent.toml", ns=(0, 0))  # mtime set back: ctime moves
    assert "missions/beta/intent.toml" in workspace.changed_since(walked, since)
