"""What the fold notes besides the state: marks for the timeline and metrics, findings.

`MissionState` folds every event into its aggregates; the events that say something
about coordination also go to its `Ledger`: an actor new to the mission (a handoff), a
step that succeeds, fails, blocks or ends with an unknown outcome, a tool call that
ends (or will never end: a crash), a halt, and what looks wrong as it happens (a finding:
a step succeeded twice under one plan version, two actors holding one step, a step event
under a superseded plan, an uncertain effect tried again under another key, an effect
repeated without a key, an effect that finished ok done again under another key, an
external id a later attempt contradicts or drops, an approval used twice). The hot path
calls it only for those events.

Marks are kept in `journal` (the most recent JOURNAL, oldest first: the replay's
landmarks, what `store.analysis.metrics` counts); the first mark of each finding per
step and plan version stays in `findings` however long the log (what
`store.analysis.review` cites). Every value held is
immutable (tuples, ints, frozen records), so `copy()` copies only the containers: the
replay keeps a copy every few thousand lines.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections import deque
from datetime import datetime
from typing import Any, Literal, NamedTuple, get_args

from store.format.records import AttemptEvent, canonical_json

JOURNAL = 4096
COMPLETED_KEPT = 8
"""Effects that finished ok kept per step (the latest), to see one done again."""
LINES_KEPT = 256
"""Lines of the first attempts kept per step (the review cites the one past a limit)."""
TOOLS_KEPT = 1024
"""Tools whose last start is kept (the first TOOLS_KEPT names seen)."""
UNFINISHED = "unfinished"
"""The outcome a `call` mark gives an attempt that will never finish (a crash)."""
ACTIVE_STATES = frozenset({"ready", "running", "verifying", "waiting_for_approval"})
"""Step states of a step still under way (a mission with one is active)."""
ENDING_STATES = frozenset({"succeeded", "failed", "outcome_unknown"})
"""A step state after which an attempt of the step still open will never finish."""

NOTED_STATES = frozenset({"succeeded", "failed", "blocked", "outcome_unknown"})
"""Step states the ledger marks (the others are the hot path: nothing to note)."""

Finding = Literal[
    "repeated-success",
    "contested",
    "stale-plan",
    "replayed-effect",
    "unkeyed-repeat",
    "redone-effect",
    "forgotten-ref",
    "reused-approval",
]
"""The marks that are findings (kept in `findings` per step and plan version)."""
MarkKind = Literal["handoff", "state", "call", "halt", Finding]
FINDINGS: tuple[Finding, ...] = get_args(Finding)


class Mark(NamedTuple):
    """One noted event: its events line and time, what it was, who, which step, under
    which plan version (0: none known).

    `subject` is the state (`state`), the tool (`call`) or the actor handed over from
    (`handoff`); `detail` the reason, the call's outcome (`unfinished` for an attempt
    that will never finish), or what a finding saw."""

    line: int
    at: datetime
    kind: MarkKind
    actor: str
    step: str | None
    subject: str = ""
    detail: str = ""
    version: int = 0

    def describe(self) -> str:
        """`handoff from A`, `failed: why`, `call tool: error`, `halt: why`, `contested: ...`."""
        if self.kind == "handoff":
            return f"handoff from {self.subject}"
        head = {"state": self.subject, "call": f"call {self.subject}"}.get(self.kind, self.kind)
        return f"{head}: {self.detail}" if self.detail else head


class AttemptSeen(NamedTuple):
    """A started attempt, the plan version it ran under (that of its step's latest step
    event, else the newest named so far; 1 when none), and its outcome once finished."""

    line: int
    event: AttemptEvent
    plan_version: int
    outcome: str | None = None

    @property
    def uncertain(self) -> bool:
        """Started with effects possible and not known to have failed or succeeded."""
        return self.outcome in (None, "unknown")


class Completed(NamedTuple):
    """An effect that finished ok: its started line, attempt, key, what it did (the
    sha256 of its tool and canonical args) and the plan version it ran under."""

    line: int
    attempt: int
    key: str
    digest: str
    version: int


class KnownRef(NamedTuple):
    """The external id an attempt that finished ok recorded, and its line."""

    ref: str
    line: int


@functools.lru_cache(maxsize=4096)
def _joined(holders: frozenset[str], actor: str) -> frozenset[str]:
    """`holders` and `actor`, one set for every step and mission that has them (a
    workspace's steps mostly have the same one or two)."""
    return holders | {actor}


def effect_digest(event: AttemptEvent) -> str:
    """What an attempt does, as a digest: its tool and canonical args."""
    return hashlib.sha256(canonical_json({"tool": event.tool, "args": event.args})).hexdigest()


class Ledger:
    """Marks and findings of one events log (reset with it)."""

    def __init__(self) -> None:
        self.journal: deque[Mark] = deque(maxlen=JOURNAL)
        self.findings: dict[tuple[str, str, int], Mark] = {}
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
        self.attempt_lines: dict[str, tuple[int, ...]] = {}
        """The lines of each step's first LINES_KEPT attempts."""
        self.open: dict[str, AttemptSeen] = {}
        """Each step's attempt started and not finished yet."""
        self.effects: dict[str, AttemptSeen] = {}
        """Each step's last attempt started with effects possible."""
        self.ran: dict[tuple[str, int], AttemptSeen] = {}
        """The same under each plan version: (step, version) -> its last one."""
        self.completed: dict[str, tuple[Completed, ...]] = {}
        """Each step's latest COMPLETED_KEPT effects that finished ok."""
        self.tools: dict[str, tuple[int, datetime]] = {}
        """Each tool's last start: its line and time."""
        self.refs: dict[tuple[str, str], KnownRef] = {}
        """The first external id an attempt that finished ok recorded, per effect: (step,
        its idempotency key, or `tool <name>` when it has none)."""
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
            self.findings.setdefault((mark.kind, mark.step or "", mark.version), mark)

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
            self._note(
                Mark(line, event.at, "stale-plan", actor, step, detail=seen, version=version)
            )
        holders = self.holders.get(step, frozenset())
        if (
            before is not None
            and before.actor != actor
            and actor in holders
            and before.state in ACTIVE_STATES
        ):
            held = f"{before.actor} holds it {before.state} (line {before.line})"
            self._note(Mark(line, event.at, "contested", actor, step, detail=held, version=version))
        if actor not in holders:
            self.holders[step] = _joined(holders, actor)
        if state not in NOTED_STATES:
            return
        self._note(Mark(line, event.at, "state", actor, step, state, event.reason, version))
        if state in ENDING_STATES:
            self._unfinished(step, event, line)
        if state == "succeeded":
            if self.successes.get(step) == version:
                again = f"succeeded again under plan v{version}"
                self._note(
                    Mark(
                        line,
                        event.at,
                        "repeated-success",
                        actor,
                        step,
                        detail=again,
                        version=version,
                    )
                )
            self.successes[step] = version

    def attempt(self, event: AttemptEvent, line: int, version: int) -> None:
        step = event.step
        if event.phase == "finished":
            self._finished(event, line, version)
            return
        self._unfinished(step, event, line)
        self.attempts[step] = self.attempts.get(step, 0) + 1
        lines = self.attempt_lines.get(step, ())
        if len(lines) < LINES_KEPT:
            self.attempt_lines[step] = (*lines, line)
        if event.tool in self.tools or len(self.tools) < TOOLS_KEPT:
            self.tools[event.tool] = (line, event.at)
        seen = AttemptSeen(line, event, version)
        self.open[step] = seen
        self._check_ref(event, event, line, version, ended_ok=False)
        if event.approval:
            first = self.approvals.get(event.approval)
            if first is not None:
                used = f"approval {event.approval} used before (line {first.line})"
                self._finding(event, line, version, "reused-approval", used)
            else:
                self.approvals[event.approval] = seen
        if not event.effect_possible:
            return
        key, last = event.idempotency_key, self.effects.get(step)
        if last is not None:
            if last.uncertain and (not key or key != last.event.idempotency_key):
                again = f"attempt {last.event.attempt} (line {last.line}) may have had its effect"
                self._finding(event, line, version, "replayed-effect", again)
            if not key:
                again = f"attempt {event.attempt} repeats an effect without an idempotency key"
                self._finding(event, line, version, "unkeyed-repeat", again)
        digest = effect_digest(event)
        for done in self.completed.get(step, ()):
            if done.digest == digest and done.version == version and (not key or key != done.key):
                under = f"key {key!r}" if key else "no key"
                again = (
                    f"attempt {event.attempt} does again what attempt {done.attempt} (line "
                    f"{done.line}) did (same tool and args, finished ok), under {under}"
                )
                self._finding(event, line, version, "redone-effect", again)
                break
        if not event.approval:
            self.unapproved.setdefault(step, seen)
        self.effects[step] = seen
        self.ran[(step, version)] = seen

    def _finding(
        self, event: AttemptEvent, line: int, version: int, kind: MarkKind, detail: str
    ) -> None:
        self._note(
            Mark(line, event.at, kind, event.actor, event.step, detail=detail, version=version)
        )

    def _finished(self, event: AttemptEvent, line: int, version: int) -> None:
        step = event.step
        outcome = event.outcome or "unknown"
        said = event.outcome or ""
        self._note(Mark(line, event.at, "call", event.actor, step, event.tool, said, version))
        started = self.open.get(step)
        if started is not None and started.event.attempt == event.attempt:
            del self.open[step]
        last = self.effects.get(step)
        if last is not None and last.event.attempt == event.attempt:
            last = self.effects[step] = last._replace(outcome=outcome)
            if (step, last.plan_version) in self.ran:
                self.ran[(step, last.plan_version)] = last
            if outcome == "ok":
                begun = last.event
                key, digest = begun.idempotency_key, effect_digest(begun)
                done = Completed(last.line, event.attempt, key, digest, last.plan_version)
                self.completed[step] = (*self.completed.get(step, ()), done)[-COMPLETED_KEPT:]
            started = last
        elif started is None or started.event.attempt != event.attempt:
            started = None
        begun = started.event if started is not None else event
        self._check_ref(event, begun, line, version, ended_ok=outcome == "ok")

    def _check_ref(
        self, event: AttemptEvent, begun: AttemptEvent, line: int, version: int, *, ended_ok: bool
    ) -> None:
        """Compare the event's external id with the one its effect (`begun`: the attempt's
        started event) recorded: a different one contradicts it (once an attempt), none at
        an ok finish drops it; the first one an ok finish names is recorded."""
        identity = (begun.step, begun.idempotency_key or f"tool {begun.tool}")
        known = self.refs.get(identity)
        ref = event.external_ref or begun.external_ref
        if known is None:
            if ended_ok and ref:
                self.refs[identity] = KnownRef(ref, line)
            return
        said = event.external_ref
        if said and said != known.ref and (begun is event or said != begun.external_ref):
            note = f"external_ref {said!r} contradicts {known.ref!r} (line {known.line})"
            self._finding(event, line, version, "forgotten-ref", note)
        elif ended_ok and not ref:
            lost = (
                f"attempt {event.attempt} finished with no external_ref; {known.ref!r} was "
                f"recorded (line {known.line})"
            )
            self._finding(event, line, version, "forgotten-ref", lost)

    def _unfinished(self, step: str, event: Any, line: int) -> None:
        """The step's open attempt (if any) will never finish: a `call` mark, unfinished."""
        started = self.open.pop(step, None)
        if started is None:
            return
        attempt = started.event
        what = f"{UNFINISHED}: attempt {attempt.attempt} (line {started.line}) never finished"
        self._note(
            Mark(
                line,
                event.at,
                "call",
                attempt.actor,
                step,
                attempt.tool,
                what,
                started.plan_version,
            )
        )

    def halt(self, event: Any, line: int) -> None:
        self._note(Mark(line, event.at, "halt", event.actor, None, detail=event.reason))
        for step in list(self.open):
            self._unfinished(step, event, line)
