"""The Replay tab's feed starts from the cache, then hashes what it took on trust: a log
edited in place behind an append is read again and its frame shown again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from hud.app import HudApp
from hud.replaying import SCAN_LINES, ReplayFeed
from store.analysis.replay import CHECKPOINT_LINES, Frame
from tests.factory import T0, Mission, chain, mission, stamp
from tests.hud.test_replay_review import open_tab, shows

LINES = CHECKPOINT_LINES + 6
"""Past the first checkpoint: a frame after it starts from the cache."""


def edited_behind_an_append(built: Mission) -> None:
    """s2 'running' (line 10, before the checkpoint) becomes 'blocked' in place (the same
    size), then one event is appended."""
    log = built.dir / "events.jsonl"
    data = log.read_bytes()
    at = data.index(b'"step":"s2","plan_version":1,"state":"running"')
    edited = data[:at] + data[at:].replace(b'"running"', b'"blocked"', 1)
    log.write_bytes(edited)
    built.event("heartbeat")


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Mission:
    """gamma: s1 running, s2 running at line 10, heartbeats to line LINES; replayed once
    (kept in a cache folder of the test's own)."""
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "cache"))
    built = mission(tmp_path / "state", "gamma")
    records = []
    for n in range(LINES):
        fields = {"at": stamp(T0 + timedelta(seconds=n)), "actor": "agent"}
        if n in (0, 9):
            step = "s1" if n == 0 else "s2"
            fields.update(type="step", step=step, plan_version=1, state="running")
        else:
            fields.update(type="heartbeat")
        records.append(fields)
    (built.dir / "events.jsonl").write_bytes(chain(records))
    built.clock = T0 + timedelta(seconds=LINES)
    assert ReplayFeed(built.root, built.id).read(None)[1] == LINES
    return built


def s2(frame: Frame | None) -> str | None:
    assert frame is not None
    return next(step.state for step in frame.moment.steps if step.id == "s2")


def test_the_feed_hashes_the_cached_prefix_and_reads_an_edited_log_again(
    cached: Mission,
) -> None:
    edited_behind_an_append(cached)
    feed = ReplayFeed(cached.root, cached.id)
    frame, last = feed.read(None)
    assert last == LINES + 1 and s2(frame) == "running"  # the checkpoint, on trust
    assert not feed.verify()
    frame, last = feed.read(None)
    assert last == LINES + 1 and s2(frame) == "blocked"
    assert feed.verify()


def test_an_unchanged_log_is_verified(cached: Mission) -> None:
    feed = ReplayFeed(cached.root, cached.id)
    frame, last = feed.read(None)
    assert last == LINES and s2(frame) == "running"
    assert feed.verify() and s2(feed.read(None)[0]) == "running"


async def test_the_tab_shows_the_edited_log_once_hashed(
    cached: Mission, make_app: Callable[..., HudApp]
) -> None:
    for other in ("alpha", "beta"):
        mission(cached.root, other)
    edited_behind_an_append(cached)
    app = make_app(cached.root, live=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_tab(pilot, app, "7")
        text = await shows(pilot, app, f"seq {LINES + 1} of {LINES + 1}", "s2  ■ blocked")
        assert "running" not in line_of_step(text, "s2")


def line_of_step(text: str, step: str) -> str:
    return next(line for line in text.splitlines() if line[2:].startswith(f"{step} "))


async def test_a_read_only_hud_replays_from_the_cache_and_never_writes_it(
    tmp_path: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "cache"))
    built = mission(tmp_path / "state", "gamma")
    for other in ("alpha", "beta"):
        mission(built.root, other)
    built.step("s1", "running")
    built.clock = T0 + timedelta(seconds=5)
    app = make_app(built.root, live=False, read_only=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_tab(pilot, app, "7")
        await shows(pilot, app, "seq 1 of 1")
    assert not list((tmp_path / "cache").glob("*.sealed"))


def landmarked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Mission:
    """gamma: heartbeats past a landmark scan's chunk, s1 failed at line SCAN_LINES + 10."""
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "cache"))
    built = mission(tmp_path / "state", "gamma")
    records = []
    for n in range(SCAN_LINES + 50):
        fields = {"at": stamp(T0 + timedelta(seconds=n)), "actor": "agent"}
        if n in (0, 9, SCAN_LINES + 9):
            step, state = ("s2", "running") if n == 9 else ("s1", "running" if n == 0 else "failed")
            fields.update(type="step", step=step, plan_version=1, state=state)
        else:
            fields.update(type="heartbeat")
        records.append(fields)
    (built.dir / "events.jsonl").write_bytes(chain(records))
    return built


def failures(feed: ReplayFeed) -> list[tuple[int, str]]:
    return [(mark.seq, mark.label) for mark in feed.landmarks.all() if mark.kind == "failure"]


def test_the_landmarks_are_kept_and_come_with_the_first_frame_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = landmarked(tmp_path, monkeypatch)
    first = ReplayFeed(built.root, built.id)
    bearings = first.aimed(None, None)[2]
    assert bearings is not None and bearings.scanned == SCAN_LINES + 50  # fed by the fold
    assert first.verify() and not first.scan()  # none left to read: kept in the cache
    assert failures(first) == [(SCAN_LINES + 10, "step s1 failed")]
    again = ReplayFeed(built.root, built.id)
    _, last, bearings = again.aimed(None, None)
    assert again._replay is not None and again._replay.trusting  # resumed: no line folded
    assert bearings is not None and bearings.scanned == last == SCAN_LINES + 50
    assert not again.scan()  # none left to read
    assert failures(again) == failures(first)


def test_landmarks_kept_for_a_prefix_edited_since_are_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = landmarked(tmp_path, monkeypatch)
    first = ReplayFeed(built.root, built.id)
    first.aimed(None, None)
    assert first.verify() and not first.scan()  # kept in the cache
    edited_behind_an_append(built)  # s2 blocked at line 10: a failure
    again = ReplayFeed(built.root, built.id)
    again.aimed(None, None)
    assert not again.verify()  # the prefix changed: read anew, the landmarks too
    again.aimed(None, None)
    again.scan()
    assert failures(again) == [(10, "step s2 blocked"), (SCAN_LINES + 10, "step s1 failed")]
