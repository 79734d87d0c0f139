"""What changed between two plan versions: steps added, removed, changed field by field.

Pure data: no textual, no rich. Steps are matched by `id`. Plan metadata that always
differs between versions (`version`, `created_at`, `author`, `reason`) is not part of
the diff; the plan-level fields compared are `assumptions`, `expected_evidence` and the
order of the steps that both versions share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from store.format.records import Plan, PlanStep

STEP_FIELDS: tuple[str, ...] = tuple(name for name in PlanStep.model_fields if name != "id")
"""The step fields compared, in the order the format declares them."""
PLAN_FIELDS: tuple[str, ...] = ("assumptions", "expected_evidence")
"""The plan-level fields compared (besides the order of shared steps)."""
STEP_ORDER = "step order"
"""The name of the plan-level change when shared steps appear in another order."""


class FieldChange(NamedTuple):
    """One field with its value in the old and the new version."""

    field: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class StepChange:
    """A step present in both versions whose fields differ; `title` is the new one."""

    id: str
    changes: tuple[FieldChange, ...]
    title: str = ""


@dataclass(frozen=True, slots=True)
class PlanDiff:
    """Old version -> new version. `added` in new order, `removed` in old order."""

    old_version: int
    new_version: int
    added: tuple[PlanStep, ...] = ()
    removed: tuple[PlanStep, ...] = ()
    changed: tuple[StepChange, ...] = ()
    fields: tuple[FieldChange, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the two versions plan the same steps with the same fields."""
        return not (self.added or self.removed or self.changed or self.fields)


def step_changes(old: PlanStep, new: PlanStep) -> tuple[FieldChange, ...]:
    """The fields of one step that differ, in declaration order."""
    return tuple(
        FieldChange(name, getattr(old, name), getattr(new, name))
        for name in STEP_FIELDS
        if getattr(old, name) != getattr(new, name)
    )


def diff_plans(old: Plan, new: Plan) -> PlanDiff:
    """Compare two plan versions step by step (matched by id), then plan-level fields."""
    old_steps = {step.id: step for step in old.steps}
    new_steps = {step.id: step for step in new.steps}
    added = tuple(step for step in new.steps if step.id not in old_steps)
    removed = tuple(step for step in old.steps if step.id not in new_steps)
    changed = []
    for step in new.steps:
        before = old_steps.get(step.id)
        if before is None:
            continue
        changes = step_changes(before, step)
        if changes:
            changed.append(StepChange(step.id, changes, step.title))
    fields = [
        FieldChange(name, getattr(old, name), getattr(new, name))
        for name in PLAN_FIELDS
        if getattr(old, name) != getattr(new, name)
    ]
    old_order = [step.id for step in old.steps if step.id in new_steps]
    new_order = [step.id for step in new.steps if step.id in old_steps]
    if old_order != new_order:
        fields.append(FieldChange(STEP_ORDER, old_order, new_order))
    return PlanDiff(old.version, new.version, added, removed, tuple(changed), tuple(fields))


def list_delta(old: Sequence[Any], new: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(removed, added): items of `old` not in `new`, and of `new` not in `old`, in order."""
    return [item for item in old if item not in new], [item for item in new if item not in old]
