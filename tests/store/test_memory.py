"""What a mission's state retains once scanned (issue 25: 10,000 missions in 400 MB).

The HUD holds every mission's fold and documents for as long as it runs, so each byte a
mission keeps is ten megabytes at 10,000 missions: a step's latest event is kept as the
fields read of it, documents drop their raw tree once a record came of them (a request's
is read again), and their records share the sets of fields given.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from pydantic import BaseModel

from store.cache.state import decode_state, encode_state
from store.derivation.mission import EVIDENCE_AGGREGATES, MissionState
from store.format.records import Constraints, PlanStep, share_field_sets
from store.index.workspace import Workspace
from tests.factory import Mission, mission

STEPS = ["s1", "s2", "s3", "s4", "s5"]


def busy_mission(root: Path, mission_id: str) -> Mission:
    """A mission as the benchmark writes them: a plan of five steps, 20 events."""
    built = mission(root, mission_id)
    built.plan(1, steps=STEPS)
    for n in range(20):
        if n % 10 == 9:
            built.usage(n / 1000, n * 10, n // 10)
        else:
            built.step(STEPS[n % 5], "running" if n % 2 else "verifying", reason="bench")
    return built


def scanned(root: Path) -> MissionState:
    workspace = Workspace(root)
    workspace.scan()
    return workspace.missions["m1"]


def test_a_steps_latest_keeps_no_record(tmp_path: Path) -> None:
    busy_mission(tmp_path, "m1")
    latest = scanned(tmp_path).step_latest["s5"]
    assert not any(isinstance(value, BaseModel) for value in latest)
    assert (latest.state, latest.plan_version, latest.actor, latest.reason) == (
        "verifying",
        1,
        "agent",
        "bench",
    )
    assert latest.line == 15


def test_evidence_kept_is_small_and_steps_share_their_holders(tmp_path: Path) -> None:
    for name in ("m1", "m2"):
        built = busy_mission(tmp_path, name)
        built.evidence("s1", "pass")
        built.evidence("s2", "fail")
    workspace = Workspace(tmp_path)
    workspace.scan()
    first, second = workspace.missions["m1"], workspace.missions["m2"]
    assert [tuple(seen) for seen in first.recent_evidence] == [
        (1, "e1", "s1", "pass"),
        (2, "e2", "s2", "fail"),
    ]
    passed = [m.passes["s1"][0][1] for m in (first, second)]
    assert passed[0].__pydantic_fields_set__ is passed[1].__pydantic_fields_set__
    holders = [m.ledger.holders[step] for m in (first, second) for step in STEPS]
    assert holders[0] == {"agent"} and all(held is holders[0] for held in holders)


def test_documents_keep_their_raw_tree_only_where_it_is_read_again(tmp_path: Path) -> None:
    built = busy_mission(tmp_path, "m1")
    built.request("r1")
    built.handoff()
    state = scanned(tmp_path)
    kept = [state.intent, state.constraints, state.handoff, state.plans[1]]
    assert all(loaded is not None and loaded.record is not None for loaded in kept)
    assert [loaded.raw for loaded in kept if loaded is not None] == [None] * 4
    assert state.requests["r1"].raw is not None  # its digest, its args as written
    assert state.decision_is_current("r1") is None  # not decided: still derived

    built.plan(2, steps="not a list")  # type: ignore[arg-type]
    again = scanned(tmp_path)
    assert again.plans[2].record is None and again.plans[2].raw is not None


def test_records_share_the_sets_of_fields_given(tmp_path: Path) -> None:
    busy_mission(tmp_path, "m1")
    busy_mission(tmp_path, "m2")
    workspace = Workspace(tmp_path)
    workspace.scan()
    plans = [workspace.missions[m].plans[1].record for m in ("m1", "m2")]
    given = {id(step.__pydantic_fields_set__) for plan in plans if plan for step in plan.steps}
    assert len(given) == 1
    assert plans[0] is not None and plans[0].steps[0].model_fields_set == {"id", "title"}


def test_a_shared_set_is_never_changed_and_unknown_fields_keep_their_own() -> None:
    first = Constraints.model_validate_json(b'{"schema": 1}')
    second = Constraints.model_validate_json(b'{"schema": 1}')
    share_field_sets(first)
    share_field_sets(second)
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    copied = first.model_copy(update={"revision": 2})
    assert copied.model_fields_set == {"schema_version", "revision"}
    assert first.model_fields_set == {"schema_version"}

    odd = PlanStep.model_validate_json(b'{"id": "a", "title": "t", "extra": 1}')
    other = PlanStep.model_validate_json(b'{"id": "a", "title": "t", "extra": 1}')
    share_field_sets(odd)
    share_field_sets(other)
    assert odd.__pydantic_fields_set__ is not other.__pydantic_fields_set__


def retained_per_mission(root: Path, missions: int) -> float:
    """Bytes of Python heap a scanned workspace holds per mission (tracemalloc)."""
    Workspace(root / "warm").scan()  # imports, validators built, caches filled
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        workspace = Workspace(root / "state")
        workspace.scan()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(workspace.missions) == missions
    return held / missions


def test_a_scanned_mission_retains_under_20_kb(tmp_path: Path) -> None:
    busy_mission(tmp_path / "warm", "w1")
    for n in range(40):
        busy_mission(tmp_path / "state", f"m{n:02d}")
    # 31 KB before: each step's whole StepEvent, every document's raw tree, a set of
    # the fields given per record, an instance dict of 45 keys per mission
    assert retained_per_mission(tmp_path, 40) < 20_000


def test_records_a_cached_fold_brings_back_share_their_field_sets(tmp_path: Path) -> None:
    built = busy_mission(tmp_path, "m1")
    built.evidence("s1", "pass")
    state = scanned(tmp_path)
    saved = encode_state(state.saved(EVIDENCE_AGGREGATES))
    passed = [decode_state(saved)["passes"]["s1"][0][1] for _ in range(2)]
    assert passed[0] is not passed[1]
    assert passed[0].__pydantic_fields_set__ is passed[1].__pydantic_fields_set__
