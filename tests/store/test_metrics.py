"""Coordination metrics: each one counted from the records docs/metrics.md names, over a
window; the directory's sums; series that add up to the counts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import store.derivation.ledger
from store.analysis.metrics import Metrics, Ratio, directory_metrics, mission_metrics
from store.index.workspace import Workspace
from tests.factory import T0, Mission, mission, stamp, toml_text

SINCE, UNTIL = T0 - timedelta(hours=1), T0 + timedelta(hours=1)
Build = Callable[[Mission], Any]


def metrics_of(built: Mission, since: Any = SINCE) -> Metrics:
    workspace = Workspace(built.root, clock=lambda: UNTIL)
    workspace.scan()
    return mission_metrics(workspace.missions[built.id], since, UNTIL, buckets=4)


def step(m: Mission, step: str, state: str, actor: str = "agent", version: int = 1) -> None:
    m.append("events", type="step", actor=actor, step=step, plan_version=version, state=state)


def call(m: Mission, tool: str, outcome: str, attempt: int = 1, **fields: Any) -> None:
    m.event(
        "attempt",
        step="s1",
        attempt=attempt,
        phase="finished",
        tool=tool,
        outcome=outcome,
        **fields,
    )


def started(m: Mission, attempt: int, key: str, **fields: Any) -> None:
    m.event(
        "attempt",
        step="s1",
        attempt=attempt,
        phase="started",
        tool="deploy",
        args={"target": "prod"},
        effect_possible=True,
        idempotency_key=key,
        **fields,
    )


def at(seconds: int) -> str:
    return stamp(T0 + timedelta(seconds=seconds))


@pytest.fixture
def m(tmp_path: Path) -> Mission:
    return mission(tmp_path, "m")


def handed_over(m: Mission, then: Build) -> None:
    step(m, "s1", "running")
    then(m)


@pytest.mark.parametrize(
    ("build", "name", "expected"),
    [
        (
            lambda m: handed_over(m, lambda m: (m.evidence("s1"), step(m, "s1", "succeeded", "b"))),
            "handoffs",
            Ratio(1, 1),
        ),
        (lambda m: handed_over(m, lambda m: step(m, "s2", "failed", "b")), "handoffs", Ratio(0, 1)),
        (
            lambda m: handed_over(
                m, lambda m: m.append("events", type="halt", actor="b", reason="x")
            ),
            "handoffs",
            Ratio(0, 1),
        ),
        (lambda m: handed_over(m, lambda m: step(m, "s1", "running", "b")), "handoffs_open", 1),
        (
            lambda m: (
                step(m, "s1", "running"),
                step(m, "s1", "running", "b"),
                step(m, "s1", "verifying"),
            ),
            "conflicts",
            1,
        ),
        (
            lambda m: (
                step(m, "s1", "running"),
                step(m, "s1", "blocked", "b"),
                step(m, "s1", "running"),
            ),
            "conflicts",
            0,  # b gave the step back (blocked): no one else holds it
        ),
        (
            lambda m: (
                m.request("r1"),
                m.decision("r1", digest="sha256:" + "0" * 64, decided_at=at(5)),
            ),
            "conflicts",
            1,
        ),
        (
            lambda m: (m.plan(2), step(m, "s1", "running", version=2), step(m, "s2", "running")),
            "stale_context",
            1,
        ),
        (lambda m: (m.succeed("s1"), m.succeed("s2"), m.succeed("s1")), "rework", Ratio(1, 3)),
        (
            lambda m: (call(m, "a", "ok"), call(m, "a", "error"), call(m, "b", "unknown")),
            "tool_errors",
            Ratio(2, 3),
        ),
        (
            lambda m: (call(m, "a", "ok"), call(m, "a", "error"), call(m, "b", "unknown")),
            "tools",
            {"a": Ratio(1, 2), "b": Ratio(1, 1)},
        ),
        (
            lambda m: (
                m.request("r1"),
                m.decision("r1", "reject"),
                m.request("r2"),
                m.decision("r2"),
                m.request("r3"),
            ),
            "rejections",
            Ratio(1, 2),
        ),
        (
            lambda m: (
                m.request("r1", expires_at=at(30)),
                m.request("r2", step="zz", plan_version=9),
            ),
            "rejections",
            Ratio(1, 1),  # r1 expired unused; r2 names no plan that holds: nothing is stale yet
        ),
        (lambda m: (step(m, "s1", "running"), step(m, "s2", "blocked")), "escalation", Ratio(1, 2)),
        (
            lambda m: (step(m, "s1", "running"), step(m, "s2", "running"), m.request("r1")),
            "escalation",
            Ratio(1, 2),
        ),
        (lambda m: m.request("r1", requested_at=at(-7200)), "escalation", Ratio(0, 0)),
        (  # seed 004: a crash between start and finish, then a retry
            lambda m: (started(m, 1, "k1"), started(m, 2, "k1"), call(m, "deploy", "ok", 2)),
            "tool_errors",
            Ratio(1, 2),  # attempt 1 never finished: it counts, as an error
        ),
        (lambda m: started(m, 1, "k1"), "tool_errors", Ratio(0, 0)),  # still running
        (
            lambda m: (started(m, 1, "k1"), step(m, "s1", "failed")),
            "tools",
            {"deploy": Ratio(1, 1)},
        ),
        (
            lambda m: (started(m, 1, "k1"), m.event("halt", reason="stopped")),
            "tool_errors",
            Ratio(1, 1),
        ),
        (  # redone under a new key after it finished ok; replayed while unknown
            lambda m: (
                started(m, 1, "k1"),
                call(m, "deploy", "ok"),
                started(m, 2, "k2"),
                started(m, 3, "k3"),
            ),
            "duplicate_effects",
            2,
        ),
        (
            lambda m: (
                started(m, 1, "k1"),
                call(m, "deploy", "ok", external_ref="vm-7"),
                started(m, 2, "k1", external_ref="vm-9"),
            ),
            "stale_context",
            1,  # the id of what it made, forgotten
        ),
        (  # budget spent five times over, still running: the step needs a human
            lambda m: (step(m, "s1", "running"), m.usage(50.0, 100, 1)),
            "escalation",
            Ratio(1, 1),
        ),
        (
            lambda m: (step(m, "s1", "running"), m.usage(5.0, 100, 1)),
            "escalation",
            Ratio(0, 1),
        ),
    ],
)
def test_each_metric(m: Mission, build: Build, name: str, expected: Any) -> None:
    build(m)
    assert getattr(metrics_of(m), name) == expected


def test_recovery_time_from_first_trouble_to_the_next_success(m: Mission) -> None:
    step(m, "s1", "failed")  # T0+1
    step(m, "s1", "blocked")  # T0+2: still the same trouble
    m.succeed("s1")  # evidence T0+3, succeeded T0+4
    step(m, "s2", "outcome_unknown")
    recovery = metrics_of(m).recovery
    assert (recovery.count, recovery.median, recovery.max, recovery.open) == (1, 3.0, 3.0, 1)


def test_approval_latency_and_time_waiting(m: Mission) -> None:
    m.request("r1", requested_at=at(10))
    m.decision("r1", decided_at=at(70))
    m.request("r2", requested_at=at(40), expires_at=at(100))
    m.request("r3", requested_at=at(500))
    m.decision("r3", decided_at=at(600))
    found = metrics_of(m)
    assert (found.approval_latency.count, found.approval_latency.median) == (2, 80.0)
    assert found.approval_latency.p90 == 100.0
    assert found.waiting_seconds == 90 + 100
    assert sum(found.series["waiting_seconds"]) == pytest.approx(190)


def test_waiting_ends_when_a_newer_plan_left_the_request_stale(m: Mission) -> None:
    m.request("r1", requested_at=at(0))
    m.plan(2, steps=["s2"], created_at=at(30))  # drops s1: r1 is stale from here
    assert metrics_of(m).waiting_seconds == 30


def test_only_the_window_counts(m: Mission) -> None:
    m.succeed("s1")
    m.succeed("s1")
    assert metrics_of(m).rework == Ratio(1, 2)
    assert metrics_of(m, since=T0 + timedelta(seconds=3)).rework == Ratio(1, 1)
    assert metrics_of(m, since=T0 + timedelta(minutes=5)).rework == Ratio(0, 0)


def test_series_add_up_to_the_counts(m: Mission) -> None:
    handed_over(m, lambda m: (m.evidence("s1"), step(m, "s1", "succeeded", "b")))
    call(m, "a", "error")
    m.succeed("s1")
    found = metrics_of(m)
    assert all(len(values) == 4 for values in found.series.values())
    assert sum(found.series["handoffs"]) == 1
    assert sum(found.series["rework"]) == found.rework.count == 1
    assert sum(found.series["calls"]) == found.tool_errors.of == 1
    assert sum(found.series["tool_errors"]) == found.tool_errors.count == 1


def test_the_directory_sums_its_missions_and_counts_human_edits(tmp_path: Path) -> None:
    a, b = mission(tmp_path, "a"), mission(tmp_path, "b")
    for built in (a, b):
        built.succeed("s1")
        built.succeed("s1")
    (b.dir / "history").mkdir()
    old = {"schema": 1, "title": "old", "created_by": "ann", "created_at": T0}
    (b.dir / "history/intent.r1.toml").write_text(toml_text(old))
    b.intent("new", revision=2, edited_by="bob", edited_at=stamp(T0 + timedelta(minutes=1)))
    workspace = Workspace(tmp_path, clock=lambda: UNTIL)
    workspace.scan()
    report = directory_metrics(workspace, SINCE)
    assert sorted(report.missions) == ["a", "b"]
    assert report.total.rework == Ratio(2, 4)
    assert (report.missions["a"].human_edits, report.missions["b"].human_edits) == (0, 1)
    assert report.total.human_edits == 1 and report.partial == {}
    assert report.bucket_seconds == 7200 / 24


def test_a_ledger_that_dropped_marks_is_counted_from_its_oldest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.derivation.ledger, "JOURNAL", 3)
    built = mission(tmp_path, "m")
    for _ in range(3):
        built.succeed("s1")
    workspace = Workspace(tmp_path, clock=lambda: UNTIL)
    workspace.scan()
    report = directory_metrics(workspace, SINCE)
    assert report.partial == {"m": T0 + timedelta(seconds=4)}
