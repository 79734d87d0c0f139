"""store.writers.agent: the writer for agent runtimes, and authorize()."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tomli_w

import store.writers.agent as agent
from store.format import durable
from store.format.layout import (
    Kind,
    decision_path,
    doc_path,
    is_transient,
    log_path,
    plan_path,
    request_path,
)
from store.format.load import LogReader, load_document
from store.format.records import GENESIS, Handoff, request_digest
from store.writers.agent import (
    AgentError,
    AgentWriter,
    AlreadyExists,
    InvalidRecord,
    LogCorrupt,
    PlanError,
    authorize,
)

M = "m1"


def read_log(root: Path, kind: Kind, mission: str = M) -> list[Any]:
    reader = LogReader(root, log_path(mission, kind), kind)
    batch = reader.poll()
    assert batch.problems == []
    assert reader.pending_problem is None
    return batch.records


def lines(root: Path, kind: Kind, mission: str = M) -> list[bytes]:
    return (root / log_path(mission, kind)).read_bytes().split(b"\n")


def writer(root: Path, actor: str = "agent-a") -> AgentWriter:
    return AgentWriter(root, M, actor)


def with_plan(root: Path) -> AgentWriter:
    w = writer(root)
    w.write_plan(
        [
            {"id": "s1", "title": "Post the report", "risk": "external_write"},
            {"id": "s2", "title": "Read", "risk": "read_only"},
        ]
    )
    (w.path / "constraints.toml").write_text("schema = 1\n")  # authorize() requires it
    return w


def decide(
    root: Path,
    request_id: str,
    decision: str = "approve",
    *,
    reason: str = "",
    digest: str | None = None,
    valid_until: datetime | None = None,
) -> None:
    """A human decision, written as store.writers.human would (but directly, with tomli_w)."""
    raw = json.loads((root / request_path(M, request_id)).read_bytes())
    now = datetime.now(UTC)
    doc = {
        "schema": 1,
        "request": request_id,
        "digest": digest or request_digest(raw),
        "decision": decision,
        "reason": reason,
        "decided_by": "alice",
        "decided_at": now,
        "valid_until": valid_until or now + timedelta(hours=1),
        "origin": "local tty",
    }
    (root / decision_path(M, request_id)).write_text(tomli_w.dumps(doc), encoding="utf-8")


# ---- logs: seq and chain -----------------------------------------------------------------


def test_chain_and_seq_across_writer_instances(tmp_path: Path) -> None:
    first = writer(tmp_path, "agent-a")
    first.step("s1", "running", 1)
    first.attempt("s1", 1, "started", "shell", {"cmd": "make"}, idempotency_key="k1")
    second = writer(tmp_path, "agent-b")  # a new instance knows nothing: it reads the tail
    second.usage(0.5, 1200, 1)
    second.heartbeat()
    first.error("boom ünïcode", "s1")
    first.halt("done")
    records = read_log(tmp_path, Kind.EVENTS)
    assert [r.seq for r in records] == [1, 2, 3, 4, 5, 6]
    assert [r.type for r in records] == ["step", "attempt", "usage", "heartbeat", "error", "halt"]
    raw = lines(tmp_path, Kind.EVENTS)
    assert raw[-1] == b""  # every line ends with a newline
    assert records[0].prev == GENESIS
    for before, record in zip(raw, records[1:], strict=False):
        assert record.prev == hashlib.sha256(before).hexdigest()
    first_line = json.loads(raw[0])
    assert first_line["schema"] == 1
    assert "schema" not in json.loads(raw[1])
    # compact JSON, non-ASCII kept as is
    assert b", " not in raw[0] and b'": ' not in raw[0]
    assert "ünïcode".encode() in raw[4]
    assert writer(tmp_path).tail(Kind.EVENTS).seq == 6


def test_evidence_chain_and_artifact(tmp_path: Path) -> None:
    w = writer(tmp_path)
    data = b"report\n\x00binary ok"
    ev = w.evidence(
        "s1",
        "saw 3 rows",
        "select count(*)",
        "table filled",
        artifact=data,
        artifact_name="reports/s1.bin",
    )
    assert ev.id == "ev-1"
    assert ev.artifact is not None
    assert ev.artifact.path == "reports/s1.bin"  # relative to artifacts/
    assert ev.artifact.sha256 == hashlib.sha256(data).hexdigest()
    assert ev.artifact.bytes == len(data)
    assert (w.path / "artifacts" / ev.artifact.path).read_bytes() == data
    w.evidence("s1", "saw it again", "again", "same", "fail", id="custom-id")
    records = read_log(tmp_path, Kind.EVIDENCE)
    assert [(r.seq, r.id, r.verdict) for r in records] == [
        (1, "ev-1", "pass"),
        (2, "custom-id", "fail"),
    ]
    # same bytes again are fine, other bytes under the same name are refused
    assert w.write_artifact("reports/s1.bin", data).sha256 == ev.artifact.sha256
    with pytest.raises(AlreadyExists):
        w.write_artifact("reports/s1.bin", b"other")
    for bad in ("../escape", "/abs", ".hidden", "a/../b", "", "a//b"):
        with pytest.raises(AgentError):
            w.write_artifact(bad, b"x")


def test_several_appends_under_one_lock(tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.heartbeat()
    at = datetime.now(UTC)
    with w.locked(Kind.EVENTS) as log:
        for n in range(5):
            record, raw = log.append(at, {"type": "heartbeat", "actor": f"bulk-{n}"})
            assert record.seq == n + 2 and raw["seq"] == n + 2
    w.halt("end")
    assert [r.seq for r in read_log(tmp_path, Kind.EVENTS)] == list(range(1, 8))


def _append_many(root: str, actor: str, count: int) -> None:
    w = AgentWriter(Path(root), M, actor)
    for n in range(count):
        w.step(f"s{n % 5}", "running", 1, reason=f"{actor} {n}")
        if n % 10 == 0:
            w.evidence("s0", f"{actor} {n}", "m", "p")


def test_concurrent_appends_from_two_processes(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), f"p{i}", 300)) for i in range(2)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    records = read_log(tmp_path, Kind.EVENTS)
    assert [r.seq for r in records] == list(range(1, 601))
    assert sorted(r.actor for r in records).count("p0") == 300
    evidence = read_log(tmp_path, Kind.EVIDENCE)
    assert [r.seq for r in evidence] == list(range(1, 61))


def test_append_reads_only_the_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = writer(tmp_path)
    w.heartbeat()
    path = tmp_path / log_path(M, Kind.EVENTS)
    # grow the log to 20,000 valid, chained lines (~22 MB) quickly, by hand
    prev = hashlib.sha256(path.read_bytes().rstrip(b"\n")).hexdigest()
    chunks = []
    for seq in range(2, 20_001):
        line = agent.compact_json(
            {
                "seq": seq,
                "at": "2025-01-01T00:00:00Z",
                "prev": prev,
                "type": "heartbeat",
                "actor": "bulk",
                "pad": "x" * 1000,
            }
        )
        prev = hashlib.sha256(line).hexdigest()
        chunks.append(line + b"\n")
    with open(path, "ab") as handle:
        handle.write(b"".join(chunks))
    read = 0
    real_pread = os.pread

    def counting_pread(fd: int, n: int, offset: int) -> bytes:
        nonlocal read
        data = real_pread(fd, n, offset)
        read += len(data)
        return data

    monkeypatch.setattr(os, "pread", counting_pread)
    record = w.step("s1", "running", 1)
    assert record.seq == 20_001
    assert record.prev == prev
    assert read < 20_000, f"append read {read} bytes of a {path.stat().st_size} byte log"


def test_unterminated_last_line_is_refused(tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.heartbeat()
    path = tmp_path / log_path(M, Kind.EVENTS)
    with open(path, "ab") as handle:
        handle.write(b'{"seq":2,"at":"2025-')
    before = path.read_bytes()
    with pytest.raises(LogCorrupt):
        w.heartbeat()
    assert path.read_bytes() == before
    assert w.tail(Kind.EVENTS).seq == 1  # an unlocked reader skips the partial line


def test_invalid_records_are_not_written(tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.heartbeat()
    path = tmp_path / log_path(M, Kind.EVENTS)
    before = path.read_bytes()
    with pytest.raises(InvalidRecord):
        w.step("s1", "exploded", 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidRecord):
        w.event("heartbeat", {"surprise": 1})  # unknown field
    with pytest.raises(InvalidRecord):
        w.usage(float("nan"), 1, 1)
    with pytest.raises(InvalidRecord):
        w.event("nonsense", {})
    assert path.read_bytes() == before
    with pytest.raises(AgentError):
        AgentWriter(tmp_path, "../evil", "a")


# ---- plans, requests, handoff ---------------------------------------------------------------


def test_plan_versions_are_write_once_and_contiguous(tmp_path: Path) -> None:
    w = writer(tmp_path)
    steps = [{"id": "s1", "title": "One"}]
    assert w.write_plan(steps).version == 1
    v1 = (tmp_path / plan_path(M, 1)).read_bytes()
    with pytest.raises(PlanError, match="immutable"):
        w.write_plan([{"id": "s9", "title": "Other"}], version=1)
    assert (tmp_path / plan_path(M, 1)).read_bytes() == v1
    with pytest.raises(PlanError, match="needs v2"):
        w.write_plan(steps, version=3, reason="skip")
    assert not (tmp_path / plan_path(M, 3)).exists()
    with pytest.raises(InvalidRecord, match="reason"):
        w.write_plan(steps)  # v2 without a reason
    plan = w.write_plan([*steps, {"id": "s2", "title": "Two"}], reason="found more work")
    assert plan.version == 2
    assert w.plan_versions() == [1, 2]
    loaded = load_document(tmp_path, plan_path(M, 2), type(plan))
    assert loaded.problems == [] and loaded.record == plan
    # another writer racing for the same version loses
    with pytest.raises(PlanError):
        writer(tmp_path, "other").write_plan(steps, version=2, reason="race")


def test_request_is_write_once(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request = w.request_approval(
        "r1", "s1", 1, "http.post", {"url": "https://x", "n": [1, 2]}, "external_write", "post"
    )
    path = tmp_path / request_path(M, "r1")
    before = path.read_bytes()
    with pytest.raises(AlreadyExists):
        w.request_approval("r1", "s1", 1, "http.post", {"url": "https://y"}, "external_write")
    assert path.read_bytes() == before
    assert load_document(tmp_path, request_path(M, "r1"), type(request)).record == request
    with pytest.raises(AgentError, match="not in plan"):
        w.request_approval("r2", "nope", 1, "t", {}, "read_only")
    with pytest.raises(AgentError):
        w.request_approval("r3", "s1", 7, "t", {}, "read_only")  # no plan v7
    with pytest.raises(AgentError):
        w.request_approval("../r4", "s1", 1, "t", {}, "read_only")
    leftovers = [p for p in path.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_handoff_is_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = writer(tmp_path)
    w.heartbeat()
    w.heartbeat()
    first = w.write_handoff("first", next_steps=["a"])
    assert first.resume_after_seq == 2
    path = tmp_path / doc_path(M, Kind.HANDOFF)
    second = w.write_handoff("second", plan_version=1, current_step="s1", verified=["ev-1"])
    assert load_document(tmp_path, doc_path(M, Kind.HANDOFF), Handoff).record == second
    before = path.read_bytes()

    def failing_replace(*args: object, **kwargs: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        w.write_handoff("third")
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["events.jsonl", "handoff.json"]


def test_temp_names_are_transient(tmp_path: Path) -> None:
    folder = tmp_path / "missions" / M / "plan"
    folder.mkdir(parents=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        temp = folder / durable.write_temp(fd, "v1.json", b"x", 0o644)
    finally:
        os.close(fd)
    assert temp.read_bytes() == b"x"
    assert is_transient(temp.relative_to(tmp_path).as_posix())


# ---- authorize ---------------------------------------------------------------------------------


def request(w: AgentWriter, request_id: str = "r1", **kw: Any) -> None:
    w.request_approval(
        request_id, "s1", 1, "http.post", {"url": "https://x", "body": "hi"}, "external_write", **kw
    )


def test_authorize_approved_runs_once(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request(w)
    assert authorize(tmp_path, M, "r1").reason == "not decided"
    decide(tmp_path, "r1")
    auth = authorize(tmp_path, M, "r1")
    assert auth.ok and auth, auth.reason
    assert auth.decision is not None and auth.decision.decided_by == "alice"
    got, event = w.start_approved_attempt("r1", 1)
    assert got.ok and event is not None
    assert (event.step, event.tool, event.approval, event.effect_possible) == (
        "s1",
        "http.post",
        "r1",
        True,
    )
    assert event.args == {"url": "https://x", "body": "hi"}
    again = authorize(tmp_path, M, "r1")
    assert not again.ok
    assert again.reason.startswith("already used by attempt 1 of step s1")
    size = (tmp_path / log_path(M, Kind.EVENTS)).stat().st_size
    second, none = w.start_approved_attempt("r1", 2)
    assert not second.ok and none is None
    assert (tmp_path / log_path(M, Kind.EVENTS)).stat().st_size == size
    assert [r.type for r in read_log(tmp_path, Kind.EVENTS)] == ["attempt"]


def test_authorize_counts_any_attempt_referencing_the_approval(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request(w)
    decide(tmp_path, "r1")
    w.heartbeat()
    w.attempt("s1", 3, "finished", "http.post", approval="r1", outcome="ok")
    assert authorize(tmp_path, M, "r1").reason.startswith("already used by attempt 3 of step s1")


def test_authorize_rejected(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request(w)
    decide(tmp_path, "r1", "reject", reason="too risky on a Friday")
    auth = authorize(tmp_path, M, "r1")
    assert not auth.ok
    assert auth.reason == "rejected: too risky on a Friday"
    assert w.start_approved_attempt("r1", 1)[1] is None
    assert not (tmp_path / log_path(M, Kind.EVENTS)).read_bytes()


def test_authorize_stale_when_request_changed_after_approval(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request(w)
    decide(tmp_path, "r1")
    path = tmp_path / request_path(M, "r1")
    raw = json.loads(path.read_bytes())
    # reformatting alone changes no digest
    path.write_text(json.dumps(raw, indent=7), encoding="utf-8")
    assert authorize(tmp_path, M, "r1").ok
    raw["args"]["url"] = "https://evil.example"
    path.write_text(json.dumps(raw), encoding="utf-8")
    auth = authorize(tmp_path, M, "r1")
    assert not auth.ok
    assert auth.reason == "stale: request changed after approval"


def test_authorize_stale_digest(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request(w)
    decide(tmp_path, "r1", digest="sha256:" + "ab" * 32)
    assert authorize(tmp_path, M, "r1").reason.startswith("stale")


def test_authorize_expired_request(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    past = datetime.now(UTC) - timedelta(minutes=5)
    request(w, "r1", expires_at=past)
    auth = authorize(tmp_path, M, "r1")
    assert auth.reason.startswith("expired") and "without a decision" in auth.reason
    decide(tmp_path, "r1")
    auth = authorize(tmp_path, M, "r1")
    assert not auth.ok and auth.reason.startswith("expired: request expired at")
    # a request still valid now is ok now and expired later
    request(w, "r2", valid_for=timedelta(minutes=10))
    decide(tmp_path, "r2")
    assert authorize(tmp_path, M, "r2").ok
    later = datetime.now(UTC) + timedelta(minutes=11)
    assert authorize(tmp_path, M, "r2", now=later).reason.startswith("expired")


def test_authorize_expired_decision(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    request(w)
    decide(tmp_path, "r1", valid_until=datetime.now(UTC) - timedelta(seconds=1))
    auth = authorize(tmp_path, M, "r1")
    assert not auth.ok and auth.reason.startswith("expired: approval was valid until")
    assert w.start_approved_attempt("r1", 1)[1] is None


def test_authorize_missing_and_invalid(tmp_path: Path) -> None:
    w = with_plan(tmp_path)
    assert authorize(tmp_path, M, "nope").reason == "no such request"
    assert authorize(tmp_path, M, "../x").reason == "unsafe mission or request id"
    request(w)
    (tmp_path / decision_path(M, "r1")).write_text("decision = [", encoding="utf-8")
    assert authorize(tmp_path, M, "r1").reason.startswith("invalid decision")
    (tmp_path / request_path(M, "r1")).write_text("{", encoding="utf-8")
    assert authorize(tmp_path, M, "r1").reason.startswith("invalid request")
