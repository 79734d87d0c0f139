"""loopx's JSON records as pydantic models, read leniently: unknown fields are kept,
missing ones default, so a newer loopx that adds fields still reads."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

REGISTRY_VERSIONS = frozenset({"0.1"})
EVENT_VERSIONS = frozenset({"loopx_rollout_event_v0"})
LEASE_VERSIONS = frozenset({"task_lease_v0"})


class LoopxRecord(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)


class RegistryGoal(LoopxRecord):
    """One goal of `.loopx/registry.json`."""

    id: str
    status: str = ""
    repo: str = ""
    state_file: str = ""
    display_name: str = ""
    quota: Any = None
    """Its quota policy, when set (`compute`, `window_hours`, ...):
    store/sources/loopx/policy.py."""
    compute_quota: Any = None
    activation_state: Any = None
    activation: Any = None


class Registry(LoopxRecord):
    """`.loopx/registry.json` (schema_version "0.1")."""

    schema_version: str = ""
    common_runtime_root: str = ""
    goals: list[RegistryGoal] = Field(default_factory=list)


class RolloutEvent(LoopxRecord):
    """One line of `<runtime>/goals/<goal>/rollout-event-log.jsonl`."""

    schema_version: str = ""
    event_kind: str = ""
    todo_id: str | None = None
    agent_id: str | None = None
    recorded_at: str = ""
    status: str = ""
    summary: str = ""


class Lease(LoopxRecord):
    """`task-leases/<todo>.json`: who holds a todo (task_lease_v0)."""

    schema_version: str = ""
    todo_id: str = ""
    owner: str = ""
    version: int = 0
    status: str = ""
    released: bool = False
    expires_at: str = ""
    updated_at: str = ""

    @property
    def active(self) -> bool:
        return not self.released and self.status in ("", "active")


class RunEntry(LoopxRecord):
    """One line of `runs/index.jsonl`: a run's class and where its JSON and Markdown are."""

    generated_at: str = ""
    classification: str = ""
    agent_id: str | None = None
    todo_id: str | None = None
    recommended_action: str = ""
    json_path: str = ""
    markdown_path: str = ""


class Quota(LoopxRecord):
    """`quota_event.before` / `.after` of a quota run: slots spent of those allowed."""

    spent_slots: float | None = None
    allowed_slots: float | None = None
    state: str = ""


class RunRecord(LoopxRecord):
    """A run's JSON file: a quota run carries `quota_event`, a gate run its decision."""

    classification: str = ""
    generated_at: str = ""
    quota_event: dict[str, Any] | None = None
    gate: dict[str, Any] | str | None = None
    decision: dict[str, Any] | str | None = None

    def quota(self, when: str) -> Quota | None:
        """`quota_event[when]` ("before" or "after"), if this is a quota run."""
        found = (self.quota_event or {}).get(when)
        return Quota.model_validate(found) if isinstance(found, dict) else None
