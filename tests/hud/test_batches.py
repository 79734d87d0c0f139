"""The first scan reads missions in batches as the walk finds them (`hud.batches`): the
first rows show before the walk of a large directory ends, and every path is read once
in a batch that holds its whole mission."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hud.app import FIRST_CHUNK, HudApp
from hud.batches import batches
from store.index.workspace import Workspace
from tests.factory import mission
from tests.hud.conftest import until

missions = st.dictionaries(
    st.text("abc", min_size=1, max_size=4),
    st.lists(
        st.sampled_from(["intent.toml", "plan.json", "events.jsonl", "a/r1.toml"]),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    max_size=12,
)


def walk_order(found: dict[str, list[str]], others: list[str], at: list[int]) -> list[str]:
    """Each mission's paths together, the other paths between them."""
    walked = [f"missions/{m}/{name}" for m, names in found.items() for name in names]
    for n, path in enumerate(others):
        walked.insert((at[n % len(at)] if at else n) % (len(walked) + 1), path)
    return walked


@given(
    missions,
    st.lists(st.sampled_from(["hud.toml", "signers/a", "missions/x", ".small/p.md"])),
    st.lists(st.integers(0, 100)),
    st.integers(1, 4),
    st.integers(1, 5),
)
def test_each_mission_whole_in_one_batch(
    found: dict[str, list[str]], others: list[str], at: list[int], first: int, size: int
) -> None:
    walked = walk_order(found, others, at)
    sent = list(batches(walked, first, size))
    assert sorted(m for batch in sent for m in batch.missions) == sorted(found)  # each once
    limits = [first] + [size] * (len(sent) - 1)
    counts = [len(batch.missions) for batch in sent]
    assert counts[:-1] == limits[:-1] and counts[-1] <= limits[-1]  # full, but the last
    for batch in sent:
        assert batch.paths == [f"missions/{m}/{name}" for m in batch.missions for name in found[m]]
    assert sorted(p for batch in sent for p in batch.other) == sorted(others)


def test_a_mission_walked_again_later_is_sent_again_whole() -> None:
    walked = ["missions/a/1", "missions/b/1", "missions/c/1", "missions/a/2", "missions/d/1"]
    sent = list(batches(walked, 1, 1))
    assert [batch.missions for batch in sent] == [["a"], ["b"], ["c"], ["d"], ["a"]]
    assert sent[-1].paths == ["missions/a/1", "missions/a/2"]


@pytest.fixture
def slow_walk(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The walk stops after the first FIRST_CHUNK + 1 missions until this is set."""
    go_on = threading.Event()
    walk = Workspace.walk

    def held(self: Workspace, top: str = "") -> Iterable[str]:
        seen: set[str] = set()
        for rel in walk(self, top):
            parts = rel.split("/")
            if parts[0] == "missions" and len(parts) > 2 and parts[1] not in seen:
                seen.add(parts[1])
                if len(seen) == FIRST_CHUNK + 2:
                    go_on.wait(10)
            yield rel

    monkeypatch.setattr(Workspace, "walk", held)
    yield go_on
    go_on.set()


async def test_first_rows_show_before_the_walk_ends(
    tmp_path: Path, slow_walk: threading.Event, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    for n in range(FIRST_CHUNK + 10):
        mission(root, f"m{n:03d}")
    app = make_app(root, live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(app.summaries) >= FIRST_CHUNK)
        assert not app.scanned.is_set()
        slow_walk.set()
        await until(pilot, lambda: app.scanned.is_set())
        assert len(app.summaries) == FIRST_CHUNK + 10


def test_batches_grow_from_size_to_most() -> None:
    walked = [f"missions/m{n:04d}/intent.toml" for n in range(2000)]
    sizes = [len(batch.missions) for batch in batches(walked, 50, 200, 800)]
    assert sizes == [50, 200, 400, 800, 550]
    assert [len(b.missions) for b in batches(walked[:600], 50, 200)] == [50, 200, 200, 150]


async def test_the_first_rows_wait_for_no_more_than_a_screenful(
    tmp_path: Path, slow_walk: threading.Event, make_app: Callable[..., HudApp]
) -> None:
    """At 80x24 the overview shows 19 rows: the first come once that many are read."""
    root = tmp_path / "state"
    for n in range(60):
        mission(root, f"m{n:03d}")
    app = make_app(root, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: bool(app.summaries))
        assert len(app.summaries) <= 24
        slow_walk.set()
        await until(pilot, lambda: app.scanned.is_set())
