"""Builds valid state directories for tests.

Log lines go through `store.writers.agent.AgentWriter` (seq, hash chain, `"schema": 1` on the
first line, validation), so fixtures are exactly what a real agent writes. Documents
are written directly, so tests can also write ones the agent writer would refuse
(plan v3 without v2, a request for an unknown step). `chain()` builds a whole log in
memory, independently of the writer, for tests that need bytes rather than files.
Tests that need broken input edit the files this writes.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from store.format.layout import Kind
from store.format.records import request_digest
from store.writers.agent import AgentWriter, compact_json

T0 = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
GENESIS = "0" * 64


def stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def line_bytes(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def chain(records: list[dict[str, Any]]) -> bytes:
    """A whole valid log from records without seq/prev/schema: each line terminated."""
    out: list[bytes] = []
    prev = GENESIS
    for seq, fields in enumerate(records, start=1):
        record: dict[str, Any] = {"schema": 1} if seq == 1 else {}
        record.update({"seq": seq, "prev": prev})
        record.update(fields)
        line = line_bytes(record)
        prev = hashlib.sha256(line).hexdigest()
        out.append(line + b"\n")
    return b"".join(out)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return stamp(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def toml_text(data: dict[str, Any]) -> str:
    """Minimal TOML writer: scalars and lists at top level, one level of tables."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {toml_value(value)}")
    for name, table in tables:
        lines.append(f"\n[{name}]")
        lines.extend(f"{key} = {toml_value(value)}" for key, value in table.items())
    return "\n".join(lines) + "\n"


class Mission:
    """Writes one mission folder's files."""

    def __init__(self, root: Path, mission_id: str) -> None:
        self.root = root
        self.id = mission_id
        self.dir = root / "missions" / mission_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.clock = T0

    @property
    def writer(self) -> AgentWriter:
        """The agent writer for this mission's logs (it refuses unsafe mission ids)."""
        return AgentWriter(self.root, self.id, "agent", clock=lambda: self.clock)

    def rel(self, name: str) -> str:
        return f"missions/{self.id}/{name}"

    # ---- human-owned ------------------------------------------------------------

    def intent(self, title: str = "Do the work", **fields: Any) -> Mission:
        data = {"schema": 1, "title": title, "objective": "an objective", **fields}
        (self.dir / "intent.toml").write_text(toml_text(data), encoding="utf-8")
        return self

    def constraints(self, budget: dict[str, Any] | None = None, **fields: Any) -> Mission:
        data: dict[str, Any] = {"schema": 1, **fields}
        if budget is not None:
            data["budget"] = budget
        (self.dir / "constraints.toml").write_text(toml_text(data), encoding="utf-8")
        return self

    def decision(
        self,
        request_id: str,
        decision: str = "approve",
        digest: str | None = None,
        **fields: Any,
    ) -> Mission:
        if digest is None:
            raw = json.loads((self.dir / "approvals" / f"{request_id}.json").read_bytes())
            digest = request_digest(raw)
        data: dict[str, Any] = {
            "schema": 1,
            "request": request_id,
            "digest": digest,
            "decision": decision,
            "decided_by": "alice",
            "decided_at": stamp(T0),
            **fields,
        }
        if decision == "reject":
            data.setdefault("reason", "too risky")
        path = self.dir / "approvals" / f"{request_id}.toml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(toml_text(data), encoding="utf-8")
        return self

    # ---- agent-owned ------------------------------------------------------------

    def plan(self, version: int = 1, steps: list[str] | None = None, **fields: Any) -> Mission:
        data: dict[str, Any] = {
            "schema": 1,
            "version": version,
            "created_at": stamp(T0),
            "author": "agent",
            "steps": [{"id": s, "title": f"step {s}"} for s in (steps or ["s1", "s2"])],
        }
        if version > 1:
            data["reason"] = f"re-plan {version}"
        data.update(fields)
        path = self.dir / "plan" / f"v{version}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(line_bytes(data))
        return self

    def request(self, request_id: str = "r1", **fields: Any) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": 1,
            "id": request_id,
            "step": "s1",
            "plan_version": 1,
            "tool": "deploy",
            "args": {"target": "prod"},
            "risk": "external_write",
            "summary": "ship it",
            "requested_by": "agent",
            "requested_at": stamp(T0),
            **fields,
        }
        path = self.dir / "approvals" / f"{request_id}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(line_bytes(data))
        return data

    def handoff(self, **fields: Any) -> Mission:
        data = {"schema": 1, "at": stamp(T0), "summary": "where to resume", **fields}
        (self.dir / "handoff.json").write_bytes(line_bytes(data))
        return self

    def artifact(self, name: str, content: bytes) -> dict[str, Any]:
        path = self.dir / "artifacts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        return {"path": name, "sha256": hashlib.sha256(content).hexdigest(), "bytes": len(content)}

    def append(self, log: str, at: datetime | None = None, **fields: Any) -> bytes:
        """Append one line to `events` or `evidence` (via AgentWriter); returns its bytes.

        Without `at`, each line is one second after the previous one."""
        if at is None:
            self.clock += timedelta(seconds=1)
            at = self.clock
        with self.writer.locked(Kind(log)) as locked:
            _, raw = locked.append(at, fields)
        return compact_json(raw)

    def event(self, type: str, at: datetime | None = None, **fields: Any) -> bytes:
        return self.append("events", at=at, type=type, actor="agent", **fields)

    def step(self, step: str, state: str, plan_version: int = 1, **fields: Any) -> bytes:
        return self.event("step", step=step, plan_version=plan_version, state=state, **fields)

    def usage(self, usd: float, tokens: int, steps: int, at: datetime | None = None) -> bytes:
        return self.event("usage", at=at, usd=usd, tokens=tokens, steps=steps)

    def evidence(self, step: str, verdict: str = "pass", **fields: Any) -> bytes:
        seq = self.writer.tail(Kind.EVIDENCE).seq + 1
        return self.append(
            "evidence",
            id=f"e{seq}",
            step=step,
            observed="tests pass",
            method="pytest",
            proves="it works",
            verdict=verdict,
            **fields,
        )

    def succeed(self, step: str) -> None:
        """Evidence with verdict pass, then the step's `succeeded` event."""
        self.evidence(step)
        self.step(step, "succeeded")


def mission(root: Path, mission_id: str, title: str | None = None) -> Mission:
    """A mission folder with intent, constraints and plan v1 (steps s1, s2)."""
    built = Mission(root, mission_id)
    built.intent(title or f"Mission {mission_id}")
    built.constraints(budget={"usd": 10.0, "tokens": 100_000, "steps": 20})
    built.plan(1)
    return built


def resume(root: Path, mission_id: str) -> Mission:
    """A Mission writer that continues an existing folder (its clock after the last event)."""
    built = Mission(root, mission_id)
    for log in ("events", "evidence"):
        path = built.dir / f"{log}.jsonl"
        lines = path.read_bytes().splitlines() if path.exists() else []
        if lines:
            at = datetime.fromisoformat(json.loads(lines[-1])["at"])
            built.clock = max(built.clock, at)
    return built


def three_missions(root: Path) -> None:
    """`alpha` running, `beta` waiting on request r1, `gamma` done with a handoff."""
    alpha = mission(root, "alpha", "Migrate the database")
    alpha.step("s1", "running")
    alpha.usage(1.0, 1000, 1)
    beta = mission(root, "beta", "Deploy the service")
    beta.step("s1", "waiting_for_approval")
    beta.request("r1")
    gamma = mission(root, "gamma", "Write the docs")
    gamma.step("s1", "running")
    gamma.succeed("s1")
    gamma.step("s2", "running")
    gamma.succeed("s2")
    gamma.handoff(plan_version=1, current_step="s2", verified=["e1", "e2"])
