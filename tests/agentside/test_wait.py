"""`store.writers.agent.wait_for_decision`: cheap polling, stopping at the deadline or the
request's expiry, answering at once when there is nothing to wait for, never using the
approval."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

import store.writers.agent
from store.writers.agent import AgentWriter, authorize, find_attempt, wait_for_decision
from tests.agentside.conftest import MISSION, Approver


@pytest.fixture
def writer(root: Path) -> AgentWriter:
    agent = AgentWriter(root, MISSION, "agent")
    agent.write_plan([{"id": "deploy", "title": "Deploy", "risk": "external_write"}])
    return agent


def ask(writer: AgentWriter, request_id: str = "r1", valid_for: float = 60) -> None:
    writer.request_approval(
        request_id,
        "deploy",
        1,
        "deploy",
        {},
        "external_write",
        valid_for=timedelta(seconds=valid_for),
    )


def test_polls_the_decision_name_every_poll_and_stops_at_the_deadline(
    writer: AgentWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    ask(writer)
    looks: list[str] = []

    def counting(path: str | os.PathLike[str]) -> bool:
        looks.append(os.fspath(path))
        return os.path.exists(path)

    monkeypatch.setattr(store.writers.agent.os.path, "lexists", counting)
    started = time.monotonic()
    auth = wait_for_decision(writer.root, MISSION, "r1", 1.0)
    assert 1.0 <= time.monotonic() - started < 1.5
    assert auth.reason == "not decided"
    assert 4 <= len(looks) <= 7 and all(p.endswith("approvals/r1.toml") for p in looks)


def test_stops_when_the_request_expires(writer: AgentWriter) -> None:
    ask(writer, valid_for=0.3)
    started = time.monotonic()
    auth = wait_for_decision(writer.root, MISSION, "r1", 30)
    assert time.monotonic() - started < 1.5
    assert auth.reason.startswith("expired: request expired at")


def test_returns_once_decided_without_using_the_approval(
    writer: AgentWriter, approver: Callable[..., Approver]
) -> None:
    decided = approver()
    ask(writer)
    assert wait_for_decision(writer.root, MISSION, "r1", 10).ok
    decided.join()
    assert authorize(writer.root, MISSION, "r1").ok  # still usable: waiting used nothing
    assert wait_for_decision(writer.root, MISSION, "r1", 10).ok  # decided: at once


def test_answers_at_once_for_a_request_that_does_not_exist(writer: AgentWriter) -> None:
    started = time.monotonic()
    assert wait_for_decision(writer.root, MISSION, "nope", 30).reason == "no such request"
    assert time.monotonic() - started < 0.5


def test_find_attempt_finds_the_start_by_its_key(writer: AgentWriter) -> None:
    writer.attempt("deploy", 7, "started", "deploy", idempotency_key="toolu_9")
    writer.attempt("deploy", 7, "finished", "deploy", idempotency_key="toolu_9", outcome="ok")
    found = find_attempt(writer.root, MISSION, "toolu_9")
    assert found is not None and (found.seq, found.attempt, found.step) == (1, 7, "deploy")
    assert find_attempt(writer.root, MISSION, "toolu_8") is None
