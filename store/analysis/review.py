"""Plan review: seven questions and six production failure modes, answered from the state.

`review(mission, version)` answers, for a plan version (the latest by default), each of
the seven questions a reviewer asks of a plan and each failure mode seen in production
runs: pass, fail or unknown (the records cannot tell yet), with the records that decide
it (path and line). docs/review.md says how each answer is decided. Execution records
count for the version they ran under: a request for the plan version it names, an
attempt for its step's plan version at the time (`store.derivation.ledger.AttemptSeen`).

Pure: reads the index (`MissionState`: its documents, aggregates and ledger), never a
file; cheap enough to call on every refresh.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from store.derivation.derive import attempt_limit, over_budget
from store.derivation.instructions import stale_instructions
from store.derivation.ledger import AttemptSeen, Mark
from store.derivation.mission import MissionState
from store.format.load import Loaded
from store.format.records import Constraints, Plan, PlanStep, canonical_json, request_digest

Verdict = Literal["pass", "fail", "unknown"]


@dataclass(frozen=True, slots=True)
class Cite:
    """A record an answer rests on: a path under the state directory, a line (None: the
    whole file), and what it shows."""

    path: str
    line: int | None
    note: str


@dataclass(frozen=True, slots=True)
class Answer:
    key: str
    question: str
    verdict: Verdict
    reason: str
    cites: tuple[Cite, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanReview:
    mission: str
    plan_version: int | None
    latest_version: int | None
    questions: tuple[Answer, ...]
    failure_modes: tuple[Answer, ...]

    @property
    def answers(self) -> tuple[Answer, ...]:
        return self.questions + self.failure_modes

    @property
    def failed(self) -> bool:
        return any(answer.verdict == "fail" for answer in self.answers)


QUESTIONS: dict[str, str] = {
    "objective": "Is the objective normalized, and are non-goals explicit?",
    "exact-plan": "Can an operator review the exact plan version being authorized?",
    "risk-recovery": "Does each effectful step have a risk class and a recovery path?",
    "bound-approvals": "Are approvals attached to exact tool arguments near execution time?",
    "safe-resume": "Can the run resume without replaying an uncertain side effect?",
    "independent-evidence": "Is completion based on independent evidence?",
    "no-new-authority": (
        "Can a different provider continue from durable state without gaining new authority?"
    ),
}
FAILURE_MODES: dict[str, str] = {
    "repeated-work": "Was work repeated after a restart?",
    "runaway-loop": "Did a step retry past its limit, or the run spend past its budget?",
    "unknown-schema": "Is every record in a schema this reader knows?",
    "unkeyed-repeat": "Was an effectful attempt repeated without an idempotency key?",
    "forgotten-id": "Did a later attempt contradict or drop an external id recorded before?",
    "stale-instructions": "Did the run act on instructions older than the current ones?",
}


def review(mission: MissionState, version: int | None = None) -> PlanReview:
    """Answer every question for plan `version` (default: the latest present).

    Raises KeyError for a version that is not there (a review of nothing)."""
    latest = max(mission.plans, default=None)
    wanted = latest if version is None else version
    if wanted is not None and wanted not in mission.plans:
        raise KeyError(wanted)
    scope = _Scope(mission, wanted)
    return PlanReview(
        mission.id,
        wanted,
        latest,
        tuple(_answer(key, check(scope)) for key, check in _QUESTION_CHECKS.items()),
        tuple(_answer(key, check(scope)) for key, check in _FAILURE_CHECKS.items()),
    )


Found = tuple[Verdict, str, list[Cite]]


def _answer(key: str, found: Found) -> Answer:
    verdict, reason, cites = found
    question = QUESTIONS.get(key) or FAILURE_MODES[key]
    return Answer(key, question, verdict, reason, tuple(cites))


def _judge(failures: list[Cite], passing: str, failing: str, cites: list[Cite]) -> Found:
    """fail with `failures` first when there are any, else pass."""
    if failures:
        return "fail", failing, failures + cites
    return "pass", passing, cites


class _Scope:
    """The plan version under review and what of the state belongs to it."""

    def __init__(self, mission: MissionState, version: int | None) -> None:
        self.mission = mission
        self.version = version
        self.loaded: Loaded[Plan] | None = mission.plans.get(version) if version else None
        self.plan = self.loaded.record if self.loaded is not None else None
        self.steps: dict[str, PlanStep] = {s.id: s for s in self.plan.steps} if self.plan else {}
        record = mission.constraints.record if mission.constraints else None
        self.constraints: Constraints | None = record

    def step_cite(self, step: str, note: str) -> Cite:
        loaded = self.loaded
        path = loaded.relpath if loaded is not None else f"{self.mission.base}/plan"
        pattern = r'"id"\s*:\s*' + re.escape(json.dumps(step))
        return Cite(path, _line(loaded.text if loaded else None, pattern), note)

    def event_cite(self, line: int, note: str) -> Cite:
        return Cite(self.mission.events_path, line, note)

    def mark_cite(self, mark: Mark) -> Cite:
        return self.event_cite(mark.line, f"{mark.step}: {mark.detail}")

    def findings(self, *kinds: str) -> list[Mark]:
        """The ledger's first finding of each of `kinds` for each step of this version."""
        return [
            mark
            for (found, step, version), mark in sorted(self.mission.ledger.findings.items())
            if found in kinds and step in self.steps and version == self.version
        ]

    def attempts(self, seen: Iterable[AttemptSeen]) -> list[AttemptSeen]:
        """The attempts that ran under this version, on its steps."""
        return [a for a in seen if a.plan_version == self.version and a.event.step in self.steps]

    def needs_approval(self, step: PlanStep) -> bool:
        auto = self.constraints.approval.auto if self.constraints else []
        return step.needs_approval or (step.risk != "read_only" and step.risk not in auto)


def _line(text: str | None, pattern: str) -> int | None:
    """The line of the first match of `pattern` (a regex) in `text`."""
    if text is None:
        return None
    found = re.search(pattern, text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _key_cite(loaded: Loaded[Any], key: str, note: str) -> Cite:
    return Cite(loaded.relpath, _line(loaded.text, rf"^\s*{re.escape(key)}\s*="), note)


# ---- the seven questions ---------------------------------------------------------------------


def _objective(scope: _Scope) -> Found:
    loaded = scope.mission.intent
    if loaded is None or loaded.record is None:
        what = "is missing" if loaded is None else "does not load"
        return "unknown", f"intent.toml {what}", []
    intent = loaded.record
    objective = intent.objective.strip()
    failures = []
    if not objective:
        failures.append(_key_cite(loaded, "objective", "no objective"))
    elif "\n" in objective:
        failures.append(_key_cite(loaded, "objective", "the objective is not one statement"))
    if not intent.success_evidence:
        failures.append(Cite(loaded.relpath, None, "no success_evidence: done is not defined"))
    if not intent.non_goals:
        failures.append(Cite(loaded.relpath, None, "no non_goals"))
    cites = [
        _key_cite(loaded, "objective", objective),
        _key_cite(loaded, "non_goals", f"{len(intent.non_goals)} non-goals"),
    ]
    return _judge(
        failures,
        "one objective, what proves it done, and explicit non-goals",
        "the intent lacks " + ", ".join(c.note.removeprefix("no ") for c in failures),
        cites if not failures else [],
    )


def _exact_plan(scope: _Scope) -> Found:
    mission, loaded = scope.mission, scope.loaded
    if loaded is None:
        return "unknown", "no plan yet", []
    if scope.plan is None:
        cites = [Cite(p.path, p.line, p.message) for p in loaded.problems]
        return "fail", f"plan v{scope.version} does not load", cites
    failures = []
    if scope.plan.version != scope.version:
        failures.append(Cite(loaded.relpath, None, f"says version {scope.plan.version}"))
    requests = 0
    for request_id, request in sorted(mission.requests.items()):
        record = request.record
        if record is None or record.plan_version != scope.version:
            continue
        requests += 1
        if record.step not in scope.steps:
            failures.append(Cite(request.relpath, None, f"step {record.step!r} is not in the plan"))
        if mission.decision_is_current(request_id) is False:
            decided = mission.decisions[request_id].relpath
            failures.append(Cite(decided, None, "decided on other bytes than the request holds"))
    cite = Cite(loaded.relpath, None, f"plan v{scope.version}, {requests} requests against it")
    return _judge(
        failures,
        f"plan v{scope.version} loads as the version its name says, and every request against "
        "it names one of its steps and was decided on exactly what it holds",
        f"what was authorized is not exactly plan v{scope.version}",
        [cite],
    )


def _risk_recovery(scope: _Scope) -> Found:
    if scope.plan is None:
        return "unknown", "no plan that loads", []
    failures: list[Cite] = []
    effectful: list[str] = []
    for step in scope.plan.steps:
        if "risk" not in step.model_fields_set and step.effect.strip():
            failures.append(scope.step_cite(step.id, f"{step.id}: an effect but no risk class"))
        elif step.risk != "read_only":
            effectful.append(step.id)
            if not step.recovery.strip():
                failures.append(scope.step_cite(step.id, f"{step.id} ({step.risk}): no recovery"))
    if not effectful and not failures:
        return "pass", "no step has effects", []
    cites = [scope.step_cite(s, f"{s}: {scope.steps[s].recovery}") for s in effectful]
    return _judge(
        failures,
        "every step with effects declares its risk class and a recovery path",
        "a step with effects lacks a risk class or a recovery path",
        cites if not failures else [],
    )


def _bound_approvals(scope: _Scope) -> Found:
    mission = scope.mission
    failures: list[Cite] = []
    cites: list[Cite] = []
    for request_id, used in sorted(mission.ledger.approvals.items()):
        request = mission.requests.get(request_id)
        record = request.record if request else None
        if record is None or record.plan_version != scope.version:
            if record is None and used.plan_version == scope.version:
                note = f"used approval {request_id}, which has no request that loads"
                failures.append(scope.event_cite(used.line, note))
            continue
        problem = _approval_problem(mission, request_id, used)
        cite = scope.event_cite(used.line, problem or f"ran {record.tool} as approved")
        (failures if problem else cites).append(cite)
        if request is not None:
            cites.append(Cite(request.relpath, None, f"request {request_id}"))
    for seen in scope.attempts(mission.ledger.unapproved.values()):
        step = scope.steps[seen.event.step]
        if scope.needs_approval(step):
            note = f"{step.id} ({step.risk}) ran {seen.event.tool} with effects and no approval"
            failures.append(scope.event_cite(seen.line, note))
    if not failures and not cites:
        return "unknown", f"no approved action has run under plan v{scope.version} yet", []
    return _judge(
        failures,
        "each approved action ran with exactly the tool and arguments approved, while the "
        "approval was valid",
        "an action ran without an approval that binds its exact tool and arguments, in time",
        cites,
    )


def _approval_problem(mission: MissionState, request_id: str, used: AttemptSeen) -> str | None:
    """Why the attempt `used` was not bound to its approval, or None."""
    request = mission.requests[request_id]
    record, raw = request.record, request.raw
    decided = mission.decisions.get(request_id)
    decision = decided.record if decided else None
    attempt = used.event
    if record is None or raw is None:
        return f"request {request_id} does not load"
    if decision is None or decision.decision != "approve":
        return f"request {request_id} was not approved"
    if decision.digest != request_digest(raw):
        return f"request {request_id} changed after it was decided"
    if attempt.tool != record.tool or canonical_json(attempt.args) != canonical_json(record.args):
        return f"ran {attempt.tool} with other arguments than request {request_id} holds"
    if attempt.at < decision.decided_at:
        return f"ran before request {request_id} was decided"
    ends = [t for t in (decision.valid_until, record.expires_at) if t is not None]
    if ends and attempt.at > min(ends):
        return f"ran after the approval of {request_id} expired"
    return None


def _safe_resume(scope: _Scope) -> Found:
    effects = scope.mission.ledger.ran
    ran = [
        seen
        for (step, version), seen in sorted(effects.items())
        if step in scope.steps and version == scope.version
    ]
    failures = [
        scope.mark_cite(mark) for mark in scope.findings("replayed-effect", "redone-effect")
    ]
    if not ran:
        return "unknown", f"no step of plan v{scope.version} has run an effect", []
    cites = []
    for seen in ran:
        attempt = seen.event
        what = f"{attempt.step} attempt {attempt.attempt}: outcome {seen.outcome or 'not recorded'}"
        if seen.uncertain and not attempt.idempotency_key:
            failures.append(scope.event_cite(seen.line, f"{what}, no idempotency key"))
        else:
            cites.append(scope.event_cite(seen.line, f"{what}, key {attempt.idempotency_key!r}"))
    return _judge(
        failures,
        "every effect whose outcome is not known carries an idempotency key, and none was "
        "tried again under another key",
        "an effect was (or may be) done again: uncertain without an idempotency key, or "
        "tried again under another key",
        cites,
    )


def _independent_evidence(scope: _Scope) -> Found:
    mission = scope.mission
    done = [
        (step, latest)
        for step in scope.steps
        if (latest := mission.step_latest.get(step)) and latest.state == "succeeded"
    ]
    if not done:
        return "unknown", f"no step of plan v{scope.version} has succeeded yet", []
    failures: list[Cite] = []
    cites: list[Cite] = []
    for step, latest in done:
        passes = mission.passes.get(step, ())
        independent = [(line, item) for line, item in passes if _independent(mission, item, latest)]
        if independent:
            line, item = independent[-1]
            by = f"observed by {item.observer}" if item.observer else "artifact checked"
            cites.append(Cite(mission.evidence_path, line, f"{step}: {item.id} ({by})"))
        elif passes:
            line, item = passes[-1]
            note = f"{step}: {item.id} is the agent's own word (no observer, no artifact)"
            failures.append(Cite(mission.evidence_path, line, note))
        else:
            failures.append(scope.event_cite(latest.line, f"{step} succeeded without evidence"))
    return _judge(
        failures,
        "every step that succeeded has passing evidence from another observer or a checked "
        "artifact",
        "a step succeeded on the agent's own word",
        cites,
    )


def _independent(mission: MissionState, item: Any, latest: Any) -> bool:
    """Evidence another observer made, or that cites an artifact whose bytes check."""
    if item.observer and item.observer != latest.actor:
        return True
    if item.artifact is None:
        return False
    rel = f"{mission.base}/artifacts/{item.artifact.path}"
    check = mission.artifact_checks.get(rel)
    return rel in mission.artifacts and (check is None or check.problem is None)


def _no_new_authority(scope: _Scope) -> Found:
    mission = scope.mission
    ledger = mission.ledger
    if not ledger.actors:
        return "unknown", "nothing has run yet", []
    loaded = mission.handoff
    failures: list[Cite] = []
    cites: list[Cite] = []
    if loaded is None or loaded.record is None:
        what = "no handoff.json" if loaded is None else "handoff.json does not load"
        failures.append(Cite(f"{mission.base}/handoff.json", None, what))
    else:
        handoff = loaded.record
        last = mission.events.last_seq if mission.events else 0
        if handoff.resume_after_seq > last:
            note = f"resumes after seq {handoff.resume_after_seq}; the log ends at {last}"
            failures.append(Cite(loaded.relpath, None, note))
        if handoff.plan_version is not None and handoff.plan_version not in mission.plans:
            failures.append(Cite(loaded.relpath, None, f"names plan v{handoff.plan_version}"))
        cites.append(Cite(loaded.relpath, None, f"resume after seq {handoff.resume_after_seq}"))
    failures += [scope.mark_cite(mark) for mark in scope.findings("reused-approval")]
    first = min(ledger.actors, key=ledger.actors.__getitem__)
    for seen in scope.attempts(ledger.unapproved.values()):
        step = scope.steps[seen.event.step]
        if seen.event.actor != first and scope.needs_approval(step):
            note = f"{seen.event.actor} ran {seen.event.tool} on {step.id} with no approval"
            failures.append(scope.event_cite(seen.line, note))
    actors = ", ".join(sorted(ledger.actors, key=ledger.actors.__getitem__))
    cites.append(Cite(mission.events_path, None, f"actors: {actors}"))
    return _judge(
        failures,
        "handoff.json says where to resume, approvals ran once each, and whoever took over "
        "acted only under approvals or the auto policy",
        "a new provider would lack a durable resume point or gain authority",
        cites,
    )


# ---- failure modes ---------------------------------------------------------------------------


def _repeated_work(scope: _Scope) -> Found:
    failures = [scope.mark_cite(m) for m in scope.findings("repeated-success", "redone-effect")]
    return _judge(
        failures,
        "no step succeeded twice in one plan version, no effect that finished ok was redone",
        "work was repeated",
        [],
    )


def _runaway_loop(scope: _Scope) -> Found:
    mission = scope.mission
    latest = max(mission.plans, default=None)
    if scope.version != latest:  # a step's attempts and the budget are the mission's
        return "unknown", f"judged for the latest plan version (v{latest}), as the status is", []
    limit, source = attempt_limit(mission)
    failures: list[Cite] = []
    for step, count in sorted(mission.ledger.attempts.items()):
        now = mission.step_latest.get(step)
        succeeded = now is not None and now.state == "succeeded"
        if step not in scope.steps or count < limit or (count == limit and succeeded):
            continue
        lines = mission.ledger.attempt_lines.get(step, ())
        crossing = limit if count > limit else limit - 1  # the attempt past, or the last
        line = lines[crossing] if crossing < len(lines) else None  # past the lines kept
        what = "past" if count > limit else "all of"
        note = f"{step}: {count} attempts, {what} the {limit} allowed ({source})"
        failures.append(Cite(mission.events_path, line, note))
    for overrun in over_budget(mission):
        note = f"usage past the budget: {overrun.describe()}"
        failures.append(Cite(mission.events_path, overrun.line or None, note))
    return _judge(
        failures,
        f"every step stayed within {limit} attempts ({source}) and usage within the budget",
        "a step used up its attempts, or the run spent past its budget: a human must decide "
        "what next",
        [],
    )


def _forgotten_id(scope: _Scope) -> Found:
    failures = [scope.mark_cite(mark) for mark in scope.findings("forgotten-ref")]
    return _judge(
        failures,
        "no attempt contradicted or dropped an external id an earlier one recorded",
        "the run lost track of an external id",
        [],
    )


def _stale_instructions(scope: _Scope) -> Found:
    failures = [
        scope.event_cite(stale.line, stale.note)
        for stale in stale_instructions(scope.mission)
        if stale.step is None or stale.step in scope.steps
    ]
    return _judge(
        failures,
        "nothing ran after the intent changed without a plan that took the change in, and "
        "no denied tool ran",
        "the run acted on instructions older than the current ones",
        [],
    )


def _unknown_schema(scope: _Scope) -> Found:
    mission = scope.mission
    failures: list[Cite] = []
    for loaded in mission.documents():
        value = loaded.raw.get("schema") if loaded.raw is not None else 1
        if value != 1:
            note = f"schema {json.dumps(value)}: this reader knows schema 1 only"
            failures.append(Cite(loaded.relpath, None, note))
    for reader in (mission.events, mission.evidence):
        for problem in reader.problems if reader is not None else ():
            if problem.code == "schema" and "schema" in problem.message.split(":", 1)[0]:
                failures.append(Cite(problem.path, problem.line, problem.message))
    return _judge(
        failures,
        "every record is schema 1",
        "a record is in a schema this reader does not know",
        [],
    )


def _unkeyed_repeat(scope: _Scope) -> Found:
    failures = [scope.mark_cite(mark) for mark in scope.findings("unkeyed-repeat")]
    return _judge(
        failures, "every repeated effect carried an idempotency key", "an effect was repeated", []
    )


_QUESTION_CHECKS = {
    "objective": _objective,
    "exact-plan": _exact_plan,
    "risk-recovery": _risk_recovery,
    "bound-approvals": _bound_approvals,
    "safe-resume": _safe_resume,
    "independent-evidence": _independent_evidence,
    "no-new-authority": _no_new_authority,
}
_FAILURE_CHECKS = {
    "repeated-work": _repeated_work,
    "runaway-loop": _runaway_loop,
    "unknown-schema": _unknown_schema,
    "unkeyed-repeat": _unkeyed_repeat,
    "forgotten-id": _forgotten_id,
    "stale-instructions": _stale_instructions,
}
