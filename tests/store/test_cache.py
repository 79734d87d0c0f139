"""The verified-prefix cache (store.cache): reused only under its rules, never trusted when
tampered with, torn, foreign or of another version, atomic, bounded; the folded state
comes back exactly; and once the scrub has run, a cached open equals a fresh one."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.main import main
from store.cache import open_cache
from store.cache.entry import LogEntry, StateCheckpoint
from store.cache.logs import load_log, nearest, save_log
from store.cache.prefix import PrefixIndex
from store.cache.sealed import MAGIC, Cache
from store.cache.state import STATE_VERSION, StateError, decode_state, encode_state
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.format.confined import open_on_disk
from store.format.load import LogReader
from store.format.problems import Problem
from store.index import check as check_module
from store.index.check import check
from store.index.scrub import scrub, targets
from store.index.workspace import Workspace
from store.sources.native import cached
from tests.factory import T0, chain, mission, resume, stamp, three_missions

SEED004 = Path(__file__).resolve().parents[1] / "fixtures" / "seed004"
LOG = "missions/m/events.jsonl"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, keeping logs of any length."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("HUD_CACHE_DIR", str(folder))
    monkeypatch.setattr(cached, "MIN_BYTES", 1)
    return folder


def fold(state: MissionState) -> dict[str, Any]:
    """The mission's folded aggregates, comparable (the ledger by its fields)."""
    saved = state.saved(EVENT_AGGREGATES + EVIDENCE_AGGREGATES)
    saved["ledger"] = vars(saved["ledger"])
    return saved


def problems(workspace: Workspace) -> list[tuple[str, str, int | None]]:
    return sorted((p.path, p.code, p.line) for p in workspace.problems())


def open_cached(root: Path) -> Workspace:
    workspace = Workspace.cached(root)
    workspace.scan()
    return workspace


def cached_entry(root: Path) -> LogEntry | None:
    """The events log's entry as the cache holds it now."""
    cache = open_cache(root)
    return PrefixIndex(cache, root).get(LOG) if cache is not None else None


def settle(workspace: Workspace) -> None:
    """What the HUD does after first paint: the scrub hashes every prefix held on trust,
    logs rewritten are read again from the start."""
    found = scrub(workspace.root, targets(workspace.readers()), share=1.0)
    again = workspace.take_scrub(found)
    if again:
        workspace.apply(again)


def records(count: int) -> list[dict[str, Any]]:
    return [
        {
            "at": stamp(T0),
            "actor": "agent",
            "type": "step",
            "step": f"s{1 + n % 2}",
            "plan_version": 1,
            "state": "running",
        }
        for n in range(count)
    ]


# ---- the folded state ------------------------------------------------------------------------


def _seed_missions() -> Iterator[MissionState]:
    for case in sorted(SEED004.iterdir()):
        if (case / "state").is_dir():
            workspace = Workspace(case / "state")
            workspace.scan()
            yield from workspace.missions.values()


def test_the_folded_state_comes_back_exactly(tmp_path: Path) -> None:
    three_missions(tmp_path)
    states = [*_seed_missions(), *Workspace(tmp_path).missions.values()]
    workspace = Workspace(tmp_path)
    workspace.scan()
    states += workspace.missions.values()
    assert any(state.ledger.findings for state in states)  # the ledger's richer parts too
    for state in states:
        names = EVENT_AGGREGATES + EVIDENCE_AGGREGATES
        back = decode_state(encode_state(state.saved(names)))
        back["ledger"] = vars(back["ledger"])
        assert back == fold(state)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        msgspec.msgpack.encode([STATE_VERSION + 1, {}]),  # another version
        msgspec.msgpack.encode([STATE_VERSION, [1]]),  # not a map of aggregates
        encode_state({"x": 1})[:-1],  # cut short
        msgspec.msgpack.encode([STATE_VERSION, {"x": [99, 0]}]),  # an unknown tag
        msgspec.msgpack.encode([STATE_VERSION, {"x": [8, 0, "{}"]}]),  # a StepEvent, fieldless
        msgspec.msgpack.encode([STATE_VERSION, {"x": [8, 99, "{}"]}]),  # no such record
        msgspec.msgpack.encode([STATE_VERSION, {"x": {"a": 1}}]),  # a bare map
    ],
)
def test_bytes_the_codec_did_not_write_are_refused(data: bytes) -> None:
    with pytest.raises(StateError):
        decode_state(data)


def test_the_codec_keeps_no_other_class() -> None:
    with pytest.raises(StateError):
        encode_state({"x": Path("/")})


# ---- sealed files ----------------------------------------------------------------------------


def _pack(cache_dir: Path) -> Path:
    (found,) = cache_dir.glob("prefix-*.sealed")
    return found


def _indexed(root: Path) -> Workspace:
    mission(root, "m").step("s1", "running")
    workspace = open_cached(root)
    assert workspace.flush_cache(prune=True) > 0
    return workspace


@pytest.mark.parametrize("harm", ["flip", "half", "forged", "foreign", "empty"])
def test_a_tampered_torn_forged_or_foreign_index_is_ignored_and_rebuilt(
    tmp_path: Path, cache_dir: Path, harm: str
) -> None:
    root = tmp_path / "state"
    _indexed(root)
    assert open_cached(root).trusting() == 1  # sound: reused
    pack = _pack(cache_dir)
    data = pack.read_bytes()
    if harm == "flip":
        pack.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    elif harm == "half":
        pack.write_bytes(data[: len(data) // 2])
    elif harm == "forged":
        other = Cache(cache_dir, b"k" * 32)
        payload = data[len(MAGIC) + 32 :]
        other.seal(pack.name.removesuffix(".sealed"), payload)
    elif harm == "foreign":
        pack.write_bytes(b"operator-hud cache 2\n" + data[len(MAGIC) :])
    else:
        pack.write_bytes(b"")
    again = open_cached(root)
    assert again.trusting() == 0
    assert again.flush_cache(prune=True) > 0  # rebuilt
    assert open_cached(root).trusting() == 1


def test_a_key_others_may_read_is_no_key(tmp_path: Path, cache_dir: Path) -> None:
    assert open_cache() is not None
    (cache_dir / "key").chmod(0o644)
    assert open_cache() is None


def test_no_cache_inside_the_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "state" / ".cache"))
    (tmp_path / "state").mkdir()
    assert open_cache(tmp_path / "state") is None
    monkeypatch.setenv("HUD_CACHE_DIR", "off")
    assert open_cache(tmp_path) is None


def test_a_crash_mid_write_leaves_the_old_index_and_its_temp_file_goes(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "state"
    _indexed(root)
    torn = cache_dir / ".tmp-crashed"
    torn.write_bytes(b"half a pack")
    os.utime(torn, (1, 1))

    def crash(*_args: Any) -> None:
        raise OSError("disk gone")

    mission(root, "n").step("s1", "running")
    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", crash)
        assert open_cached(root).flush_cache() == 0  # not written
    again = open_cached(root)
    assert again.trusting() == 1  # the old pack stands: alpha's log from it
    assert torn.exists()
    assert again.flush_cache() > 0  # n's log, now written
    assert not torn.exists()  # a crash's leftover goes with the next write


def test_the_cache_keeps_to_its_budget_least_recently_used_first(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_CACHE_BYTES", "1500")
    cache = open_cache()
    assert cache is not None
    for age, name in enumerate("abc"):
        assert cache.seal(name, name.encode() * 400)
        os.utime(cache.path(name), ns=(age * 10**9, age * 10**9))
    assert cache.unseal("a") is not None  # used now: the newest
    assert cache.seal("d", b"d" * 400)
    kept = {p.name.removesuffix(".sealed") for p in cache_dir.glob("*.sealed")}
    assert kept == {"a", "c", "d"}
    total = sum(p.stat().st_size for p in cache_dir.glob("*.sealed"))
    assert total <= 1500
    assert not cache.seal("big", b"x" * 2000)  # alone over the budget: not kept


# ---- the rules -------------------------------------------------------------------------------

MUTATIONS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 5)),
    st.tuples(st.just("truncate"), st.floats(0, 0.999)),
    st.tuples(st.just("edit"), st.floats(0, 0.999), st.integers(0, 3)),
    st.tuples(st.just("swap"), st.booleans()),
    st.tuples(st.just("copy -p"), st.floats(0, 0.999), st.integers(0, 3)),
    st.tuples(st.just("clock"), st.integers(-(10**6), 10**6)),
)


def _mutate(log: Path, count: int, mutation: tuple[Any, ...], spare: Path) -> None:
    """Change the log as an agent (or a hostile one) might; `spare` is a scratch path."""
    kind = mutation[0]
    data = log.read_bytes()
    if kind == "append":
        longer = chain(records(count + mutation[1]))
        with log.open("ab") as out:
            out.write(longer[len(data) :])
    elif kind == "truncate":
        os.truncate(log, int(len(data) * mutation[1]))
    elif kind in ("edit", "copy -p"):
        at = int(len(data) * mutation[1])
        edited = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
        grown = edited + chain(records(count + mutation[2]))[len(data) :]
        if kind == "edit":
            with log.open("r+b") as out:
                out.write(grown)
        else:  # a copy with its times kept, over the log (cp -p writes in place)
            spare.write_bytes(grown)
            os.utime(spare, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns))
            shutil.copy2(spare, log)
    elif kind == "swap":  # another file renamed over it (a new inode), maybe the same bytes
        spare.write_bytes(data if mutation[1] else chain(records(count + 1)))
        os.replace(spare, log)
    else:  # the clock: mtime set backwards or forwards
        info = log.stat()
        os.utime(log, ns=(info.st_atime_ns, info.st_mtime_ns + mutation[1] * 10**6))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(count=st.integers(1, 12), mutation=MUTATIONS)
def test_a_prefix_is_reused_only_under_the_rules_and_the_scrub_makes_it_the_truth(
    cache_dir: Path, count: int, mutation: tuple[Any, ...]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "state"
        mission(root, "m")
        log = root / LOG
        log.write_bytes(chain(records(count)))
        first = open_cached(root)
        assert first.flush_cache(prune=True) == 1
        entry = cached_entry(root)
        assert entry is not None
        before = log.read_bytes()
        _mutate(log, count, mutation, Path(scratch) / "spare")

        workspace = open_cached(root)
        reader = workspace.missions["m"].events
        assert reader is not None
        info = log.stat()
        if reader.trusted is not None:  # reused: only under the rules
            assert (info.st_dev, info.st_ino) == (entry.device, entry.inode)
            assert info.st_size >= entry.offset
            assert info.st_size > entry.size or (info.st_mtime_ns, info.st_ctime_ns) == (
                entry.mtime_ns,
                entry.ctime_ns,
            )
            last = entry.starts()[-1]
            assert log.read_bytes()[last : entry.offset] == before[last:]
        if mutation[0] == "append":
            assert reader.trusted is not None  # what the cache is for
        if mutation[0] in ("truncate", "swap") or (mutation[0] == "clock" and mutation[1] != 0):
            assert reader.trusted is None
        settle(workspace)
        assert workspace.trusting() == 0
        fresh = Workspace(root)
        fresh.scan()
        assert problems(workspace) == problems(fresh)
        assert fold(workspace.missions["m"]) == fold(fresh.missions["m"])


def test_an_append_is_read_from_the_cached_offset(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "state"
    mission(root, "m")
    log = root / LOG
    log.write_bytes(chain(records(50)))
    assert open_cached(root).flush_cache(prune=True) == 1
    log.write_bytes(chain(records(53)))  # in place: three lines more
    fed: list[int] = []
    feed = LogReader._feed

    def counted(self: LogReader, chunk: bytes, batch: Any) -> None:
        fed.append(len(chunk))
        feed(self, chunk, batch)

    monkeypatch.setattr(LogReader, "_feed", counted)
    workspace = open_cached(root)
    assert sum(fed) == len(chain(records(53))) - len(chain(records(50)))
    reader = workspace.missions["m"].events
    assert reader is not None and reader.line_no == 53 and reader.trusted is not None


@pytest.mark.parametrize("big", [10**30, 2**64])
def test_a_fold_the_codec_cannot_write_is_not_kept_and_the_rest_is(
    cache_dir: Path, tmp_path: Path, big: int
) -> None:
    """A log line may hold an integer past 64 bits (an agent's plan version, its tokens):
    that mission's log is not kept (nor raises), every other one is, and the next open
    reads it whole with the same result."""
    root = tmp_path / "state"
    mission(root, "odd").step("s1", "running", plan_version=big)
    mission(root, "plain").step("s1", "running")
    first = open_cached(root)
    assert first.flush_cache(prune=True) == 1
    again = open_cached(root)
    assert again.missions["odd"].events is not None
    assert again.missions["odd"].events.trusted is None
    assert again.missions["plain"].events is not None
    assert again.missions["plain"].events.trusted is not None
    assert problems(again) == problems(first)


# ---- checkpoints (replay's) ------------------------------------------------------------------


def test_a_log_entry_with_checkpoints_comes_back_while_the_log_only_grows(
    cache_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "state"
    mission(root, "m")
    log = root / LOG
    log.write_bytes(chain(records(20)))
    workspace = open_cached(root)
    workspace.flush_cache()
    cache = open_cache(root)
    assert cache is not None
    entry = cached_entry(root)
    assert isinstance(entry, LogEntry)
    saved = workspace.missions["m"].saved(EVENT_AGGREGATES)
    marks = tuple(
        StateCheckpoint(line, entry.starts()[line], entry.head, encode_state(saved))
        for line in (5, 10, 15)
    )
    assert save_log(cache, root, _with(entry, checkpoints=marks))

    def loaded() -> LogEntry | None:
        opened = open_on_disk(root, LOG)
        assert not isinstance(opened, Problem)
        with opened:
            return load_log(cache, root, LOG, opened)

    found = loaded()
    assert found is not None and found.checkpoints == marks
    at = nearest(found, 12)
    assert at is not None and at.line == 10
    assert nearest(found, 4) is None
    log.write_bytes(chain(records(21)))  # grown: still good
    assert loaded() is not None
    os.truncate(log, 10)  # shorter: gone
    assert loaded() is None


def _with(entry: LogEntry, **changes: Any) -> LogEntry:
    return msgspec.structs.replace(entry, **changes)


def test_a_prefix_index_is_per_state_directory(cache_dir: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root in (one, two):
        mission(root, "m").step("s1", "running")
        open_cached(root).flush_cache(prune=True)
    cache = open_cache()
    assert cache is not None
    assert PrefixIndex(cache, one).name != PrefixIndex(cache, two).name
    assert open_cached(one).trusting() == open_cached(two).trusting() == 1


def test_a_short_log_is_read_whole(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cached, "MIN_BYTES", 4096)
    root = tmp_path / "state"
    mission(root, "m")
    log = root / LOG
    log.write_bytes(chain(records(3)))
    assert open_cached(root).flush_cache(prune=True) == 0
    log.write_bytes(chain(records(40)))
    assert len(log.read_bytes()) >= 4096
    assert open_cached(root).flush_cache(prune=True) == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_hud_check_verifies_every_byte_unless_asked_for_the_cache(
    tmp_path: Path, cache_dir: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check_module, "PARALLEL_BYTES", 0)  # workers even for a small one
    root = tmp_path / "state"
    three_missions(root)
    first = check(root, jobs=jobs, cached=True)
    assert first.cached == 0
    again = check(root, jobs=jobs, cached=True)
    assert again.cached == len(list(root.glob("missions/*/*.jsonl")))
    assert again.to_json()["missions"] == check(root, jobs=jobs).to_json()["missions"]
    log = root / "missions/alpha/events.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"actor":"agent"', b'"actor":"Agent"', 1))
    resume(root, "alpha").step("s2", "running")  # an edit in the prefix, and an append
    plain = check(root, jobs=jobs)
    assert plain.cached == 0
    assert "chain-broken" in {p.code for p in plain.missions["alpha"].problems}
    trusting = check(root, jobs=jobs, cached=True)
    assert trusting.cached > 0  # said in its report: the prefix was not read again


def test_the_cli_check_says_what_it_took_from_the_cache(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "state"
    three_missions(root)
    assert main(["check", str(root), "--cached"]) == 0
    assert "read from the end of a prefix" not in capsys.readouterr().out
    assert main(["check", str(root), "--cached"]) == 0
    logs = len(list(root.glob("missions/*/*.jsonl")))
    assert f"{logs} logs read from the end of a prefix verified before" in capsys.readouterr().out
    assert main(["check", str(root)]) == 0
    assert "read from the end of a prefix" not in capsys.readouterr().out


def test_a_cached_check_with_workers_keeps_the_entries_they_reused(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check_module, "PARALLEL_BYTES", 0)
    root = tmp_path / "state"
    three_missions(root)
    logs = len(list(root.glob("missions/*/*.jsonl")))
    check(root, jobs=2, cached=True)
    mission(root, "delta").step("s1", "running")  # a new log: the others are reused
    assert check(root, jobs=2, cached=True).cached == logs
    assert check(root, jobs=2, cached=True).cached == logs + 1  # none was lost on the way
