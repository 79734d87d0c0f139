"""Replay: the mission as of any event equals what a fresh read of the records written by
then derives, and at the last event what the live index derives; documents count as of
their own times; jumps go through checkpoints of the one fold."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import tomllib
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.analysis.replay import Moment, Replay, moment
from store.derivation.derive import budget_use, request_status
from store.derivation.mission import EVENT_AGGREGATES, EVIDENCE_AGGREGATES, MissionState
from store.index.workspace import Workspace
from tests.factory import T0, Mission, chain, mission, stamp

STEPS = ["s1", "s2", "s3"]
HALF = timedelta(milliseconds=500)
STATES = ["ready", "running", "verifying", "succeeded", "failed", "blocked", "outcome_unknown"]


# ---- the fold's aggregates are all saved ---------------------------------------------------


@pytest.mark.parametrize(
    ("reset", "names"),
    [("_reset_events", EVENT_AGGREGATES), ("_reset_evidence", EVIDENCE_AGGREGATES)],
)
def test_what_a_reset_sets_is_what_a_checkpoint_saves(
    tmp_path: Path, reset: str, names: tuple[str, ...]
) -> None:
    state = MissionState(tmp_path, "m")
    unset = object()
    for name in MissionState.__slots__:
        setattr(state, name, unset)
    getattr(state, reset)()
    kept = {name for name in MissionState.__slots__ if getattr(state, name) is not unset}
    assert kept == set(names)


def test_a_restored_copy_is_not_shared(tmp_path: Path) -> None:
    built = mission(tmp_path, "m")
    built.step("s1", "running")
    workspace = Workspace(tmp_path)
    workspace.scan()
    state = workspace.missions["m"]
    saved = state.saved(EVENT_AGGREGATES)
    other = MissionState(tmp_path, "m")
    other.restore(saved)
    other.step_latest.clear()
    other.ledger.actors.clear()
    assert "s1" in saved["step_latest"] and saved["ledger"].actors == {"agent": 1}


# ---- a small run, event by event ------------------------------------------------------------


@pytest.fixture
def run(tmp_path: Path) -> Mission:
    """Plan v1 at T0; s1 runs and succeeds; a request for s2, plan v2, a decision, a halt
    (each document half a second after the event before it)."""
    built = mission(tmp_path, "m")
    built.step("s1", "running")  # 1
    built.usage(0.5, 100, 1)  # 2
    built.evidence("s1")
    built.step("s1", "succeeded")  # 3
    built.step("s2", "waiting_for_approval")  # 4
    built.request("r1", step="s2", requested_at=stamp(built.clock + HALF))
    built.event("heartbeat")  # 5
    built.plan(2, steps=["s1", "s2", "s3"], created_at=stamp(built.clock + HALF))
    built.decision("r1", decided_at=stamp(built.clock + HALF))
    built.step("s2", "running", plan_version=2)  # 6
    built.event("halt", reason="done for today")  # 7
    return built


def frame_at(built: Mission, seq: int, every: int = 2) -> Any:
    replay = Replay(built.root, built.id, every=every)
    assert replay.refresh()
    return replay.frame(seq)


@pytest.mark.parametrize(
    ("seq", "status", "plan", "states", "requests", "changed"),
    [
        (1, "running", 1, {"s1": "running"}, {}, {("step", "s1"), ("status", "")}),
        (2, "running", 1, {"s1": "running"}, {}, {("budget", "usd"), ("budget", "tokens")}),
        (
            3,
            "idle",
            1,
            {"s1": "succeeded"},
            {},
            {("step", "s1"), ("status", ""), ("evidence", "e1")},
        ),
        (4, "running", 1, {"s2": "waiting_for_approval"}, {}, {("step", "s2"), ("status", "")}),
        (5, "needs_you", 1, {}, {"r1": "pending"}, {("request", "r1"), ("status", "")}),
        (6, "running", 2, {"s2": "running", "s3": None}, {"r1": "approved"}, {("plan", "")}),
        (7, "blocked", 2, {}, {"r1": "approved"}, {("halt", ""), ("status", "")}),
    ],
)
def test_each_event_shows_the_state_then_and_what_changed(
    run: Mission,
    seq: int,
    status: str,
    plan: int,
    states: dict[str, str | None],
    requests: dict[str, str],
    changed: set[tuple[str, str]],
) -> None:
    frame = frame_at(run, seq)
    now = frame.moment
    assert (now.seq, frame.previous.seq, frame.last_seq) == (seq, seq - 1, 7)
    assert now.status == status and now.plan_version == plan
    shown = {step.id: step.state for step in now.steps}
    assert {step: shown[step] for step in states} == states
    assert {r.id: r.status for r in now.requests} == requests
    assert changed <= {(c.what, c.key) for c in frame.changes}


def test_documents_count_from_their_own_time(run: Mission) -> None:
    before, after = frame_at(run, 5).moment, frame_at(run, 6)
    assert before.plan_version == 1 and [r.id for r in before.requests] == ["r1"]
    assert after.moment.plan_version == 2
    assert ("request", "r1", "pending", "approved") in {
        (c.what, c.key, c.before, c.after) for c in after.changes
    }
    assert frame_at(run, 4).moment.requests == ()  # requested after event 4


def test_the_event_is_described(run: Mission) -> None:
    assert frame_at(run, 2).moment.event == "usage 0.50 usd, 100 tokens, 1 steps"
    assert frame_at(run, 7).moment.event == "halt: done for today"
    assert frame_at(run, 7).moment.halt == "done for today"


@pytest.mark.parametrize("seq", [0, 8, -1])
def test_a_position_outside_the_log_is_refused(run: Mission, seq: int) -> None:
    replay = Replay(run.root, run.id)
    replay.refresh()
    with pytest.raises(ValueError, match="no event"):
        replay.frame(seq)


def test_a_mission_that_is_not_there(tmp_path: Path) -> None:
    assert not Replay(tmp_path, "nope").refresh()


def test_log_problems_count_from_their_line(tmp_path: Path) -> None:
    built = mission(tmp_path, "m")
    records = [
        {"type": "step", "actor": "a", "step": "s1", "plan_version": 1, "state": "running"},
        {"type": "heartbeat", "actor": "a"},
        {"type": "heartbeat", "actor": "a"},
    ]
    data = chain([{**r, "at": stamp(T0 + timedelta(seconds=n))} for n, r in enumerate(records)])
    lines = data.splitlines(keepends=True)
    link = lines[2].index(b'"prev":"') + len(b'"prev":"')
    lines[2] = (
        lines[2][:link]
        + (b"1" if lines[2][link : link + 1] == b"0" else b"0")
        + lines[2][link + 1 :]
    )
    (built.dir / "events.jsonl").write_bytes(b"".join(lines))
    replay = Replay(tmp_path, "m")
    replay.refresh()
    codes = [[p.code for p in replay.frame(seq).moment.problems] for seq in (1, 2, 3)]
    assert "chain-broken" not in codes[1] and "chain-broken" in codes[2]
    assert replay.frame(3).moment.status == "needs_you"
    assert replay.frame(2).moment.status == "running"


def test_refresh_reads_what_was_appended_and_a_rewrite_starts_again(run: Mission) -> None:
    replay = Replay(run.root, run.id, every=2)
    replay.refresh()
    checkpoints = len(replay.mission.event_checkpoints)
    run.step("s3", "running", plan_version=2)
    run.step("s3", "succeeded", plan_version=2)
    replay.refresh()
    assert replay.last_seq == 9 and len(replay.mission.event_checkpoints) > checkpoints
    assert replay.frame(9).moment.event == "step s3 succeeded"
    log = run.dir / "events.jsonl"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:4]))
    replay.refresh()
    assert replay.last_seq == 4 and replay.mission.event_checkpoints[-1].line <= 4
    assert replay.frame(4).moment.steps[1].state == "waiting_for_approval"


# ---- random runs: the replay equals a fresh read of what was written by then -------------------

Op = tuple[Any, ...]
OPS = st.one_of(
    st.tuples(
        st.just("step"),
        st.sampled_from(STEPS),
        st.sampled_from(STATES),
        st.sampled_from(["agent", "other"]),
        st.integers(1, 2),
    ),
    st.tuples(st.just("usage"), st.integers(0, 50)),
    st.tuples(
        st.just("attempt"),
        st.sampled_from(STEPS),
        st.sampled_from(["started", "finished"]),
        st.booleans(),
        st.sampled_from(["", "k"]),
    ),
    st.tuples(st.just("evidence"), st.sampled_from(STEPS), st.sampled_from(["pass", "fail"])),
    st.tuples(st.just("halt")),
    st.tuples(st.just("plan")),
    st.tuples(st.just("request"), st.sampled_from(STEPS)),
    st.tuples(st.just("decide"), st.sampled_from(["approve", "reject"])),
)


def play(root: Path, ops: list[Op]) -> Mission:
    """Write the ops as an agent and a human would, each at the clock of the last line;
    the log ends with a heartbeat, after every document."""
    built = mission(root, "m")
    versions, requests = 1, 0
    for op in ops:
        kind = op[0]
        if kind == "step":
            _, step, state, actor, version = op
            built.append(
                "events", type="step", actor=actor, step=step, plan_version=version, state=state
            )
        elif kind == "usage":
            built.usage(op[1] / 10, op[1] * 10, op[1])
        elif kind == "attempt":
            _, step, phase, effects, key = op
            outcome = {"outcome": "ok"} if phase == "finished" else {}
            built.event(
                "attempt",
                step=step,
                attempt=1,
                phase=phase,
                tool="t",
                idempotency_key=key,
                effect_possible=effects,
                **outcome,
            )
        elif kind == "evidence":
            built.evidence(op[1], op[2])
        elif kind == "halt":
            built.event("halt", reason="stop")
        elif kind == "plan" and versions < 3:
            versions += 1
            built.plan(versions, steps=STEPS, created_at=stamp(built.clock))
        elif kind == "request":
            requests += 1
            built.request(
                f"r{requests}", step=op[1], plan_version=versions, requested_at=stamp(built.clock)
            )
        elif (
            kind == "decide"
            and requests
            and not built.dir.joinpath(f"approvals/r{requests}.toml").exists()
        ):
            reason = {"reason": "no"} if op[1] == "reject" else {}
            built.decision(f"r{requests}", op[1], decided_at=stamp(built.clock), **reason)
    built.event("heartbeat")
    return built


def _time(path: Path) -> datetime | None:
    """The time a document was written at, as the replay reads it."""
    if path.suffix == ".toml":
        value = tomllib.loads(path.read_text()).get("decided_at")
    else:
        raw = json.loads(path.read_bytes())
        value = raw.get("created_at") or raw.get("requested_at") or raw.get("at")
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def written_by(root: Path, into: Path, seq: int, at: datetime, evidence: int) -> Path:
    """A copy of the directory holding only what was written by event `seq` at `at`."""
    shutil.copytree(root, into)
    folder = into / "missions" / "m"
    for log, keep in (("events", seq), ("evidence", evidence)):
        path = folder / f"{log}.jsonl"
        if path.exists():
            kept = path.read_bytes().splitlines(keepends=True)[:keep]
            path.write_bytes(b"".join(kept)) if kept else path.unlink()
    for path in [*folder.glob("plan/*.json"), *folder.glob("approvals/*"), folder / "handoff.json"]:
        when = _time(path) if path.exists() else None
        if when is not None and when > at:
            path.unlink()
    return into


def normal(shown: Moment) -> Moment:
    """A moment without the event's words, its problems in a fixed order."""
    problems = tuple(sorted(shown.problems, key=lambda p: (p.path, p.line or 0, p.code)))
    return dataclasses.replace(shown, event="", actor=None, problems=problems)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OPS, min_size=1, max_size=30), every=st.integers(1, 5), data=st.data())
def test_the_state_at_any_event_equals_a_fresh_read_of_what_was_written_by_then(
    ops: list[Op], every: int, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "state"
        built = play(root, ops)
        replay = Replay(root, built.id, every=every)
        replay.refresh()
        last = replay.last_seq
        seqs = {last, data.draw(st.integers(1, last)), data.draw(st.integers(1, last))}
        shown_all = [
            m
            for seq in sorted(seqs)
            for m in (replay.frame(seq).moment, replay.frame(seq).previous)
        ]
        for index, shown in enumerate(shown_all):
            if shown.seq == 0:
                continue
            at = shown.at
            assert at is not None
            into = Path(tmp) / f"copy{index}"
            copy = written_by(root, into, shown.seq, at, shown.evidence_lines)
            fresh = Workspace(copy, clock=lambda at=at: at)
            fresh.scan()
            state = fresh.missions["m"]
            expected = moment(state, shown.seq, at, None, at, fresh.settings, shown.evidence_lines)
            assert normal(shown) == normal(expected)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OPS, min_size=1, max_size=30))
def test_the_last_event_equals_the_live_state(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "state"
        play(root, ops)
        replay = Replay(root, "m", every=3)
        replay.refresh()
        shown = replay.frame(replay.last_seq).moment
        assert shown.at is not None
        live = Workspace(root, clock=lambda: shown.at)
        live.scan()
        state = live.missions["m"]
        assert shown.status == live.status("m").value
        assert shown.budget == budget_use(state, shown.at).limits
        assert {r.id: r.status for r in shown.requests} == {
            r: request_status(state, r, shown.at).value for r in state.requests
        }
        assert {s.id: s.state for s in shown.steps if s.state} == {
            step: latest.state for step, latest in state.step_latest.items()
        }
        assert [e.id for e in shown.evidence] == [e.id for e in state.recent_evidence][-20:]
        assert sorted(map(str, shown.problems)) == sorted(map(str, state.problems()))


@pytest.mark.parametrize("every", [1, 1000])
def test_an_event_whose_time_steps_back_shows_the_evidence_of_its_own_time(
    tmp_path: Path, every: int
) -> None:
    built = mission(tmp_path, "m")
    built.event("heartbeat", at=T0 + timedelta(seconds=2))  # 1
    built.evidence("s1", at=T0 + timedelta(seconds=1))
    built.event("heartbeat", at=T0)  # 2: before the evidence
    replay = Replay(tmp_path, "m", every=every)
    replay.refresh()
    frame = replay.frame(2)
    assert [e.id for e in frame.previous.evidence] == ["e1"]
    assert frame.previous.evidence_lines == 1
    assert frame.moment.evidence == () and frame.moment.evidence_lines == 0
