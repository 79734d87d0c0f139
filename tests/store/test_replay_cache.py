"""A replay's checkpoints in the user's cache folder: a second replay of a log starts at the
end of its cached prefix and shows what a replay from the first line shows; a cached
entry that is stale, tampered with or of another version is never used; a log edited
since is never served from the cache."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.analysis import replay_cache
from store.analysis.replay import Frame, Replay
from store.cache import open_cache
from store.cache.logs import load_log, log_name, save_log
from store.cache.sealed import ENV_FOLDER
from store.format.confined import OpenFile, open_on_disk
from tests.factory import Mission, mission
from tests.store.test_replay import OPS, Op, play

EVERY = 3


@pytest.fixture(autouse=True)
def cache_folder(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_FOLDER, str(folder))
        yield folder


@pytest.fixture
def run(tmp_path: Path) -> Mission:
    """Ten events (some usage, a halt) and evidence, replayed once: kept in the cache."""
    built = mission(tmp_path / "state", "m")
    for n in range(4):
        built.step("s1", "running" if n % 2 else "verifying")
        built.usage(0.1 * n, 10 * n, n)
        built.evidence("s1")
    built.step("s1", "succeeded")
    built.event("halt", reason="done")
    replayed(built)
    return built


def replayed(built: Mission, cached: bool = True) -> Replay:
    replay = Replay(built.root, built.id, every=EVERY, cached=cached)
    assert replay.refresh()
    return replay


def frames(replay: Replay) -> list[Frame]:
    return [replay.frame(seq) for seq in range(1, replay.last_seq + 1)]


def events(built: Mission) -> Path:
    return built.dir / "events.jsonl"


def test_a_second_replay_starts_at_the_cached_prefix_and_shows_the_same(run: Mission) -> None:
    again = replayed(run)
    assert again.trusting and again.mission.events is not None
    assert again.mission.events.trusted is not None  # nothing before the prefix's end read
    lines = [checkpoint.line for checkpoint in again.mission.event_checkpoints]
    assert lines == [3, 6, 9, 10]  # the last at the prefix's end: the fold resumed there
    assert frames(again) == frames(replayed(run, cached=False))
    assert again.verify() and not again.trusting


def test_the_timeline_of_a_cached_replay_is_the_same(run: Mission) -> None:
    again, fresh = replayed(run), replayed(run, cached=False)
    assert again.trusting
    assert again.mission.ledger.marks() == fresh.mission.ledger.marks()
    assert again.last_seq == fresh.last_seq == 10


def test_a_sealed_file_tampered_with_is_not_used(run: Mission, cache_folder: Path) -> None:
    info = events(run).stat()
    name = log_name(run.root, f"missions/{run.id}/events.jsonl", info.st_dev, info.st_ino)
    sealed = cache_folder / f"{name}.sealed"
    data = bytearray(sealed.read_bytes())
    data[-40] ^= 1
    sealed.write_bytes(bytes(data))
    again = replayed(run)
    assert again.mission.events is not None and again.mission.events.trusted is None
    assert frames(again) == frames(replayed(run, cached=False))


@pytest.mark.parametrize("what", ["extra", "state", "series"])
def test_a_cached_checkpoint_of_another_version_is_not_used(run: Mission, what: str) -> None:
    """A sealed entry (the key is the user's) whose checkpoints this version cannot read:
    the log is read from the start."""
    cache = open_cache(run.root)
    assert cache is not None
    rel = f"missions/{run.id}/events.jsonl"
    opened = open_on_disk(run.root, rel)
    assert isinstance(opened, OpenFile)
    with opened:
        entry = load_log(cache, run.root, rel, opened)
    assert entry is not None
    first = entry.checkpoints[0]
    extra = msgspec.msgpack.decode(first.extra, type=replay_cache.Extra)
    if what == "extra":
        extra = msgspec.structs.replace(extra, version=replay_cache.EXTRA_VERSION + 1)
    elif what == "series":
        extra = msgspec.structs.replace(extra, series=b"\x93\x01")
    state = b"\x92\x63\x80" if what == "state" else first.state
    broken = msgspec.structs.replace(first, state=state, extra=msgspec.msgpack.encode(extra))
    checkpoints = (broken, *entry.checkpoints[1:])
    assert save_log(cache, run.root, msgspec.structs.replace(entry, checkpoints=checkpoints))
    again = replayed(run)
    assert frames(again) == frames(replayed(run, cached=False))
    assert again.mission.events is not None and again.mission.events.trusted is None
    assert rel not in again.mission.verified  # read from the first line


def test_a_log_edited_in_place_is_read_again(run: Mission) -> None:
    """Same size, new bytes in its middle: not the file that was verified."""
    data = events(run).read_bytes()
    at = data.index(b'"verifying"', len(data) // 3)
    events(run).write_bytes(data[:at] + b'"succeeded"' + data[at + len(b'"verifying"') :])
    again = replayed(run)
    assert again.mission.events is not None and again.mission.events.trusted is None
    codes = {p.code for p in again.frame(again.last_seq).moment.problems}
    assert "chain-broken" in codes
    assert frames(again) == frames(replayed(run, cached=False))


@pytest.mark.parametrize("changed_only", [False, True])
def test_an_edit_that_comes_with_an_append_is_caught_by_the_verification(
    run: Mission, changed_only: bool
) -> None:
    """The prefix's last line is intact and the log grew: it looks like an append, so
    it is resumed, on trust; hashing it again finds the edit and reads it all again."""
    data = events(run).read_bytes()
    at = data.index(b'"verifying"')
    events(run).write_bytes(data[:at] + b'"succeeded"' + data[at + len(b'"verifying"') :])
    run.event("heartbeat")
    again = replayed(run)
    assert again.trusting  # cached, not verified
    assert not again.verify(changed_only=changed_only)
    assert not again.trusting and again.last_seq == 11
    assert "chain-broken" in {p.code for p in again.frame(11).moment.problems}
    assert frames(again) == frames(replayed(run, cached=False))


def test_an_unchanged_log_needs_no_hash_but_a_grown_one_does(run: Mission) -> None:
    again = replayed(run)
    assert again.verify(changed_only=True) and again.trusting  # the kernel vouches
    run.event("heartbeat")
    grown = replayed(run)
    assert grown.trusting and grown.last_seq == 11
    assert grown.verify(changed_only=True)
    assert grown.mission.events is not None and grown.mission.events.trusted is None
    assert grown.mission.evidence is not None and grown.mission.evidence.trusted is not None


@pytest.mark.parametrize("change", ["truncated", "replaced"])
def test_a_log_truncated_or_replaced_is_read_again(run: Mission, change: str) -> None:
    data = events(run).read_bytes()
    if change == "truncated":
        kept = b"".join(data.splitlines(keepends=True)[:6])
        os.truncate(events(run), len(kept))
    else:
        events(run).unlink()
        events(run).write_bytes(data)  # the same bytes, another inode
    again = replayed(run)
    assert again.mission.events is not None and again.mission.events.trusted is None
    assert frames(again) == frames(replayed(run, cached=False))


def test_no_cache_folder_inside_the_state_directory(run: Mission) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_FOLDER, str(run.root / "cache"))
        replay = replayed(run)
        assert replay.cache is None and not (run.root / "cache").exists()


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(OPS, min_size=2, max_size=40),
    split=st.floats(0.1, 0.9),
    every=st.integers(1, 4),
)
def test_a_replay_resumed_from_the_cache_and_grown_equals_one_from_the_start(
    ops: list[Op], split: float, every: int
) -> None:
    """A log replayed (and kept) once, then appended to: the next replay resumes at the
    cached prefix and folds the rest, checkpoints and all."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_FOLDER, str(Path(tmp) / "cache"))
        root = Path(tmp) / "state"
        folder = play(root, ops).dir
        rests = {}
        for log in ("events.jsonl", "evidence.jsonl"):
            path = folder / log
            if path.exists():
                lines = path.read_bytes().splitlines(keepends=True)
                cut = max(1, int(len(lines) * split))
                path.write_bytes(b"".join(lines[:cut]))
                rests[path] = b"".join(lines[cut:])
        assert Replay(root, "m", every=every).refresh()
        for path, rest in rests.items():
            with path.open("ab") as out:
                out.write(rest)
        again = Replay(root, "m", every=every)
        assert again.refresh() and again.trusting
        fresh = Replay(root, "m", every=every, cached=False)
        assert fresh.refresh()
        assert frames(again) == frames(fresh)
        assert again.mission.ledger.marks() == fresh.mission.ledger.marks()


def test_a_fold_the_codec_cannot_write_is_replayed_and_not_kept(tmp_path: Path) -> None:
    """A log line may hold an integer past 64 bits (a plan version, tokens): no checkpoint
    is kept from there on and nothing goes to the cache, but every frame is shown."""
    built = mission(tmp_path / "state", "m")
    for n in range(4):
        built.step("s1", "running", plan_version=10**30 if n == 2 else 1)
        built.usage(0.1, 10**25 if n == 3 else 10, 1)
    replay = replayed(built)
    assert [c.line for c in replay.mission.event_checkpoints] == [3]
    fresh = replayed(built, cached=False)
    assert frames(replay) == frames(fresh) and len(frames(fresh)) == 8
    assert not replay.mission.kept and not replayed(built).trusting


def test_a_growing_log_is_kept_again_only_a_checkpoint_s_worth_later(
    run: Mission, cache_folder: Path
) -> None:
    """A log watched as it grows is not written out to the cache at every line."""
    replay = replayed(run, cached=False)
    replay.cache = open_cache(run.root)
    replay.refresh()  # kept by this replay, at 10 lines
    info = events(run).stat()
    name = log_name(run.root, f"missions/{run.id}/events.jsonl", info.st_dev, info.st_ino)
    sealed = cache_folder / f"{name}.sealed"
    kept = sealed.stat().st_mtime_ns
    for _ in range(EVERY - 1):
        run.event("heartbeat")
        replay.refresh()
    assert sealed.stat().st_mtime_ns == kept
    run.event("heartbeat")
    replay.refresh()
    assert sealed.stat().st_mtime_ns != kept
