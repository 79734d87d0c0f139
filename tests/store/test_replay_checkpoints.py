"""Replay from a checkpoint equals replay from the start, for every seq of a generated log:
the checkpoints (their pieces, kept once while unchanged; their series kept as what each
added; the evidence found by time through them) lose nothing, in memory or through the
user's cache (resumed at the last checkpoint, at the prefix's end)."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.analysis.replay import Replay
from store.cache.sealed import ENV_FOLDER
from store.derivation import ledger, mission
from tests.store.test_replay import OPS, STEPS, Op, play

NEVER = 10**9
"""A checkpoint interval no log reaches: the replay folds from the first line."""
BACK = st.tuples(
    st.just("back"), st.sampled_from(["events", "evidence"]), st.integers(1, 3), st.booleans()
)
"""A line whose time steps back (`at` a few seconds before the clock)."""


def write(root: Path, ops: list[Op]) -> None:
    """`play` the ops, with lines whose time steps back played after it."""
    built = play(root, [op for op in ops if op[0] != "back"])
    for _, log, seconds, passed in (op for op in ops if op[0] == "back"):
        at = built.clock - timedelta(seconds=seconds)
        if log == "events":
            built.event("heartbeat", at=at)
        else:
            verdict = "pass" if passed else "fail"
            fields = {"observed": "o", "method": "m", "proves": "p", "verdict": verdict}
            built.append("evidence", at=at, id=f"b{seconds}", step=STEPS[0], **fields)
        built.clock += timedelta(seconds=2)
        built.usage(0.1, 10, 1)


def frames(root: Path, every: int, cached: bool = False) -> list[object]:
    replay = Replay(root, "m", every=every, cached=cached)
    assert replay.refresh()
    return [replay.frame(seq) for seq in range(1, replay.last_seq + 1)]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(st.one_of(OPS, BACK), min_size=1, max_size=40),
    every=st.integers(1, 6),
    series=st.sampled_from([None, (2, 3)]),
)
def test_a_replay_from_a_checkpoint_equals_one_from_the_start_at_every_seq(
    ops: list[Op], every: int, series: tuple[int, int] | None
) -> None:
    """`series`: short usage and journal deques, so that a checkpoint's series reach
    back past what each checkpoint added (and what one added overflows them)."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        if series is not None:
            patch.setattr(mission, "USAGE_POINTS", series[0])
            patch.setattr(ledger, "JOURNAL", series[1])
        patch.setenv(ENV_FOLDER, str(Path(tmp) / "cache"))
        root = Path(tmp) / "state"
        write(root, ops)
        from_start = frames(root, NEVER)
        assert frames(root, every, cached=True) == from_start  # kept in the cache
        assert frames(root, every, cached=True) == from_start  # resumed from it
