"""The overview rows kept for the next start (store.cache.rows): a row comes back only
while every file and folder of its mission, and the root's own files, are as they were;
never from a file another key sealed, of another directory, or kept after a change the
scan may not have read."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import msgspec
import pytest

from store.cache import rows as kept_rows
from store.cache.rows import RACY_NS, Began, load_rows, save_rows
from store.format.row import MissionSummary
from store.index.workspace import Workspace
from tests.factory import three_missions
from tests.fresh import fresh_stdout


def began_at(wall_ns: int) -> Began:
    """A scan that began at `wall_ns` by the wall clock (the monotonic clock agreeing)."""
    return Began(wall_ns, time.monotonic_ns() - (time.time_ns() - wall_ns))


def later() -> Began:
    """A scan that began two seconds from now: every file written so far is settled."""
    return began_at(time.time_ns() + 2 * RACY_NS)


def derived(root: Path) -> list[MissionSummary]:
    workspace = Workspace(root)
    workspace.scan()
    return [row for mission in sorted(workspace.missions) if (row := workspace.row(mission))]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("HUD_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def root(tmp_path: Path, cache: Path) -> Path:
    """Three missions, their rows kept."""
    root = tmp_path / "state"
    root.mkdir()
    (root / "hud.toml").write_text("schema = 1\n")
    three_missions(root)
    assert save_rows(root, derived(root), later())
    return root


def shown(root: Path) -> list[MissionSummary]:
    """Every kept row that still stands, in the order they come."""
    return [row for rows in load_rows(root) for row in rows]


def ids(root: Path) -> list[str]:
    return sorted(row.id for row in shown(root))


def test_the_rows_come_back_as_derived(root: Path) -> None:
    assert sorted(shown(root), key=lambda row: row.id) == derived(root)


def test_the_rows_come_most_urgent_first_a_screenful_first(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_rows, "FIRST_CHUNK", 1)
    monkeypatch.setattr(kept_rows, "CHUNK", 2)
    root = tmp_path / "state"
    three_missions(root)
    rows = derived(root)
    assert save_rows(root, rows, later())
    chunks = list(load_rows(root))
    assert [len(chunk) for chunk in chunks] == [1, 2]
    assert [row for chunk in chunks for row in chunk] == sorted(rows, key=MissionSummary.sort_key)


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.joinpath("events.jsonl").open("a").write("x"),  # appended
        lambda m: os.utime(m / "intent.toml"),  # touched: mtime and ctime move
        lambda m: os.chmod(m / "intent.toml", 0o600),  # ctime alone moves
        lambda m: (m / "new.toml").write_text(""),  # a file added
        lambda m: (m / "intent.toml").unlink(),  # a file removed
        lambda m: (m / "plan" / "v9.json").write_text("{}"),  # added in a subfolder
    ],
)
def test_a_mission_changed_in_any_way_loses_its_row(root: Path, change: object) -> None:
    change(root / "missions" / "alpha")  # type: ignore[operator]
    assert ids(root) == ["beta", "gamma"]


def test_a_file_swapped_for_another_with_the_same_times_loses_its_row(root: Path) -> None:
    intent = root / "missions" / "alpha" / "intent.toml"
    info = intent.stat()
    copy = intent.with_name("copy")
    copy.write_bytes(intent.read_bytes())
    os.utime(copy, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(copy, intent)  # same bytes, size and mtime: another inode, a new ctime
    assert "alpha" not in ids(root)


def test_a_mission_folder_swapped_for_a_symlink_loses_its_row(root: Path, tmp_path: Path) -> None:
    mission = root / "missions" / "alpha"
    mission.rename(tmp_path / "elsewhere")
    mission.symlink_to(tmp_path / "elsewhere")
    assert ids(root) == ["beta", "gamma"]


def test_a_mission_gone_loses_its_row(root: Path) -> None:
    (root / "missions" / "gamma").rename(root / "gamma-moved")
    assert "gamma" not in ids(root)


def test_a_new_mission_leaves_the_others_rows(root: Path) -> None:
    (root / "missions" / "delta").mkdir()
    assert ids(root) == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize(
    "change",
    [
        lambda r: (r / "hud.toml").write_text("schema = 1\nstale_after_seconds = 1\n"),
        lambda r: (r / "signers").mkdir(),
        lambda r: (r / "policy.toml").write_text(""),
    ],
)
def test_the_roots_own_files_changed_no_row_comes_back(root: Path, change: object) -> None:
    change(root)  # type: ignore[operator]
    assert shown(root) == []


def test_a_change_inside_signers_no_row_comes_back(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    (root / "signers").mkdir(parents=True)
    (root / "signers" / "allowed").write_text("")
    three_missions(root)
    assert save_rows(root, derived(root), later())
    assert len(shown(root)) == 3
    (root / "signers" / "allowed").write_text("someone")
    assert shown(root) == []


def test_a_mission_changed_around_the_scan_is_not_kept(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    three_missions(root)
    time.sleep(0.6)
    intent = root / "missions" / "alpha" / "intent.toml"
    os.utime(intent)  # half a second before the scan began: maybe read before or after
    assert save_rows(root, derived(root), began_at(intent.stat().st_ctime_ns + RACY_NS // 2))
    assert ids(root) == ["beta", "gamma"]


def test_nothing_is_kept_when_the_roots_files_changed_around_the_scan(
    tmp_path: Path, cache: Path
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    assert not save_rows(root, derived(root), Began.now())
    assert shown(root) == []


def test_nothing_is_kept_when_the_wall_clock_stepped(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    three_missions(root)
    stepped = Began(time.time_ns() + 2 * RACY_NS, time.monotonic_ns())  # set back 2 s since
    assert not save_rows(root, derived(root), stepped)
    assert shown(root) == []


def test_a_tampered_file_is_ignored(root: Path, cache: Path) -> None:
    (sealed,) = cache.glob("rows-*")
    data = bytearray(sealed.read_bytes())
    data[-5] ^= 1
    sealed.write_bytes(bytes(data))
    assert shown(root) == []


def test_rows_kept_for_a_directory_are_not_another_ones(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    os.rename(root, copy)  # the same files (inodes, times) under another path
    assert shown(copy) == []


@pytest.mark.parametrize("mission", ["..", "../missions/alpha", ""])
def test_a_row_whose_id_is_not_a_folder_name_is_never_shown(root: Path, mission: str) -> None:
    cache = kept_rows.open_cache(root)
    assert cache is not None
    payload = cache.unseal(kept_rows._name(root))
    assert payload is not None
    kept = msgspec.msgpack.decode(payload, type=kept_rows.LastRows)
    first = msgspec.msgpack.decode(kept.chunks[0], type=tuple[kept_rows.KeptRow, ...])[0]
    forged = msgspec.structs.replace(first, row=dataclasses.replace(first.row, id=mission))
    chunk = msgspec.Raw(msgspec.msgpack.encode((forged,)))
    kept_rows._seal(cache, root, msgspec.structs.replace(kept, chunks=(chunk,)))
    assert shown(root) == []


def test_no_cache_folder_no_rows(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUD_CACHE_DIR", "off")
    assert shown(root) == []
    assert not save_rows(root, derived(root), later())


def test_reading_the_rows_imports_neither_pydantic_nor_the_loaders(root: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from store.cache.rows import load_rows; "
        "print(sum(map(len, load_rows(Path(sys.argv[1]))))); "
        "print(*sorted(m for m in sys.modules if m.startswith(('pydantic', 'store.format.load'))))"
    )
    shown = fresh_stdout(script, str(root), timeout=60).split("\n")
    assert shown[:2] == ["3", ""]


def test_looking_for_rows_makes_no_cache_folder(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    three_missions(root)
    assert shown(root) == []
    assert not cache.exists()


def test_a_directory_gone_keeps_nothing_and_says_nothing(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "state"
    three_missions(root)
    rows = derived(root)
    shutil.rmtree(root)
    assert not save_rows(root, rows, later())
