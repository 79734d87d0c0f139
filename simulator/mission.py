"""One simulated mission: an agent's moves, written through `store.writers.agent` only.

A scenario is a generator. Each time the runner advances it, it writes at most one
log line (plus documents that go with it, such as a plan version or a request) and
yields what it waits for: nothing (run again soon), `Sleep(ticks)`, or
`AwaitDecisions` (approval requests waiting for a human).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from store.format.layout import Kind, decision_path, doc_path
from store.format.load import load_document
from store.format.records import Constraints, Plan, PlanStep, Risk
from store.writers.agent import AgentWriter, Authorization, authorize, utcnow

HEARTBEAT_TICKS = 200  # 10 s at the default rate
REQUEST_VALID_FOR = timedelta(minutes=30)
MAX_REQUESTS_PER_STEP = 3


@dataclass(frozen=True, slots=True)
class Sleep:
    """Do not run this mission for `ticks` ticks."""

    ticks: int


@dataclass(frozen=True, slots=True)
class AwaitDecisions:
    """Run again when a decision file appears, `deadline` passes, or after `ticks`."""

    paths: tuple[Path, ...]
    deadline: datetime | None
    ticks: int = HEARTBEAT_TICKS


Action = Sleep | AwaitDecisions | None
Script = Generator[Action, None, None]
Outcome = Literal["ok", "error", "unknown"]


@dataclass(slots=True)
class Work:
    """How executing one step goes."""

    tool: str
    args: dict[str, Any]
    observed: str
    method: str
    proves: str
    artifact: str | None = None
    usd: float = 0.02
    tokens: int = 1500
    failures: int = 0  # attempts that fail before the last one
    result: Outcome = "ok"  # of the last attempt
    error: str = "tool returned an error"
    ticks: tuple[int, int] = (0, 0)  # the tool runs this long (a range of ticks)
    verify: bool = False  # pass through the verifying state
    observer: str = ""  # who checked the result, when not the agent itself (CI, a reviewer)


@dataclass(slots=True)
class Mission:
    """A mission's agent: its writer, its random source, and what it has done so far."""

    root: Path
    id: str
    rng: random.Random
    clock: Callable[[], datetime] = utcnow
    writer: AgentWriter = field(init=False)
    plan: Plan | None = None
    usd: float = 0.0
    tokens: int = 0
    steps_done: int = 0
    attempts: dict[str, int] = field(default_factory=dict)
    verified: list[str] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hand_over(f"sim-agent/{self.id}")

    def hand_over(self, actor: str) -> None:
        """From now on another agent (another provider) writes, from the durable state."""
        self.writer = AgentWriter(self.root, self.id, actor, clock=self.clock)

    # -- plan -------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self.plan.version if self.plan is not None else 0

    def constraints(self) -> Constraints | None:
        """The mission's constraints as they are now (read live: humans edit them)."""
        return load_document(self.root, doc_path(self.id, Kind.CONSTRAINTS), Constraints).record

    def auto(self) -> set[str]:
        """The risk classes the agent may act on without asking."""
        constraints = self.constraints()
        return set(constraints.approval.auto) if constraints is not None else set()

    def over_budget(self) -> str | None:
        """Which budget limit the usage so far exceeds, if any."""
        constraints = self.constraints()
        if constraints is None:
            return None
        budget = constraints.budget
        if budget.usd is not None and self.usd > budget.usd:
            return f"usd {self.usd:.2f} spent of {budget.usd:.2f}"
        if budget.tokens is not None and self.tokens > budget.tokens:
            return f"tokens {self.tokens:,} used of {budget.tokens:,}"
        if budget.steps is not None and self.steps_done > budget.steps:
            return f"steps {self.steps_done} run of {budget.steps}"
        return None

    def write_plan(self, steps: list[dict[str, Any]], reason: str = "", **extra: Any) -> Plan:
        auto = self.auto()
        for step in steps:
            step.setdefault("needs_approval", step.get("risk", "read_only") not in auto)
        self.plan = self.writer.write_plan(steps, reason=reason, **extra)
        return self.plan

    def spec(self, step_id: str) -> PlanStep:
        assert self.plan is not None
        return next(s for s in self.plan.steps if s.id == step_id)

    def needs_approval(self, step_id: str) -> bool:
        return self.spec(step_id).risk not in self.auto()

    # -- small moves ----------------------------------------------------------------------

    def state(self, step_id: str, state: Any, reason: str = "") -> None:
        self.writer.step(step_id, state, self.version, reason)

    def spend(self, usd: float, tokens: int, steps: int = 1) -> None:
        self.usd += usd
        self.tokens += tokens
        self.steps_done += steps
        self.writer.usage(self.usd, self.tokens, self.steps_done)

    def handoff(self, summary: str, current: str | None, **extra: Any) -> None:
        self.writer.write_handoff(
            summary,
            plan_version=self.version or None,
            current_step=current,
            verified=self.verified[-10:],
            **extra,
        )

    def jitter(self, usd: float, tokens: int) -> tuple[float, int]:
        factor = self.rng.uniform(0.7, 1.3)
        return round(usd * factor, 4), int(tokens * factor)

    # -- a step ---------------------------------------------------------------------------

    def run_step(
        self,
        step_id: str,
        work: Work,
        approval: str | None = None,
        next_step: str | None = None,
    ) -> Generator[Action, None, str]:
        """Execute a step: attempts, evidence, state. Returns the step's final state.

        With `next_step`, a success also marks that step ready (in the same action), so
        the mission never looks idle between two steps.
        """
        risky = self.spec(step_id).risk != "read_only"
        reason = f"approved: {approval}" if approval else ""
        self.state(step_id, "running", reason)
        yield None
        for number in range(1, work.failures + 2):
            attempt = self.attempts.get(step_id, 0) + 1
            self.attempts[step_id] = attempt
            key = f"{self.id}/{step_id}/{attempt}"
            if approval is not None:
                auth, _ = self.writer.start_approved_attempt(approval, attempt, idempotency_key=key)
                if not auth.ok:
                    self.state(step_id, "blocked", f"approval {approval}: {auth.reason}")
                    yield None
                    return "blocked"
                approval = None  # an approval runs once: a retry would need a new one
            else:
                self.writer.attempt(
                    step_id,
                    attempt,
                    "started",
                    work.tool,
                    work.args,
                    idempotency_key=key,
                    effect_possible=risky,
                )
            yield None
            low, high = work.ticks
            if high > 0:
                yield Sleep(self.rng.randint(low, high))
            last = number == work.failures + 1
            outcome: Outcome = work.result if last else "error"
            self.writer.attempt(
                step_id,
                attempt,
                "finished",
                work.tool,
                work.args,
                idempotency_key=key,
                effect_possible=risky,
                outcome=outcome,
                output_ref=f"out/{step_id}-{attempt}" if outcome == "ok" else None,
            )
            if outcome == "error":
                self.writer.error(f"{work.tool}: {work.error} (attempt {attempt})", step_id)
            yield None
        usd, tokens = self.jitter(work.usd, work.tokens)
        if work.result == "unknown":
            self.spend(usd, tokens)
            self.state(step_id, "outcome_unknown", work.error)
            yield None
            return "outcome_unknown"
        if work.verify and work.result == "ok":
            self.state(step_id, "verifying", work.method)
            yield None
        verdict: Literal["pass", "fail"] = "pass" if work.result == "ok" else "fail"
        attempt = self.attempts[step_id]
        ev_id = f"{step_id}-e{attempt}"
        self.writer.evidence(
            step_id,
            work.observed if verdict == "pass" else work.error,
            work.method,
            work.proves,
            verdict,
            id=ev_id,
            artifact=work.artifact,
            artifact_name=f"{step_id}-{attempt}.txt" if work.artifact is not None else None,
            observer=work.observer,
        )
        yield None
        self.spend(usd, tokens)
        if verdict == "fail":
            self.state(step_id, "failed", f"{work.error} after {attempt} attempts")
            yield None
            return "failed"
        self.verified.append(ev_id)
        self.state(step_id, "succeeded")
        if next_step is not None:
            self.state(next_step, "ready", f"{step_id} succeeded")
        yield None
        return "succeeded"

    # -- approvals ------------------------------------------------------------------------

    def request(self, step_id: str, work: Work, summary: str) -> str:
        """Ask for approval of a step's action; returns the request id."""
        count = self.requests.get(step_id, 0) + 1
        self.requests[step_id] = count
        request_id = f"{self.id}-{step_id}" + (f"-r{count}" if count > 1 else "")
        risk: Risk = self.spec(step_id).risk
        self.writer.request_approval(
            request_id,
            step_id,
            self.version,
            work.tool,
            work.args,
            risk,
            summary,
            valid_for=REQUEST_VALID_FOR,
        )
        self.state(step_id, "waiting_for_approval", f"approval requested: {request_id}")
        return request_id

    def await_decisions(
        self, pending: dict[str, str], works: dict[str, Work], summaries: dict[str, str]
    ) -> Generator[Action, None, dict[str, tuple[str, Authorization]]]:
        """Wait until at least one of the `pending` requests (step -> request id) is
        decided; returns those (step -> (request id, answer)) and drops them from `pending`.
        A request that expires undecided is asked again, up to MAX_REQUESTS_PER_STEP."""
        results: dict[str, tuple[str, Authorization]] = {}
        while pending and not results:
            paths = tuple(self.root / decision_path(self.id, r) for r in pending.values())
            deadlines = []
            for request_id in pending.values():
                auth = authorize(self.root, self.id, request_id)
                if auth.request is not None and auth.request.expires_at is not None:
                    deadlines.append(auth.request.expires_at)
            yield AwaitDecisions(paths, min(deadlines) if deadlines else None)
            moved = False
            for step_id, request_id in sorted(pending.items()):
                auth = authorize(self.root, self.id, request_id)
                if auth.reason == "not decided":
                    continue
                moved = True
                expired = auth.decision is None and auth.reason.startswith("expired")
                if expired and self.requests.get(step_id, 0) < MAX_REQUESTS_PER_STEP:
                    pending[step_id] = self.request(step_id, works[step_id], summaries[step_id])
                    yield None
                    continue
                del pending[step_id]
                results[step_id] = (request_id, auth)
            if not moved:
                self.writer.heartbeat()
                yield None
        return results
