"""Documents from the cache (store.cache.documents): a reopen parses only the documents
that changed, a document is reused only while its device, inode, size, mtime and ctime
are all as when it was parsed (and it had settled before it was read), and a warm open
gives exactly what a fresh one gives (HUD_CACHE_DIR=off), documents changed between
opens included."""

from __future__ import annotations

import os
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from simulator.runner import Runner
from store.cache import documents
from store.format import load
from store.format.records import Intent, Plan
from store.index.workspace import Workspace
from tests.factory import three_missions

NOW = datetime(2031, 1, 1, tzinfo=UTC)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own; documents kept however recently written (each
    test writes its files before an open and changes them only after it)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("HUD_CACHE_DIR", str(folder))
    monkeypatch.setattr(documents, "RACY_NS", 0)
    return folder


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The documents parsed from their bytes, by path, from now on."""
    counted: Counter[str] = Counter()
    parse = load.parse_document

    def counting(relpath: str, data: bytes, model: Any) -> Any:
        counted[relpath] += 1
        return parse(relpath, data, model)

    monkeypatch.setattr(load, "parse_document", counting)
    return counted


def open_warm(root: Path) -> Workspace:
    """A HUD's open: the cache read, the directory scanned, what was read kept."""
    workspace = Workspace.cached(root, lambda: NOW)
    workspace.scan()
    workspace.flush_cache(prune=True)
    return workspace


def open_fresh(root: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    with monkeypatch.context() as patch:
        patch.setenv("HUD_CACHE_DIR", "off")
        workspace = Workspace.cached(root, lambda: NOW)
        assert workspace.cache is None
        workspace.scan()
    return workspace


def same(warm: Workspace, fresh: Workspace) -> None:
    """Everything a screen or `hud check` shows is the same."""
    assert warm.rows() == fresh.rows()
    assert warm.problems() == fresh.problems()
    assert warm.missions.keys() == fresh.missions.keys()
    for mission_id, mission in warm.missions.items():
        other = fresh.missions[mission_id]
        assert mission.documents() == other.documents(), mission_id
        assert mission.effective_policy == other.effective_policy
        for request_id in mission.requests:
            assert warm.request_status(mission_id, request_id) == fresh.request_status(
                mission_id, request_id
            )
            assert mission.decision_is_current(request_id) == other.decision_is_current(request_id)


def test_a_reopen_parses_only_the_documents_that_changed(
    tmp_path: Path, cache_dir: Path, parses: Counter[str]
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    open_warm(root)
    parsed = set(parses)
    assert "missions/alpha/intent.toml" in parsed and "missions/beta/plan/v1.json" in parsed

    parses.clear()
    open_warm(root)
    assert parses == Counter()  # nothing changed: nothing parsed

    intent = root / "missions/alpha/intent.toml"
    intent.write_text(intent.read_text().replace("Migrate", "Migrant"))  # the same size
    parses.clear()
    warm = open_warm(root)
    assert parses == Counter({"missions/alpha/intent.toml": 1})
    assert warm.missions["alpha"].title == "Migrant the database"


def test_a_document_written_within_the_racy_window_is_parsed_again(
    tmp_path: Path, cache_dir: Path, parses: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    monkeypatch.setattr(documents, "RACY_NS", 3600 * 10**9)  # everything is "just written"
    open_warm(root)
    parses.clear()
    open_warm(root)
    assert "missions/alpha/intent.toml" in parses


@pytest.mark.parametrize(
    "change",
    ["rewrite", "same-size-mtime-restored", "replace", "remove", "symlink", "garbage"],
)
def test_a_document_is_reused_only_while_it_is_the_file_parsed(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    open_warm(root)
    path = root / "missions/beta/intent.toml"
    text = path.read_text()
    info = path.stat()
    if change == "rewrite":
        path.write_text(text + 'objective = "more"\n')
    elif change == "same-size-mtime-restored":  # a `cp -p` / `touch -r` over it
        path.write_text(text.replace("Deploy", "Delete"))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif change == "replace":  # a new inode, its times copied
        spare = path.with_suffix(".new")
        spare.write_text(text.replace("Deploy", "Destroy"))
        os.utime(spare, ns=(info.st_atime_ns, info.st_mtime_ns))
        spare.replace(path)
    elif change == "remove":
        path.unlink()
    elif change == "symlink":
        path.unlink()
        (root / "elsewhere.toml").write_text(text)
        path.symlink_to(root / "elsewhere.toml")
    else:
        path.write_text("title = [")
    warm = open_warm(root)
    same(warm, open_fresh(root, monkeypatch))
    same(open_warm(root), open_fresh(root, monkeypatch))  # and what it kept is right too


@pytest.mark.parametrize("seed", [3, 11])
def test_a_warm_open_of_a_simulated_workspace_equals_a_fresh_one(
    tmp_path: Path,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    parses: Counter[str],
    seed: int,
) -> None:
    root = tmp_path / "state"
    Runner(root, missions=9, ticks=150, rate=1e9, seed=seed).run()
    open_warm(root)
    parses.clear()
    warm = open_warm(root)
    assert parses == Counter()  # every document came from the cache
    same(warm, open_fresh(root, monkeypatch))

    # between opens: the agents go on (documents, requests and decisions change) and a
    # human edits an intent in place
    Runner(root, missions=9, ticks=60, rate=1e9, seed=seed + 1).run()
    intent = next(iter(sorted(root.glob("missions/*/intent.toml"))))
    intent.write_text(intent.read_text().replace("title", "title", 1) + "# edited\n")
    warm = open_warm(root)
    same(warm, open_fresh(root, monkeypatch))
    assert warm.missions[intent.parent.name].intent is not None


def test_a_kept_document_validates_again_as_a_fresh_parse_does(
    tmp_path: Path, cache_dir: Path
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    first = open_warm(root)
    held = first.missions["gamma"].intent
    assert held is not None and held.record is not None
    assert held.raw is None  # the mission let its parsed value go: the cache has its own
    loaded = load.load_document(root, held.relpath, Intent)
    info = (root / loaded.relpath).lstat()
    kept = documents.entry(info, held, loaded.raw)
    assert kept is not None and kept.stands_for(info)
    again = kept.loaded(Intent)
    assert again == loaded
    assert again.record == held.record
    assert again.record is not held.record  # made again, not shared
    later = info.st_mtime_ns + int(timedelta(seconds=1) / timedelta(microseconds=1)) * 1000
    os.utime(root / loaded.relpath, ns=(later, later))
    assert not kept.stands_for((root / loaded.relpath).lstat())


def test_a_kept_json_document_parses_its_text_again_as_a_fresh_read(
    tmp_path: Path, cache_dir: Path
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    (root / "missions/beta/plan/v2.json").write_text('{"schema": 1, "steps": [1e999]}')
    first = open_warm(root)
    for version in (1, 2):
        held = first.missions["beta"].plans[version]
        loaded = load.load_document(root, held.relpath, Plan)
        info = (root / loaded.relpath).lstat()
        kept = documents.entry(info, held, loaded.raw)
        assert kept is not None
        assert kept.raw is None  # the text is kept, not the parsed value twice
        assert kept.loaded(Plan) == loaded
    assert first.missions["beta"].plans[2].problems  # the huge number, said
