"""A folded state decoded from the cache (store.cache.state) holds its values shared as a
fresh fold does: equal strings one object (interned), an event's time one object across
the aggregates that keep it, a step's holders one frozenset across missions. Otherwise
each restored mission costs a quarter more memory than the fold it stands for."""

from __future__ import annotations

from pathlib import Path

from store.cache.state import decode_state, encode_state
from store.derivation.mission import EVENT_AGGREGATES, MissionState
from store.format.layout import classify
from tests.factory import mission


def folded(root: Path, mission_id: str) -> MissionState:
    state = MissionState(root, mission_id)
    located = classify(f"missions/{mission_id}/events.jsonl")
    assert located is not None
    state.apply(located)
    return state


def test_a_decoded_fold_shares_its_strings_times_and_holders(tmp_path: Path) -> None:
    for name in ("a", "b"):
        made = mission(tmp_path, name)
        made.step("s1", "running")
        made.step("s2", "blocked", reason="waiting")
    one, two = (
        decode_state(encode_state(folded(tmp_path, name).saved(EVENT_AGGREGATES)))
        for name in ("a", "b")
    )
    first, second = one["step_latest"]["s2"], two["step_latest"]["s2"]
    assert first.actor == second.actor and first.actor is second.actor
    assert first.state is second.state
    assert one["last_event_at"] == first.at and one["last_event_at"] is first.at
    assert one["ledger"].holders["s1"] is two["ledger"].holders["s1"]
    assert one["ledger"].holders["s1"] is one["ledger"].holders["s2"]
