"""store.writers.agent's reads against a hostile state directory: confined, never blocking.

`authorize()` decides whether an effect may run; what it reads (request, decision,
events log) may have been swapped for a FIFO or a symlink. It must answer, and fail
closed, rather than hang or read outside the state directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from store.format.layout import Kind, log_path, request_path
from store.writers.agent import AgentWriter, AlreadyExists, LogCorrupt, authorize
from store.writers.human import HumanWriter
from tests.store.conftest import deadline

M = "m1"
EVENTS = log_path(M, Kind.EVENTS)


@pytest.fixture
def approved(tmp_path: Path) -> Path:
    """A mission whose request r1 is approved and not used yet."""
    agent = AgentWriter(tmp_path, M, "agent")
    agent.write_plan([{"id": "s1", "title": "Post", "risk": "external_write"}])
    agent.request_approval("r1", "s1", 1, "http.post", {"url": "x"}, "external_write")
    agent.heartbeat()
    (tmp_path / "missions" / M / "constraints.toml").write_text("schema = 1\n")  # required
    raw = json.loads((tmp_path / request_path(M, "r1")).read_bytes())
    HumanWriter(tmp_path, "alice", "local").decide(M, "r1", raw, "approve")
    assert authorize(tmp_path, M, "r1").ok
    return tmp_path


def test_a_fifo_for_the_events_log_is_a_denial_not_a_hang(approved: Path) -> None:
    (approved / EVENTS).unlink()
    os.mkfifo(approved / EVENTS)
    with deadline(5):
        auth = authorize(approved, M, "r1")
        with pytest.raises(LogCorrupt, match="FIFO"):
            AgentWriter(approved, M, "agent").tail(Kind.EVENTS)
    assert not auth.ok
    assert auth.reason.startswith("cannot tell whether the approval was used")
    assert "FIFO" in auth.reason


def test_an_events_log_linked_elsewhere_is_not_followed(approved: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere.jsonl"
    elsewhere.write_text("")  # a log in which the approval was never used
    (approved / EVENTS).unlink()
    (approved / EVENTS).symlink_to(elsewhere)
    auth = authorize(approved, M, "r1")
    assert not auth.ok and "symlink" in auth.reason


def test_a_fifo_where_an_artifact_exists_is_refused_not_read(tmp_path: Path) -> None:
    agent = AgentWriter(tmp_path, M, "agent")
    folder = tmp_path / "missions" / M / "artifacts"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "out.txt")
    with deadline(5), pytest.raises(AlreadyExists, match="other content"):
        agent.write_artifact("out.txt", b"report")
