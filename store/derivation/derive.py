"""Derived, never stored: request status, mission status by urgency, budget use."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from store.derivation.ledger import ACTIVE_STATES
from store.derivation.plan_binding import UNBOUND, PlanBinding, plan_binding
from store.format.records import Settings
from store.format.row import MissionStatus

if TYPE_CHECKING:
    from store.derivation.view import MissionView


class RequestStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    STALE = "stale"
    EXPIRED = "expired"


def request_binding(mission: MissionView, request_id: str) -> PlanBinding:
    """What the plan versions newer than the request's mean for it
    (`store.derivation.plan_binding`).

    The request's `plan_version` and `step` come from its record, or from its raw JSON
    when it does not validate (if they have the right types there)."""
    loaded = mission.requests[request_id]
    if loaded.record is not None:
        version, step = loaded.record.plan_version, loaded.record.step
    else:
        raw = loaded.raw or {}
        raw_version, raw_step = raw.get("plan_version"), raw.get("step")
        if not isinstance(raw_version, int) or isinstance(raw_version, bool):
            return UNBOUND
        if not isinstance(raw_step, str):
            return UNBOUND
        version, step = raw_version, raw_step
    plans = {v: plan.record for v, plan in mission.plans.items() if v >= version}
    return plan_binding(plans, version, step)


def request_status(mission: MissionView, request_id: str, now: datetime) -> RequestStatus:
    """Pending, approved, rejected, stale or expired (docs/format.md, "Derived, never stored").

    Stale: the decision's digest no longer matches the request, or the request is bound
    to a plan version that no longer holds (`request_binding(...).stale`). An approval
    an attempt has already used stays approved (or expired): it ran under its plan.
    """
    loaded = mission.requests[request_id]
    request = loaded.record
    decision_loaded = mission.decisions.get(request_id)
    decision = decision_loaded.record if decision_loaded is not None else None
    if decision is not None:
        if not mission.decision_is_current(request_id):
            return RequestStatus.STALE
        if decision.decision == "reject":
            return RequestStatus.REJECTED
        if request_id not in mission.used_approvals and request_binding(mission, request_id).stale:
            return RequestStatus.STALE
        if decision.valid_until is not None and now > decision.valid_until:
            return RequestStatus.EXPIRED
        if request is not None and request.expires_at is not None and now > request.expires_at:
            return RequestStatus.EXPIRED
        return RequestStatus.APPROVED
    if request_binding(mission, request_id).stale:
        return RequestStatus.STALE
    if request is not None and request.expires_at is not None and now > request.expires_at:
        return RequestStatus.EXPIRED
    return RequestStatus.PENDING


def nobody_waiting(mission: MissionView, request_id: str) -> str | None:
    """Why nobody waits any more for the decision on a request filed with a waiter
    (`store.derivation.lease`), or None: its waiter still holds the lease, or it had none. Such a
    request cannot be approved (a rejection is still recorded)."""
    withdrawn = mission.waiters.get(request_id)
    if withdrawn is not None and withdrawn.state == "withdrawn":
        why = f": {withdrawn.reason}" if withdrawn.reason else ""
        return f"nobody waiting: {withdrawn.actor} withdrew the request{why}"
    if mission.leases.get(request_id) is False:
        return (
            f"nobody waiting: the process that filed it is gone (its lease "
            f"approvals/{request_id}.wait is not held)"
        )
    return None


def pending_count(mission: MissionView, now: datetime) -> int:
    return sum(
        1
        for request_id in mission.requests
        if request_status(mission, request_id, now) is RequestStatus.PENDING
    )


def is_done(mission: MissionView) -> bool:
    plan = mission.latest_plan
    if plan is None or not plan.steps:
        return False
    return all(
        (latest := mission.step_latest.get(step.id)) is not None and latest.state == "succeeded"
        for step in plan.steps
    )


def _wanted_steps(mission: MissionView) -> set[str] | None:
    """The steps that matter: those of the latest plan; None (every step) without one."""
    plan = mission.latest_plan
    return {step.id for step in plan.steps} if plan is not None else None


def current_states(mission: MissionView) -> set[str]:
    """Latest states of the steps that matter: those of the latest plan, if any."""
    wanted = _wanted_steps(mission)
    return {
        latest.state
        for step, latest in mission.step_latest.items()
        if wanted is None or step in wanted
    }


DEFAULT_ATTEMPTS = 5
"""Attempts one step may start when neither `max_attempts_per_step` nor `[budget] steps`
says (docs/review.md, runaway-loop)."""
MIN_ATTEMPTS = 3
"""The least a limit derived from `[budget] steps` allows a step."""


def attempt_limit(mission: MissionView) -> tuple[int, str]:
    """How many attempts one step may start, and where that comes from: `[budget]
    max_attempts_per_step`; else each step's share of `[budget] steps` over the steps of
    the latest plan (at least MIN_ATTEMPTS); else DEFAULT_ATTEMPTS."""
    constraints = mission.constraints.record if mission.constraints else None
    budget = constraints.budget if constraints else None
    if budget is not None and budget.max_attempts_per_step is not None:
        return budget.max_attempts_per_step, "[budget] max_attempts_per_step"
    plan = mission.latest_plan
    if budget is not None and budget.steps is not None and plan is not None and plan.steps:
        share = max(MIN_ATTEMPTS, math.ceil(budget.steps / len(plan.steps)))
        return share, f"[budget] steps {budget.steps} over {len(plan.steps)} plan steps"
    return DEFAULT_ATTEMPTS, "the default (no [budget] max_attempts_per_step or steps)"


def retries_exhausted(mission: MissionView) -> list[str]:
    """Steps of the latest plan (all steps when there is none) that started as many
    attempts as `attempt_limit` allows, or more, and have not succeeded: the agent may not
    try again, a human must decide what next."""
    limit, _ = attempt_limit(mission)
    plan = mission.latest_plan
    wanted = {step.id for step in plan.steps} if plan is not None else None
    return sorted(
        step
        for step, count in mission.ledger.attempts.items()
        if count >= limit
        and (wanted is None or step in wanted)
        and not ((latest := mission.step_latest.get(step)) and latest.state == "succeeded")
    )


@dataclass(frozen=True, slots=True)
class Overrun:
    """A `[budget]` limit (usd, tokens, steps) the usage went past: by how much, and the
    first usage event kept that was past it (its line and time)."""

    name: str
    used: float
    limit: float
    line: int
    at: datetime

    def describe(self) -> str:
        times = f" ({self.used / self.limit:.1f}x)" if self.limit > 0 else ""
        return f"{self.name} {self.used:g} of {self.limit:g}{times}"


def over_budget(mission: MissionView) -> list[Overrun]:
    """The budget limits the last usage event is past (a surprise bill, a runaway loop):
    the agent must stop, a human decides whether to spend more (the mission needs you
    until the runtime halts)."""
    constraints = mission.constraints.record if mission.constraints else None
    if constraints is None or not mission.usage:
        return []
    budget, last = constraints.budget, mission.usage[-1]
    found = []
    for name, limit in (("usd", budget.usd), ("tokens", budget.tokens), ("steps", budget.steps)):
        if limit is None or float(getattr(last, name)) <= limit:
            continue
        first = next(p for p in mission.usage if float(getattr(p, name)) > limit)
        found.append(Overrun(name, float(getattr(last, name)), float(limit), first.line, first.at))
    return found


@dataclass(frozen=True, slots=True)
class NeedsYou:
    """One reason, besides a pending request, that a mission needs a human: `key` names
    it stably (it is the same while the reason holds), `why` says it in words."""

    key: str
    why: str


def needs_you_reasons(mission: MissionView) -> list[NeedsYou]:
    """Why a mission needs you, pending requests aside: a step whose outcome is unknown,
    an error in its files, a step out of attempts, usage past the budget while the run
    goes on (a runaway loop). `mission_status` is NEEDS_YOU when any holds."""
    wanted = _wanted_steps(mission)
    found = [
        NeedsYou(f"outcome_unknown:{step}", f"step {step}: outcome unknown")
        for step, latest in sorted(mission.step_latest.items())
        if latest.state == "outcome_unknown" and (wanted is None or step in wanted)
    ]
    found += [
        NeedsYou(f"problem:{p.where}:{p.code}", f"{p.where}: {p.message}")
        for p in mission.problems()
        if p.severity == "error"
    ]
    found += [
        NeedsYou(f"retries:{step}", f"step {step}: out of attempts")
        for step in retries_exhausted(mission)
    ]
    if mission.halt is None:
        found += [
            NeedsYou(f"over_budget:{o.name}", f"usage past the budget: {o.describe()}")
            for o in over_budget(mission)
        ]
    return found


def mission_status(mission: MissionView, now: datetime, settings: Settings) -> MissionStatus:
    """The most urgent thing true of a mission (DESIGN.md, "Derived, never stored")."""
    states = current_states(mission)
    if needs_you_reasons(mission) or pending_count(mission, now):
        return MissionStatus.NEEDS_YOU
    if "failed" in states:
        return MissionStatus.FAILED
    if is_done(mission):
        return MissionStatus.DONE
    if "blocked" in states or mission.halt is not None:
        return MissionStatus.BLOCKED
    last = mission.last_event_at
    if last is not None and (now - last).total_seconds() > settings.stale_after_seconds:
        return MissionStatus.STALE
    if states & ACTIVE_STATES:
        return MissionStatus.RUNNING
    return MissionStatus.IDLE


# ---- budget -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limit:
    """One budget limit: what was used, the limit, burn per hour, projected exhaustion."""

    name: str
    used: float
    limit: float
    per_hour: float | None
    exhausted_at: datetime | None

    @property
    def fraction(self) -> float:
        return self.used / self.limit if self.limit > 0 else float("inf")

    @property
    def projected(self) -> bool:
        """Whether `exhausted_at` is a projection from a burn rate: the time limit's end
        is a fixed moment (the first event plus the wall-clock budget), not a forecast."""
        return self.name != "time"


@dataclass(frozen=True, slots=True)
class Budget:
    limits: tuple[Limit, ...]
    deadline: datetime | None

    @property
    def worst(self) -> Limit | None:
        return max(self.limits, key=lambda limit: limit.fraction, default=None)

    @property
    def exhausted_before_deadline(self) -> bool:
        """True when some limit is projected, from its burn rate, to run out before the
        deadline (a wall-clock budget that ends first is the mission's own cap, not a
        projection)."""
        return self.first_out is not None

    @property
    def first_out(self) -> Limit | None:
        """The limit projected to run out first before the deadline, if any."""
        if self.deadline is None:
            return None
        early = [
            (limit.exhausted_at, index, limit)
            for index, limit in enumerate(self.limits)
            if limit.projected
            and limit.exhausted_at is not None
            and limit.exhausted_at < self.deadline
        ]
        return min(early)[2] if early else None

    @property
    def rate_unknown(self) -> bool:
        """True when some limit still has room and no burn rate yet (too little history)."""
        return any(
            limit.projected and limit.per_hour is None and limit.used < limit.limit
            for limit in self.limits
        )


MIN_RATE_SECONDS = 60.0
"""A burn rate needs usage spread over at least this long; less is noise."""


def budget_use(mission: MissionView, now: datetime) -> Budget:
    """The last usage against the `[budget]` limits, with burn rate and projection.

    The rate is the spend between the first and last usage events kept (the last
    512); exhaustion is projected from the last usage event at that rate.
    """
    constraints = mission.constraints.record if mission.constraints else None
    if constraints is None:
        return Budget((), None)
    budget = constraints.budget
    usage = mission.usage
    last = usage[-1] if usage else None
    first = usage[0] if usage else None
    span = (last.at - first.at).total_seconds() if last and first else 0.0
    hours = span / 3600 if span >= MIN_RATE_SECONDS else 0.0
    since = last.at if last else now
    limits: list[Limit] = []
    for name, limit in (("usd", budget.usd), ("tokens", budget.tokens), ("steps", budget.steps)):
        if limit is None:
            continue
        used = float(getattr(last, name)) if last else 0.0
        start = float(getattr(first, name)) if first else 0.0
        rate = (used - start) / hours if hours > 0 else None
        limits.append(Limit(name, used, float(limit), rate, _projection(used, limit, rate, since)))
    if budget.wall_seconds is not None and mission.first_event_at is not None:
        halted = mission.halt is not None
        end = mission.last_event_at if halted else now
        elapsed = max(0.0, ((end or now) - mission.first_event_at).total_seconds())
        limit = float(budget.wall_seconds)
        clock = 0.0 if halted else 3600.0  # seconds elapsed per hour: none after a halt
        limits.append(Limit("time", elapsed, limit, clock, _projection(elapsed, limit, clock, now)))
    return Budget(tuple(limits), budget.deadline)


def _projection(
    used: float, limit: float, per_hour: float | None, since: datetime
) -> datetime | None:
    """When `used` reaches `limit` at `per_hour`, counting from `since`."""
    if per_hour is None or per_hour <= 0:
        return None
    remaining_hours = max(0.0, (limit - used) / per_hour)
    if remaining_hours > 24 * 365 * 10:
        return None
    return since + timedelta(hours=remaining_hours)
