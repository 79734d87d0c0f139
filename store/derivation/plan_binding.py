"""Approvals bind to the plan version: is a request still for the plan that holds now?

A request names a plan version and a step of it. Plan versions are immutable, but an
agent may write newer ones. One pure function, `plan_binding`, says what a newer plan
means for the request (docs/format.md, "Derived, never stored"). Everything that
decides on a request uses it: `store.derivation.derive.request_status` (the status, hence the
header and queue counts), `store.index.approval_checks.review` (the HUD's request screen,
`hud approvals`, `hud decide`) and `store.writers.agent.authorize` (the agent, at commit time).

The request is **stale** (cannot be approved; an approval given before no longer holds)
when a plan version newer than the request's `plan_version` exists and

* `plan-missing`: the version the request names is missing or does not load;
* `plan-unreadable`: a version after it (up to the latest) is missing or does not load,
  so what changed cannot be checked;
* `step-removed`: the latest version has no step with the request's step id;
* `step-changed`: the latest version changes one of the request step's bound fields
  (`BOUND_FIELDS`: title, risk, effect, needs_approval);
* `effectful-step-added` / `effectful-step-changed` / `effectful-step-removed`: a version
  after the request's, compared with the request's version, adds, changes (any field) or
  drops a step whose risk is above read_only (in either version).

A newer plan that changes only read-only steps (and none of the request step's bound
fields) leaves the request approvable, with a `read-only-change` notice naming the steps,
fields and versions. Newer versions that change no step at all give no rule, and a
message saying so.

Pure: no IO, no textual, no rich.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from store.derivation.plan_diff import step_changes
from store.format.records import RISK_ORDER, Plan, PlanStep

Rule = Literal[
    "plan-missing",
    "plan-unreadable",
    "step-removed",
    "step-changed",
    "effectful-step-added",
    "effectful-step-changed",
    "effectful-step-removed",
    "read-only-change",
]
"""Which rule applied; every rule but `read-only-change` makes the request stale."""

NOTICE_RULE: Rule = "read-only-change"
STALE_RULES: frozenset[str] = frozenset(get_args(Rule)) - {NOTICE_RULE}

BOUND_FIELDS: tuple[str, ...] = ("title", "risk", "effect", "needs_approval")
"""The fields of the request's own step that bind the approval (a plan step names no
tool: `effect` is what it does). A change to another field of that step counts as a
change to any step: stale when the step is effectful, a notice when it is read-only."""

_LISTED = 4
_EFFECTFUL_RULES: tuple[tuple[str, Rule], ...] = (
    ("added", "effectful-step-added"),
    ("changed", "effectful-step-changed"),
    ("removed", "effectful-step-removed"),
)


@dataclass(frozen=True, slots=True)
class PlanChange:
    """One step that differs in plan `version` from the request's plan version."""

    version: int
    step: str
    kind: Literal["added", "removed", "changed"]
    fields: tuple[str, ...] = ()
    """The fields that differ, in the format's order (for `changed`)."""
    risk: str = "read_only"
    """The higher of the step's risks in the two versions (the one it has, if only one)."""

    @property
    def effectful(self) -> bool:
        return self.risk != "read_only"

    def describe(self) -> str:
        """`v2 adds 'lint' (read_only)`, `v3 changes 'fetch' (title, depends_on)`."""
        verb = {"added": "adds", "removed": "drops", "changed": "changes"}[self.kind]
        detail = ", ".join(self.fields) if self.kind == "changed" else self.risk
        return f"v{self.version} {verb} {self.step!r} ({detail})"


@dataclass(frozen=True, slots=True)
class PlanBinding:
    """What newer plan versions mean for a request bound to `plan_version`, step `step`.

    `rule` is None when no newer version exists or none changes a step; then `message`
    is empty, or says that newer versions changed no step."""

    rule: Rule | None
    message: str
    plan_version: int | None
    latest_version: int | None
    step: str | None
    changes: tuple[PlanChange, ...] = ()
    """Every step change found in the versions after the request's, oldest version first."""

    @property
    def stale(self) -> bool:
        """True when the request is no longer for the plan that holds: not approvable."""
        return self.rule is not None and self.rule in STALE_RULES

    @property
    def notice(self) -> bool:
        """True when newer versions changed only read-only steps: approvable, with a notice."""
        return self.rule == NOTICE_RULE

    @property
    def newer(self) -> bool:
        """True when a plan version newer than the request's exists."""
        return (
            self.plan_version is not None
            and self.latest_version is not None
            and self.latest_version > self.plan_version
        )

    @property
    def reason(self) -> str:
        """`stale (step-removed): <message>`, `notice (read-only-change): <message>`, or
        the message alone when no rule applied."""
        if self.stale:
            return f"stale ({self.rule}): {self.message}"
        if self.notice:
            return f"notice ({self.rule}): {self.message}"
        return self.message


UNBOUND = PlanBinding(None, "", None, None, None)
"""A request that names no usable plan version or step: nothing to compare."""


def plan_binding(plans: Mapping[int, Plan | None], plan_version: int, step: str) -> PlanBinding:
    """The rule that applies to a request for step `step` of plan `plan_version`.

    `plans` holds every plan version present, by number: its record, or None when the
    file is there but does not load. A version absent from `plans` is missing.
    """
    latest = max(plans, default=None)
    if latest is None or latest <= plan_version:
        return PlanBinding(None, "", plan_version, latest, step)

    def bound(rule: Rule, message: str, changes: tuple[PlanChange, ...] = ()) -> PlanBinding:
        return PlanBinding(rule, message, plan_version, latest, step, changes)

    refile = f"the agent must file a new request against plan v{latest}"
    own = plans.get(plan_version)
    if own is None:
        what = "is missing" if plan_version not in plans else "does not load"
        return bound(
            "plan-missing",
            f"plan v{plan_version}, which the request names, {what} and plan v{latest} "
            f"exists: what changed cannot be checked; {refile}",
        )
    for version in range(plan_version + 1, latest + 1):
        if plans.get(version) is None:
            what = "is missing" if version not in plans else "does not load"
            return bound(
                "plan-unreadable",
                f"plan v{version} {what}, so what changed since plan v{plan_version}, "
                f"which the request names, cannot be checked; {refile}",
            )
    newest = plans[latest]
    assert newest is not None  # checked in the loop above
    before = _step(own, step)
    after = _step(newest, step)
    changes = tuple(_changes(plans, own, plan_version, latest))
    if before is not None and after is None:
        return bound(
            "step-removed",
            f"step {step!r} of plan v{plan_version}, which the request names, is not in "
            f"plan v{latest}, the latest; {refile}",
            changes,
        )
    if before is not None and after is not None:
        moved = [name for name in BOUND_FIELDS if getattr(before, name) != getattr(after, name)]
        if moved:
            return bound(
                "step-changed",
                f"step {step!r} changed from plan v{plan_version}, which the request names, "
                f"to plan v{latest}, the latest: {_fields(before, after, moved)}; {refile}",
                changes,
            )
    for kind, rule in _EFFECTFUL_RULES:
        found = next((c for c in changes if c.effectful and c.kind == kind), None)
        if found is not None:
            verb = {"added": "adds", "changed": "changes", "removed": "drops"}[kind]
            what = f" ({', '.join(found.fields)})" if found.fields else ""
            return bound(
                rule,
                f"plan v{found.version} {verb} step {found.step!r} ({found.risk}){what} "
                f"compared with plan v{plan_version}, which the request names: a step with "
                f"effects makes a new plan; {refile}",
                changes,
            )
    if changes:
        listed = "; ".join(c.describe() for c in changes[:_LISTED])
        more = f"; and {len(changes) - _LISTED} more" if len(changes) > _LISTED else ""
        return bound(
            NOTICE_RULE,
            f"plan v{plan_version} is not the latest (v{latest}): only read-only steps "
            f"changed ({listed}{more}); the request stays approvable",
            changes,
        )
    return PlanBinding(
        None,
        f"plan v{plan_version} is not the latest (v{latest}): no step changed since",
        plan_version,
        latest,
        step,
    )


def _step(plan: Plan, step_id: str) -> PlanStep | None:
    return next((s for s in plan.steps if s.id == step_id), None)


def _fields(before: PlanStep, after: PlanStep, names: list[str]) -> str:
    """`risk read_only -> external_write, title`: values only where they are not agent text."""
    parts = []
    for name in names:
        if name in ("risk", "needs_approval"):
            old, new = getattr(before, name), getattr(after, name)
            parts.append(f"{name} {_value(old)} -> {_value(new)}")
        else:
            parts.append(name)
    return ", ".join(parts)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _higher(a: str, b: str) -> str:
    return a if RISK_ORDER[a] >= RISK_ORDER[b] else b


def _changes(
    plans: Mapping[int, Plan | None], own: Plan, since: int, latest: int
) -> Iterator[PlanChange]:
    """Every step change of each version after `since` against `own`, oldest first."""
    mine = {s.id: s for s in own.steps}
    for version in range(since + 1, latest + 1):
        plan = plans[version]
        assert plan is not None
        theirs = {s.id: s for s in plan.steps}
        for new in plan.steps:
            old = mine.get(new.id)
            if old is None:
                yield PlanChange(version, new.id, "added", (), new.risk)
                continue
            fields = tuple(change.field for change in step_changes(old, new))
            if fields:
                yield PlanChange(version, new.id, "changed", fields, _higher(old.risk, new.risk))
        for old in own.steps:
            if old.id not in theirs:
                yield PlanChange(version, old.id, "removed", (), old.risk)
