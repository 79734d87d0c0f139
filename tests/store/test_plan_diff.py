"""diff_plans: steps added, removed, changed field by field; plan-level fields."""

from __future__ import annotations

from typing import Any

from store.derivation.plan_diff import STEP_ORDER, FieldChange, diff_plans, list_delta
from store.format.records import Plan, validate


def plan(version: int, steps: list[dict[str, Any]], **fields: Any) -> Plan:
    data: dict[str, Any] = {
        "schema": 1,
        "version": version,
        "created_at": "2025-01-01T12:00:00Z",
        "author": "agent",
        "steps": steps,
        **fields,
    }
    if version > 1:
        data.setdefault("reason", "re-plan")
    return validate(Plan, data)


S1 = {"id": "s1", "title": "Dump schema"}
S2 = {"id": "s2", "title": "Copy rows", "risk": "reversible_write", "depends_on": ["s1"]}
S3 = {"id": "s3", "title": "Switch traffic", "risk": "irreversible", "needs_approval": True}


def test_identical_plans_have_an_empty_diff() -> None:
    old = plan(1, [S1, S2], assumptions=["db up"])
    new = plan(2, [S1, S2], assumptions=["db up"], author="someone else")
    diff = diff_plans(old, new)
    assert diff.empty
    assert (diff.old_version, diff.new_version) == (1, 2)
    assert diff.added == diff.removed == diff.changed == diff.fields == ()


def test_added_and_removed_steps() -> None:
    diff = diff_plans(plan(1, [S1, S2]), plan(2, [S1, S3]))
    assert [s.id for s in diff.added] == ["s3"]
    assert [s.id for s in diff.removed] == ["s2"]
    assert diff.changed == ()
    assert not diff.empty


def test_changed_fields_in_declaration_order() -> None:
    changed = {
        **S2,
        "title": "Copy rows in batches",
        "risk": "external_write",
        "needs_approval": True,
        "depends_on": ["s0", "s1"],
    }
    diff = diff_plans(plan(1, [S1, S2]), plan(2, [S1, changed]))
    assert len(diff.changed) == 1
    step = diff.changed[0]
    assert step.id == "s2"
    assert step.title == "Copy rows in batches"
    assert step.changes == (
        FieldChange("title", "Copy rows", "Copy rows in batches"),
        FieldChange("depends_on", ["s1"], ["s0", "s1"]),
        FieldChange("risk", "reversible_write", "external_write"),
        FieldChange("needs_approval", False, True),
    )
    # a FieldChange is a plain (field, old, new) tuple
    field, old, new = step.changes[0]
    assert (field, old, new) == ("title", "Copy rows", "Copy rows in batches")


def test_plan_level_fields_and_step_order() -> None:
    old = plan(1, [S1, S2], assumptions=["db up"], expected_evidence=["dump"])
    new = plan(2, [S2, S1], assumptions=["db up", "window agreed"], expected_evidence=["dump"])
    diff = diff_plans(old, new)
    names = [change.field for change in diff.fields]
    assert names == ["assumptions", STEP_ORDER]
    assert diff.fields[0].new == ["db up", "window agreed"]
    assert diff.fields[1] == FieldChange(STEP_ORDER, ["s1", "s2"], ["s2", "s1"])


def test_added_step_alone_does_not_count_as_reordering() -> None:
    diff = diff_plans(plan(1, [S1, S2]), plan(2, [S3, S1, S2]))
    assert [s.id for s in diff.added] == ["s3"]
    assert diff.fields == ()


def test_list_delta() -> None:
    assert list_delta(["a", "b", "c"], ["b", "d"]) == (["a", "c"], ["d"])
    assert list_delta([], []) == ([], [])
