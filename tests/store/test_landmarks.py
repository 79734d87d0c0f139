"""Landmarks of an events log: each kind lands on the event that shows it, agent text
stays data, and whatever the log, they come sorted, each on an event of its kind."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from store.analysis import landmarks
from store.analysis.landmarks import KINDS, LABEL_MAX, Landmark, Landmarks, first_cited
from store.format.load import EVENT_ADAPTER
from store.format.problems import Problem
from store.format.records import ApprovalRequest, Budget, Decision, Handoff, Plan
from tests.factory import T0

EVENTS = "missions/m/events.jsonl"
NO_DOCUMENTS: dict[str, Any] = {
    "plans": {},
    "requests": {},
    "decisions": {},
    "handoff": None,
    "budget": None,
}


def event(
    seq: int, type: str, actor: str = "agent", at: datetime | None = None, **fields: Any
) -> Any:
    record = {"seq": seq, "at": (at or T0 + timedelta(seconds=seq)).isoformat(), "prev": "0" * 64}
    return EVENT_ADAPTER.validate_json(
        json.dumps({**record, "type": type, "actor": actor, **fields})
    )


def step(seq: int, state: str, **fields: Any) -> Any:
    return event(seq, "step", step="s1", plan_version=1, state=state, **fields)


def usage(seq: int, usd: float, tokens: int = 0, steps: int = 0) -> Any:
    return event(seq, "usage", usd=usd, tokens=tokens, steps=steps)


def fed(*records: Any) -> Landmarks:
    marks = Landmarks()
    marks.add(enumerate(records, start=1))
    return marks


def test_failures_are_failed_blocked_or_unknown_steps_failed_attempts_errors_and_halts() -> None:
    marks = fed(
        step(1, "running"),
        step(2, "failed", reason="tests red"),
        step(3, "blocked"),
        step(4, "outcome_unknown"),
        event(5, "attempt", step="s1", attempt=1, phase="finished", tool="sh", outcome="ok"),
        event(6, "attempt", step="s1", attempt=2, phase="finished", tool="sh", outcome="error"),
        event(7, "error", message="disk full"),
        event(8, "heartbeat"),
        event(9, "halt", reason="operator said stop"),
    )
    assert marks.all() == [
        Landmark(2, "failure", "step s1 failed: tests red"),
        Landmark(3, "failure", "step s1 blocked"),
        Landmark(4, "failure", "step s1 outcome unknown"),
        Landmark(6, "failure", "attempt 2 of s1 failed: sh"),
        Landmark(7, "failure", "error: disk full"),
        Landmark(9, "failure", "halt: operator said stop"),
    ]


def test_a_handoff_is_an_actor_new_to_the_log_or_the_handoff_written() -> None:
    marks = fed(
        event(1, "heartbeat", actor="a"),
        event(2, "heartbeat", actor="b"),
        event(3, "heartbeat", actor="a"),  # back to a known actor: no handoff
        event(4, "heartbeat", actor="c"),
    )
    marks.place(
        **{
            **NO_DOCUMENTS,
            "handoff": Handoff.model_validate_json(
                json.dumps(handoff_at(T0 + timedelta(seconds=3)))
            ),
        }
    )
    assert marks.all() == [
        Landmark(2, "handoff", "handoff from a to b"),
        Landmark(3, "handoff", "handoff written at step s2"),
        Landmark(4, "handoff", "handoff from a to c"),
    ]


def handoff_at(at: datetime) -> dict[str, Any]:
    return {"schema": 1, "at": at.isoformat(), "current_step": "s2"}


def plan_at(version: int, at: datetime, reason: str = "") -> Plan:
    steps = [{"id": "s1", "title": "one"}]
    data = {"schema": 1, "version": version, "created_at": at.isoformat(), "author": "agent"}
    return Plan.model_validate_json(json.dumps({**data, "steps": steps, "reason": reason}))


def request_at(request_id: str, at: datetime) -> ApprovalRequest:
    return ApprovalRequest.model_validate_json(
        json.dumps(
            {
                "schema": 1,
                "id": request_id,
                "step": "s1",
                "plan_version": 1,
                "tool": "deploy",
                "args": {},
                "risk": "external_write",
                "requested_by": "agent",
                "requested_at": at.isoformat(),
            }
        )
    )


def decision_at(
    request_id: str, at: datetime, decision: str = "approve", **fields: Any
) -> Decision:
    return Decision.model_validate_json(
        json.dumps(
            {
                "schema": 1,
                "request": request_id,
                "digest": "sha256:" + "0" * 64,
                "decision": decision,
                "decided_by": "alice",
                "decided_at": at.isoformat(),
                **fields,
            }
        )
    )


def test_documents_land_on_the_first_event_at_or_after_their_time() -> None:
    # the clock steps back at event 3: event 4 is the first at or after T0+3.5s
    times = [T0 + timedelta(seconds=s) for s in (1, 2, 1.5, 4, 5)]
    marks = fed(*(event(n, "heartbeat", at=at) for n, at in enumerate(times, start=1)))
    second = timedelta(seconds=1)
    marks.place(
        plans={1: plan_at(1, T0), 2: plan_at(2, T0 + 3.5 * second, "split"), 3: None},
        requests={"r1": request_at("r1", T0 + 2 * second), "r2": request_at("r2", T0 + 9 * second)},
        decisions={"r1": decision_at("r1", T0 + 5 * second, "reject", reason="too risky")},
        handoff=None,
        budget=None,
    )
    assert marks.all() == [
        Landmark(1, "plan", "plan v1"),
        Landmark(2, "approval-asked", "approval r1 asked: deploy for s1"),
        Landmark(4, "plan", "plan v2: split"),
        Landmark(5, "approval-decided", "approval r1 rejected by alice"),
    ]  # r2 is newer than every event: it shows at none yet


def test_budget_thresholds_land_on_the_usage_that_first_reaches_them() -> None:
    marks = fed(
        usage(1, 1.0, tokens=10),
        usage(2, 8.0, tokens=20),
        usage(3, 7.0, tokens=90),  # usd went down: no second crossing
        usage(4, 9.0, tokens=100),
        usage(5, 12.0, tokens=100),
    )
    marks.place(**{**NO_DOCUMENTS, "budget": Budget(usd=10.0, tokens=100, wall_seconds=3)})
    assert marks.all() == [
        Landmark(2, "budget", "budget usd reached 80% of its limit"),
        Landmark(3, "budget", "budget tokens reached 80% of its limit"),
        Landmark(4, "budget", "budget tokens reached 100% of its limit"),
        Landmark(4, "budget", "budget time reached 80% of its limit"),  # T0+4s - T0+1s >= 2.4s
        Landmark(4, "budget", "budget time reached 100% of its limit"),
        Landmark(5, "budget", "budget usd reached 100% of its limit"),
    ]
    marks.place(**NO_DOCUMENTS)  # the limits removed: no thresholds
    assert marks.all() == []


def test_after_before_at_and_ticks() -> None:
    records = [event(n, "heartbeat") for n in range(1, 101)]
    for n in (10, 50, 90):
        records[n - 1] = event(n, "error", message=f"e{n}")
    marks = fed(*records)
    assert (marks.after(0), marks.after(10), marks.after(50), marks.after(90)) == (10, 50, 90, None)
    assert (marks.before(1), marks.before(10), marks.before(11), marks.before(100)) == (
        None,
        None,
        10,
        90,
    )
    assert marks.at(50) == [Landmark(50, "failure", "error: e50")] and marks.at(51) == []
    assert marks.ticks(100, 10) == (10, 50, 90)
    assert marks.ticks(100, 2) == (10, 90)  # one per stretch: 1..50 and 51..100


def test_hostile_text_is_cut_and_kept_as_data() -> None:
    hostile = "[bold red]x[/] \x1b]52;c;aGk=\x07 \u202e" + "y" * 500
    marks = fed(event(1, "error", message=hostile), event(2, "heartbeat", actor=hostile))
    first, second = marks.all()
    assert len(first.label) == LABEL_MAX and first.label.endswith("…")
    assert first.label.startswith(
        "error: [bold red]x[/] \x1b]52"
    )  # plain data: the widget escapes it
    assert second.kind == "handoff" and len(second.label) == LABEL_MAX


def test_lines_that_do_not_load_count_but_mark_nothing() -> None:
    problem = Problem(EVENTS, 2, "schema", "bad", "")
    marks = Landmarks()
    marks.add([(1, event(1, "heartbeat")), (2, problem), (3, event(3, "error", message="x"))])
    assert marks.lines == 3 and marks.all() == [Landmark(3, "failure", "error: x")]
    assert marks.seq_at(T0 + timedelta(seconds=2)) == 3  # the problem line has no time of its own


def test_the_first_problem_cited_is_the_earliest_events_line() -> None:
    found = [
        Problem("missions/m/plan/v1.json", None, "schema", "bad plan", ""),
        Problem(EVENTS, 40, "seq-gap", "gap", ""),
        Problem("missions/m/evidence.jsonl", 3, "schema", "bad evidence", ""),
        Problem(EVENTS, 12, "chain", "broken", ""),
        Problem(EVENTS, 90, "schema", "past the end", ""),
    ]
    assert first_cited(found, EVENTS, 80) == found[3]
    assert first_cited(found[:1], EVENTS, 80) is None


# ---- whatever the log ------------------------------------------------------------------------

SPEC = st.tuples(
    st.sampled_from(["heartbeat", "error", "halt", "usage", "step", "attempt", "bad"]),
    st.sampled_from(["a", "b", "c"]),
    st.integers(-3, 5),  # seconds after the previous line: clocks step back
    st.sampled_from(["running", "failed", "blocked", "succeeded", "outcome_unknown"]),
)


def build(specs: list[tuple[str, str, int, str]]) -> list[tuple[int, Any]]:
    lines: list[tuple[int, Any]] = []
    at = T0
    for seq, (kind, actor, step_back, state) in enumerate(specs, start=1):
        at += timedelta(seconds=step_back)
        fields: dict[str, Any] = {
            "heartbeat": {},
            "error": {"message": "m"},
            "halt": {"reason": "r"},
            "usage": {"usd": seq, "tokens": seq * 10, "steps": seq},
            "step": {"step": "s1", "plan_version": 1, "state": state},
            "attempt": {
                "step": "s1",
                "attempt": 1,
                "phase": "finished",
                "tool": "t",
                "outcome": "error",
            },
        }.get(kind, {})
        record = (
            Problem(EVENTS, seq, "schema", "bad", "")
            if kind == "bad"
            else event(seq, kind, actor, at, **fields)
        )
        lines.append((seq, record))
    return lines


@settings(max_examples=150, deadline=None)
@given(st.lists(SPEC, max_size=40), st.integers(0, 40), st.integers(-5, 60))
def test_landmarks_are_sorted_and_each_is_on_an_event_of_its_kind(
    specs: list[tuple[str, str, int, str]], split: int, plan_second: int
) -> None:
    lines = build(specs)
    marks = Landmarks()
    marks.add(lines[:split])  # fed in two reads, as the log grows
    marks.add(lines[split:])
    plan_time = T0 + timedelta(seconds=plan_second)
    marks.place(
        **{**NO_DOCUMENTS, "plans": {2: plan_at(2, plan_time, "again")}, "budget": Budget(usd=10.0)}
    )
    found = marks.all()
    assert [mark.seq for mark in found] == sorted(mark.seq for mark in found)
    records = dict(lines)
    loaded = [(n, r) for n, r in lines if not isinstance(r, Problem)]
    for mark in found:
        record = records[mark.seq]
        if mark.kind == "failure":
            assert record.type in ("error", "halt", "attempt") or record.state in (
                "failed",
                "blocked",
                "outcome_unknown",
            )
        elif mark.kind == "handoff":
            earlier = [r.actor for n, r in loaded if n < mark.seq]
            assert earlier and record.actor not in earlier
        elif mark.kind == "budget":
            assert record.type == "usage" and record.usd >= 8.0
            assert all(r.usd < 8.0 for n, r in loaded if n < mark.seq and r.type == "usage") or (
                record.usd >= 10.0
            )
        elif mark.kind == "plan":
            first = next(n for n, r in loaded if r.at >= plan_time)
            assert (mark.seq, mark.label) == (first, "plan v2: again")
    # nothing is missed: every failure event is a landmark
    failures = {n for n, r in loaded if r.type in ("error", "halt", "attempt")}
    failures |= {
        n for n, r in loaded if r.type == "step" and r.state != "running" and r.state != "succeeded"
    }
    assert failures <= {mark.seq for mark in found if mark.kind == "failure"}
    assert marks.after(0) == (found[0].seq if found else None)


@settings(max_examples=100, deadline=None)
@given(st.lists(SPEC, max_size=40))
def test_the_records_fed_one_by_one_make_what_every_line_makes(
    specs: list[tuple[str, str, int, str]],
) -> None:
    """The replay's fold feeds only the records (a reader delivers no line that does not
    load): the lines skipped count as lines that do not load, as a window read of them."""
    lines = build(specs)
    every = Landmarks()
    every.add(lines)
    records = Landmarks()
    for line, record in lines:
        if not isinstance(record, Problem):
            records.feed(record, line)
    if lines and isinstance(lines[-1][1], Problem):  # the last lines: found by a scan
        records.add(lines[records.lines :])
    assert records.dump() == every.dump()


def test_past_actors_kept_a_new_actor_is_no_longer_a_handoff(monkeypatch: Any) -> None:
    monkeypatch.setattr(landmarks, "ACTORS_KEPT", 3)
    marks = fed(*(event(n, "heartbeat", actor=f"a{n}") for n in range(1, 7)))
    assert [mark.seq for mark in marks.all()] == [2, 3]  # a1, a2, a3 kept: a4.. are not noted


def test_landmarks_dumped_come_back_the_same_and_feed_on() -> None:
    marks = fed(step(1, "running"), usage(2, 5.0), event(3, "error", actor="b", message="x"))
    budget = {**NO_DOCUMENTS, "budget": Budget(schema=1, usd=5.0)}
    loaded = Landmarks.load(marks.dump())
    assert loaded is not None
    for both in (marks, loaded):
        both.add([(4, event(4, "halt", actor="c", reason="stop"))])
        both.place(**budget)
    assert loaded.all() == marks.all() and loaded.lines == 4
    kinds = ["budget", "budget", "handoff", "failure", "handoff", "failure"]
    assert [mark.kind for mark in loaded.all()] == kinds


def test_dumped_landmarks_whose_parts_disagree_are_refused() -> None:
    dumped = fed(step(1, "running"), step(2, "failed")).dump()
    assert Landmarks.load(msgspec.structs.replace(dumped, lines=3)) is None
    assert Landmarks.load(msgspec.structs.replace(dumped, seqs=dumped.seqs[:-1])) is None
    assert Landmarks.load(msgspec.structs.replace(dumped, kinds=bytes([len(KINDS)]))) is None
    assert Landmarks.load(msgspec.structs.replace(dumped, text=b"")) is None
