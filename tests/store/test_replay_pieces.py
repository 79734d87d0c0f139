"""A replay's checkpoints cost what changed: each aggregate (and each field of the ledger) is
a piece encoded on its own, and a piece that did not change since the previous checkpoint
keeps its bytes, in memory and in the cache; a change, in place or not, is encoded again.
They fall exactly every `every` lines, a line that does not load too."""

from __future__ import annotations

from collections import deque
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from store.analysis.replay import Replay
from store.analysis.replay_fold import EVENT_PIECES, Pieces, restored
from store.cache.state import decode_state
from store.derivation.mission import MissionState
from tests.factory import T0, chain, mission, stamp


def test_a_piece_that_did_not_change_keeps_its_bytes() -> None:
    pieces = Pieces()
    steps = {"s1": ("running", 1)}
    seen = {"a", "b"}
    first = pieces.encode({"steps": steps, "seen": seen, "count": 3})
    again = pieces.encode({"steps": steps, "seen": set(seen), "count": 3})
    assert all(new is old for new, old in zip(again, first, strict=True))


def test_a_piece_changed_in_place_or_replaced_is_encoded_again() -> None:
    pieces = Pieces()
    steps: dict[str, tuple[str, int]] = {"s1": ("running", 1)}
    recent: deque[int] = deque([1, 2], maxlen=2)
    first = pieces.encode({"steps": steps, "recent": recent, "at": datetime(2026, 1, 1)})
    steps["s1"] = tuple(["running", 1])  # type: ignore[assignment]  # equal, another object
    recent.append(3)  # the same length, other items
    later = datetime(2026, 1, 1, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    second = pieces.encode({"steps": steps, "recent": recent, "at": later})
    assert all(new is not old for new, old in zip(second, first, strict=True))
    assert decode_state(second[1]) == {"recent": deque([2, 3], maxlen=2)}
    assert decode_state(second[2])["at"].utcoffset() == timedelta(hours=2)


def test_a_checkpoint_between_two_step_changes_shares_the_steps_piece(tmp_path: Path) -> None:
    """Heartbeats change no step: the checkpoints after them keep the same bytes for the
    steps, and a restore from any of them is the fold of that line."""
    built = mission(tmp_path / "state", "m")
    built.step("s1", "running")
    for _ in range(5):
        built.event("heartbeat")
    built.step("s1", "succeeded")
    replay = Replay(built.root, "m", every=2, cached=False)
    assert replay.refresh()
    steps = EVENT_PIECES.index("step_latest")
    kept = [checkpoint.state[steps] for checkpoint in replay.mission.event_checkpoints]
    assert len(kept) == 3 and kept[0] is kept[1] is kept[2]  # lines 2, 4, 6
    last = restored(replay.mission.event_checkpoints[-1].state, EVENT_PIECES)
    assert last["step_latest"]["s1"].state == "running"


def test_a_usage_count_past_64_bits_in_a_checkpoint_s_series_is_replayed(
    tmp_path: Path,
) -> None:
    """Usage points are a checkpoint's series, not its state: a count no msgpack integer
    holds is written as JSON's, and every frame shows it."""
    built = mission(tmp_path / "state", "m")
    built.step("s1", "running")
    built.usage(0.5, 10**25, 1)
    built.step("s1", "verifying")
    built.step("s1", "succeeded")
    replay = Replay(built.root, "m", every=2, cached=False)
    assert replay.refresh()
    assert [checkpoint.line for checkpoint in replay.mission.event_checkpoints] == [2, 4]
    fresh = Replay(built.root, "m", every=10**9, cached=False)
    assert fresh.refresh()
    assert [replay.frame(seq) for seq in range(1, 5)] == [fresh.frame(seq) for seq in range(1, 5)]
    assert replay.frame(4).moment.budget[1].used == float(10**25)


def test_a_time_at_another_offset_keeps_it_through_a_checkpoint(tmp_path: Path) -> None:
    """The series keep each time's offset (JSON's RFC 3339), as the fold had it."""
    built = mission(tmp_path / "state", "m")
    built.step("s1", "running")
    east = datetime(2025, 1, 1, 14, 0, 5, tzinfo=timezone(timedelta(hours=2)))
    built.step("s1", "failed", at=east, reason="broke")
    built.event("heartbeat")
    replay = Replay(built.root, "m", every=3, cached=False)
    assert replay.refresh()
    state = MissionState(built.root, "m")
    replay.mission.restore_events(state, 0)  # the checkpoint at line 3
    (failed,) = [mark for mark in state.ledger.journal if mark.subject == "failed"]
    assert failed.at == east and failed.at.utcoffset() == timedelta(hours=2)


def test_checkpoints_fall_every_k_lines_a_line_that_does_not_load_too(tmp_path: Path) -> None:
    """The events reader hands the fold a checkpoint's worth of lines at a time: line 3
    does not load (a state no step has) and is a checkpoint's all the same; a jump between
    two checkpoints shows what a replay from the first line shows."""
    built = mission(tmp_path / "state", "m")
    states = ["running", "verifying", "bogus", "running", "verifying", "succeeded", "running"]
    records = [
        {
            "at": stamp(T0 + timedelta(seconds=n)),
            "actor": "agent",
            "type": "step",
            "step": "s1",
            "plan_version": 1,
            "state": state,
        }
        for n, state in enumerate(states)
    ]
    (built.dir / "events.jsonl").write_bytes(chain(records))
    replay = Replay(built.root, "m", every=3, cached=False)
    assert replay.refresh()
    checkpoints = replay.mission.event_checkpoints
    assert [checkpoint.line for checkpoint in checkpoints] == [3, 6]
    assert checkpoints[0].at == T0 + timedelta(seconds=1)  # the last event's time
    fresh = Replay(built.root, "m", every=10**9, cached=False)
    assert fresh.refresh()
    assert [replay.frame(seq) for seq in range(1, 8)] == [fresh.frame(seq) for seq in range(1, 8)]
    assert "schema" in {problem.code for problem in replay.frame(3).moment.problems}
