"""What the fold notes besides the state: marks for the timeline and metrics, findings.

`MissionState` folds every event into its aggregates; the events that say something
about coordination also go to its `Ledger`: an actor new to the mission (a handoff), a
step that succeeds, fails, blocks or ends with an unknown outcome, a tool call that
ends, a halt, and what looks wrong as it happens (a finding: a step succeeded twice under
one plan version, two actors holding one step, a step event under a superseded plan, an
uncertain effect tried again under another key, an effect repeated without a key, an
approval used twice). The hot path calls it only for those events.

Marks are kept in `journal` (the most recent JOURNAL, oldest first: the replay's
landmarks, what `store.metrics` counts); the first mark of each finding per step stays in
`findings` however long the log (what `store.review` cites). Every value held is
immutable (tuples, ints, frozen records), so `copy()` copies only the containers: the
replay keeps a copy every few thousand lines.
"""

from __future__ import annotations

import copy
from collections import deque
from datetime import datetime
from typing import Any, Literal, NamedTuple

from store.derive import ACTIVE_STATES
from store.records import AttemptEvent

JOURNAL = 4096

NOTED_STATES = frozenset({"succeeded", "failed", "blocked", "outcome_unknown"})
"""Step states the ledger marks (the others are the hot path: nothing to note)."""

MarkKind = Literal[
    "handoff",
    "state",
    "call",
    "halt",
    "repeated-success",
    "contested",
    "stale-plan",
    "replayed-effect",
    "unkeyed-repeat",
    "reused-approval",
]
FINDINGS: tuple[MarkKind, ...] = (
    "repeated-success",
    "contested",
    "stale-plan",
    "replayed-effect",
    "unkeyed-repeat",
    "reused-approval",
)


class Mark(NamedTuple):
    """One noted event: its events line and time, what it was, who, which step.

    `subject` is the state (`state`), the tool (`call`) or the actor handed over from
    (`handoff`); `detail` the reason, the call's outcome, or what a finding saw."""

    line: int
    at: datetime
    kind: MarkKind
    actor: str
    step: str | None
    subject: str = ""
    detail: str = ""

    def describe(self) -> str:
        """`handoff from A`, `failed: why`, `call tool: error`, `halt: why`, `contested: ...`."""
        if self.kind == "handoff":
            return f"handoff from {self.subject}"
        head = {"state": self.subject, "call": f"call {self.subject}"}.get(self.kind, self.kind)
        return f"{head}: {self.detail}" if self.detail else head


class AttemptSeen(NamedTuple):
    """A started attempt, the plan version it ran under (that of its step's latest step
    event, else the newest named so far; 0 when none), and its outcome once finished."""

    line: int
    event: AttemptEvent
    plan_version: int
    outcome: str | None = None

    @property
    def uncertain(self) -> bool:
        """Started with effects possible and not known to have failed or succeeded."""
        return self.outcome in (None, "unknown")


class Ledger:
    """Marks and findings of one events log (reset with it)."""

    def __init__(self) -> None:
        self.journal: deque[Mark] = deque(maxlen=JOURNAL)
        self.findings: dict[tuple[str, str], Mark] = {}
        self.actor: str | None = None
        """The actor of the last event."""
        self.actors: dict[str, int] = {}
        """Each actor's first line."""
        self.mixed = False
        """True once a second actor wrote: only then can a step change hands."""
        self.plan_now = 0
        """The newest plan version a step event named so far."""
        self.holders: dict[str, frozenset[str]] = {}
        """The actors that wrote step events for each step."""
        self.successes: dict[str, int] = {}
        """Each step's plan version when it last succeeded."""
        self.attempts: dict[str, int] = {}
        """Attempts started per step."""
        self.effects: dict[str, AttemptSeen] = {}
        """Each step's last attempt started with effects possible."""
        self.unapproved: dict[str, AttemptSeen] = {}
        """Each step's first attempt started with effects possible and no approval."""
        self.approvals: dict[str, AttemptSeen] = {}
        """Each approval's first use."""

    def copy(self) -> Ledger:
        other = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, dict | deque):
                setattr(other, name, value.copy())
        return other

    def marks(self) -> list[Mark]:
        """The marks kept, oldest first (the replay's landmarks)."""
        return list(self.journal)

    def _note(self, mark: Mark) -> None:
        self.journal.append(mark)
        if mark.kind in FINDINGS:
            self.findings.setdefault((mark.kind, mark.step or ""), mark)

    # ---- folding (called by MissionState._on_event) ---------------------------------

    def new_actor(self, event: Any, line: int) -> None:
        """The event's actor differs from the last event's."""
        actor = event.actor
        if actor not in self.actors:
            self.actors[actor] = line
            self.mixed = len(self.actors) > 1
            if self.actor is not None:
                step = getattr(event, "step", None)
                self._note(Mark(line, event.at, "handoff", actor, step, self.actor))
        self.actor = actor

    def step(self, event: Any, line: int, before: Any) -> None:
        """A step event that is the step's first, changes its writer, names another plan
        version than the newest so far, or enters a state in NOTED_STATES; `before` is
        the step's previous `StepLatest` (or None)."""
        step, actor, version, state = event.step, event.actor, event.plan_version, event.state
        if version > self.plan_now:
            self.plan_now = version
        elif version < self.plan_now:
            seen = f"plan v{version}, after plan v{self.plan_now} was in use"
            self._note(Mark(line, event.at, "stale-plan", actor, step, detail=seen))
        holders = self.holders.get(step, frozenset())
        if (
            before is not None
            and before.event.actor != actor
            and actor in holders
            and before.event.state in ACTIVE_STATES
        ):
            held = f"{before.event.actor} holds it {before.event.state} (line {before.line})"
            self._note(Mark(line, event.at, "contested", actor, step, detail=held))
        if actor not in holders:
            self.holders[step] = holders | {actor}
        if state not in NOTED_STATES:
            return
        self._note(Mark(line, event.at, "state", actor, step, state, event.reason))
        if state == "succeeded":
            if self.successes.get(step) == version:
                again = f"succeeded again under plan v{version}"
                self._note(Mark(line, event.at, "repeated-success", actor, step, detail=again))
            self.successes[step] = version

    def attempt(self, event: AttemptEvent, line: int, version: int) -> None:
        step = event.step
        if event.phase == "finished":
            self._note(
                Mark(line, event.at, "call", event.actor, step, event.tool, event.outcome or "")
            )
            last = self.effects.get(step)
            if last is not None and last.event.attempt == event.attempt:
                self.effects[step] = last._replace(outcome=event.outcome or "unknown")
            return
        self.attempts[step] = self.attempts.get(step, 0) + 1
        seen = AttemptSeen(line, event, version)
        if event.approval:
            first = self.approvals.get(event.approval)
            if first is not None:
                used = f"approval {event.approval} used before (line {first.line})"
                self._note(Mark(line, event.at, "reused-approval", event.actor, step, detail=used))
            else:
                self.approvals[event.approval] = seen
        if not event.effect_possible:
            return
        key, last = event.idempotency_key, self.effects.get(step)
        if last is not None:
            if last.uncertain and (not key or key != last.event.idempotency_key):
                again = f"attempt {last.event.attempt} (line {last.line}) may have had its effect"
                self._note(Mark(line, event.at, "replayed-effect", event.actor, step, detail=again))
            if not key:
                again = f"attempt {event.attempt} repeats an effect without an idempotency key"
                self._note(Mark(line, event.at, "unkeyed-repeat", event.actor, step, detail=again))
        if not event.approval:
            self.unapproved.setdefault(step, seen)
        self.effects[step] = seen

    def halt(self, event: Any, line: int) -> None:
        self._note(Mark(line, event.at, "halt", event.actor, None, detail=event.reason))
