"""What the derivations read of a mission: `MissionView`, below `store.derivation.mission`.

`MissionState` (mission.py) folds a mission's files and calls the invariants; the status,
invariants and stale-instruction derivations read it back. They type it as this
protocol, so the mission module imports them and none of them imports it: no circle.
The small records the fold keeps per log line (`UsagePoint`, `StepLatest`, `EvidenceSeen`,
`Reference`)
live here with it.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import NamedTuple, Protocol

from store.derivation.ledger import Ledger
from store.format.load import Loaded
from store.format.problems import Problem
from store.format.records import (
    ApprovalRequest,
    Artifact,
    AttemptEvent,
    Constraints,
    Decision,
    HaltEvent,
    Intent,
    Plan,
    StepEvent,
    WaiterEvent,
)
from store.trust.policy import EffectivePolicy
from store.trust.signatures import Policy, SignatureState

# NamedTuples, not dataclasses: these are made once per log line on a scan.


class UsagePoint(NamedTuple):
    at: datetime
    usd: float
    tokens: int
    steps: int
    line: int = 0
    """Its events line."""


class StepLatest(NamedTuple):
    """What the derivations and screens read of a step's latest `step` event, and where
    it is in the log (not the whole record: the fold keeps one per step of every mission)."""

    state: str
    plan_version: int
    actor: str
    at: datetime
    reason: str
    line: int

    @classmethod
    def of(cls, event: StepEvent, line: int) -> StepLatest:
        return cls(event.state, event.plan_version, event.actor, event.at, event.reason, line)


class EvidenceSeen(NamedTuple):
    """What the screens read of a recent evidence line (not the whole record: a mission
    keeps up to `RECENT`), and its line."""

    line: int
    id: str
    step: str
    verdict: str


class Reference(NamedTuple):
    """Where a log first mentioned something (a step, a plan version)."""

    relpath: str
    line: int


class MissionView(Protocol):
    """The parts of a `MissionState` that the derivations read."""

    id: str
    base: str
    events_path: str
    intent: Loaded[Intent] | None
    constraints: Loaded[Constraints] | None
    constraint_history: dict[int, Loaded[Constraints]]
    plans: dict[int, Loaded[Plan]]
    requests: dict[str, Loaded[ApprovalRequest]]
    decisions: dict[str, Loaded[Decision]]
    artifacts: set[str]
    leases: dict[str, bool]
    step_latest: dict[str, StepLatest]
    used_approvals: dict[str, AttemptEvent]
    first_event_at: datetime | None
    last_event_at: datetime | None
    halt: HaltEvent | None
    waiters: dict[str, WaiterEvent]
    event_step_refs: dict[str, Reference]
    plan_version_refs: dict[int, Reference]
    ledger: Ledger
    usage: deque[UsagePoint]
    passed_steps: set[str]
    evidence_step_refs: dict[str, Reference]
    artifact_refs: dict[str, tuple[Artifact, Reference]]

    @property
    def latest_plan(self) -> Plan | None: ...

    @property
    def effective_policy(self) -> EffectivePolicy: ...

    @property
    def signature_policy(self) -> Policy: ...

    def problems(self) -> list[Problem]: ...

    def signature(self, request_id: str) -> SignatureState | None: ...

    def decision_is_current(self, request_id: str) -> bool | None: ...
