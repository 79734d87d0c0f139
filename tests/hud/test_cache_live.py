"""The live view over the verified-prefix cache (store.cache): a reopened directory reads
its logs from where they were verified, says so ("cached, not verified") until the
background scrub has hashed them, and an in-place edit hidden behind an append is
reported within 30 s of first paint."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import hud.app
import hud.live
from hud.app import HudApp
from store.cache import documents
from store.index.workspace import Workspace
from store.sources.native import cached
from tests.factory import resume, three_missions
from tests.hud.conftest import until
from widgets.header import HudHeader

UNVERIFIED = "cached, not verified"


def header_text(app: HudApp) -> str:
    return str(app.screen.query_one(HudHeader).render())


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three missions, and a cache of this test's own that keeps even their short logs."""
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cached, "MIN_BYTES", 1)  # the fixture's logs are short
    state = tmp_path / "state"
    three_missions(state)
    return state


async def test_an_edit_inside_the_cached_prefix_with_an_append_is_reported_within_30_s(
    root: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed = Workspace.cached(root)
    indexed.scan()
    assert indexed.flush_cache(prune=True) > 0
    log = root / "missions/alpha/events.jsonl"
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"actor":"agent"', b'"actor":"Agent"', 1))  # line 1, in place
    resume(root, "alpha").step("s2", "running")  # and an append chained to the last line
    monkeypatch.setattr(hud.live, "SCRUB_SECONDS", 5.0)  # time to see the header say so

    app = make_app(root)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        painted = time.monotonic()
        alpha = app.workspace.missions["alpha"]
        assert alpha.events is not None and alpha.events.trusted is not None  # from the cache
        assert "chain-broken" not in {p.code for p in alpha.problems()}
        await until(pilot, lambda: UNVERIFIED in header_text(app))
        codes = lambda: {p.code for p in app.workspace.missions["alpha"].problems()}  # noqa: E731
        await until(pilot, lambda: "chain-broken" in codes(), timeout=30)
        assert time.monotonic() - painted < 30
        await until(pilot, lambda: UNVERIFIED not in header_text(app))
        assert app.workspace.trusting() == 0
        assert app.summaries["alpha"].problems == len(app.workspace.missions["alpha"].problems())


async def test_an_unchanged_directory_reopens_from_the_cache_and_is_then_verified(
    root: Path, tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    first = make_app(root)
    async with first.run_test() as pilot:
        await until(pilot, lambda: first.scanned.is_set())
        fresh = dict(first.summaries)
        await until(pilot, lambda: any((tmp_path / "cache").glob("prefix-*")))
    again = make_app(root)
    async with again.run_test() as pilot:
        await until(pilot, lambda: again.scanned.is_set())
        assert again.workspace.trusting() > 0
        assert again.summaries == fresh
        await until(pilot, lambda: again.workspace.trusting() == 0, timeout=30)
        assert again.summaries == fresh


async def test_a_read_only_hud_reads_the_cache_and_never_writes_it(
    root: Path, tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(root, read_only=True)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set() and app.workspace.trusting() == 0)
        await pilot.pause(0.5)
    assert not list((tmp_path / "cache").glob("prefix-*"))
    indexed = Workspace.cached(root)
    indexed.scan()
    assert indexed.flush_cache(prune=True) > 0
    again = make_app(root, read_only=True)
    async with again.run_test() as pilot:
        await until(pilot, lambda: again.scanned.is_set())
        assert again.workspace.trusting() > 0  # read all the same


async def test_a_reopen_derives_each_row_once_and_shows_what_a_fresh_open_shows(
    root: Path, tmp_path: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "RACY_NS", 0)  # written before the first open, changed after
    first = make_app(root)
    async with first.run_test() as pilot:
        await until(pilot, lambda: first.scanned.is_set())
        await until(pilot, lambda: any((tmp_path / "cache").glob("prefix-*")))
    intent = root / "missions/beta/intent.toml"
    intent.write_text(intent.read_text().replace("Deploy", "Replay"))  # between the opens

    derived: Counter[str] = Counter()
    row = Workspace.row

    def counted(workspace: Workspace, row_id: str) -> object:
        derived[row_id] += 1
        return row(workspace, row_id)

    monkeypatch.setattr(Workspace, "row", counted)
    again = make_app(root)
    async with again.run_test() as pilot:
        await until(pilot, lambda: again.scanned.is_set())
        assert again.workspace.trusting() > 0  # from the cache
        assert derived == Counter({"alpha": 1, "beta": 1, "gamma": 1})
        warm = dict(again.summaries)
    monkeypatch.setenv("HUD_CACHE_DIR", "off")
    fresh = make_app(root)
    async with fresh.run_test() as pilot:
        await until(pilot, lambda: fresh.scanned.is_set())
        assert fresh.summaries == warm
        assert warm["beta"].title == "Replay the service"


async def test_the_scan_counts_no_log_held_on_trust_until_it_is_done(
    root: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hud.app, "FIRST_CHUNK", 1)  # a chunk a mission: the header each time
    monkeypatch.setattr(hud.app, "SCAN_CHUNK", 1)
    indexed = Workspace.cached(root)
    indexed.scan()
    assert indexed.flush_cache(prune=True) > 0
    app = make_app(root)
    counted_while_scanning: list[bool] = []
    trusting = Workspace.trusting

    def counted(workspace: Workspace) -> int:
        counted_while_scanning.append(not app.scanned.is_set())
        return trusting(workspace)

    monkeypatch.setattr(Workspace, "trusting", counted)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await until(pilot, lambda: UNVERIFIED in header_text(app) or app.unverified_logs == 0)
    assert counted_while_scanning and not any(counted_while_scanning)
