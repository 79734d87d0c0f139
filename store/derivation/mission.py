"""One mission's index: its documents, log readers and running aggregates.

Aggregates are updated line by line as logs grow, so deriving status costs time in
proportion to the number of steps and requests, never to the length of the logs.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import Any

from store.derivation.artifacts import ArtifactCheck, file_problem, hash_artifact, signature
from store.derivation.invariants import mission_invariants
from store.derivation.lease import waiting
from store.derivation.ledger import NOTED_STATES, Ledger
from store.derivation.view import EvidenceSeen, Reference, StepLatest, UsagePoint
from store.format.confined import lstat, read_file
from store.format.layout import Kind, Located, lease_path
from store.format.load import Loaded, LogReader, check_history, load_document
from store.format.problems import Problem
from store.format.records import (
    ApprovalRequest,
    Artifact,
    AttemptEvent,
    Constraints,
    Decision,
    Evidence,
    HaltEvent,
    Handoff,
    Intent,
    Plan,
    WaiterEvent,
    request_digest,
    share_field_sets,
)
from store.trust import sshsig
from store.trust.policy import (
    EffectivePolicy,
    Revision,
    Signing,
    constraints_missing,
    effective_policy,
    floor_of,
    signature_texts,
)
from store.trust.signatures import Policy, SignatureState, SignerFiles, policy, signature_state

RECENT = 200
USAGE_POINTS = 512
PASSES_KEPT = 4
"""Passing evidence kept per step (the latest), for the review's independence check."""
EVENT_AGGREGATES = (
    "step_latest",
    "used_approvals",
    "usage",
    "first_event_at",
    "last_event_at",
    "halt",
    "waiters",
    "event_step_refs",
    "plan_version_refs",
    "ledger",
)
"""What `_reset_events` sets: the fold of the events log (`saved`, `restore`)."""
EVIDENCE_AGGREGATES = (
    "passed_steps",
    "recent_evidence",
    "evidence_step_refs",
    "artifact_refs",
    "passes",
)
"""What `_reset_evidence` sets: the fold of the evidence log."""


class MissionState:
    """Everything known about one mission folder."""

    __slots__ = (  # one per mission of a workspace: no instance dict (45 keys, ~2 KB)
        "root",
        "id",
        "base",
        "events_path",
        "evidence_path",
        "intent",
        "constraints",
        "signers",
        "handoff",
        "plans",
        "plan_hashes",
        "requests",
        "decisions",
        "history",
        "constraint_history",
        "policy_signatures",
        "artifact_checks",
        "path_problems",
        "notices",
        "artifacts",
        "leases",
        "events",
        "evidence",
        "_problems",
        "_policy",
        "_effective",
        "_signatures",
        "until",
        *EVENT_AGGREGATES,
        *EVIDENCE_AGGREGATES,
    )

    def __init__(self, root: Path, mission_id: str) -> None:
        self.root = root
        self.id = mission_id
        self.base = f"missions/{mission_id}"
        self.events_path = f"{self.base}/events.jsonl"
        self.evidence_path = f"{self.base}/evidence.jsonl"
        self.intent: Loaded[Intent] | None = None
        self.constraints: Loaded[Constraints] | None = None
        self.signers: SignerFiles = {}
        """The `signers/` files of the state directory (shared by its missions)."""
        self.handoff: Loaded[Handoff] | None = None
        self.plans: dict[int, Loaded[Plan]] = {}
        self.plan_hashes: dict[int, str] = {}
        """The sha256 each plan version was last read with (a change is a notice)."""
        self.requests: dict[str, Loaded[ApprovalRequest]] = {}
        self.decisions: dict[str, Loaded[Decision]] = {}
        self.history: set[str] = set()
        self.constraint_history: dict[int, Loaded[Constraints]] = {}
        """The kept revisions of constraints.toml (`history/constraints.r<N>.toml`)."""
        self.policy_signatures: dict[str, bytes | Problem] = {}
        """The constraints signature files (`constraints.toml.sig`, `history/*.sig`)."""
        self.artifact_checks: dict[str, ArtifactCheck] = {}
        """The latest hash check of each cited artifact (see `store.derivation.artifacts`)."""
        self.path_problems: dict[str, Problem] = {}
        self.notices: list[Problem] = []
        """Events seen while watching (a log read again from the start): shown once,
        never problems (a fresh read of the same bytes cannot see them)."""
        """Problems of paths in the mission folder that hold no record: unknown files,
        symlinks, folders that cannot be listed, history files that cannot be read."""
        self.artifacts: set[str] = set()
        self.leases: dict[str, bool] = {}
        """Requests filed with a waiter (`approvals/<id>.wait`, `store.derivation.lease`): whether
        the waiter held its lease when the file was last tested."""
        self.events: LogReader | None = None
        self.evidence: LogReader | None = None
        self._problems: list[Problem] | None = None
        self._policy: Policy | None = None
        self._effective: EffectivePolicy | None = None
        self._signatures: dict[str, tuple[Decision, SignatureState]] = {}
        """Each decision's signature state, with the record it was derived from."""
        self.until: tuple[int, int] | None = None
        """Set on a state replayed as of an event (`store.analysis.replay`): the last events and
        evidence lines folded; log problems after them were not there yet."""
        self._reset_events()
        self._reset_evidence()

    # ---- aggregates ------------------------------------------------------------------

    def _reset_events(self) -> None:
        self.step_latest: dict[str, StepLatest] = {}
        self.used_approvals: dict[str, AttemptEvent] = {}
        self.usage: deque[UsagePoint] = deque(maxlen=USAGE_POINTS)
        self.first_event_at: datetime | None = None
        self.last_event_at: datetime | None = None
        self.halt: HaltEvent | None = None
        self.waiters: dict[str, WaiterEvent] = {}
        """Per request, the first `waiter` event that withdrew it, else the first one."""
        self.event_step_refs: dict[str, Reference] = {}
        self.plan_version_refs: dict[int, Reference] = {}
        self.ledger = Ledger()

    def _reset_evidence(self) -> None:
        self.passed_steps: set[str] = set()
        self.recent_evidence: deque[EvidenceSeen] = deque(maxlen=RECENT)
        self.evidence_step_refs: dict[str, Reference] = {}
        self.artifact_refs: dict[str, tuple[Artifact, Reference]] = {}
        self.passes: dict[str, tuple[tuple[int, Evidence], ...]] = {}
        """The latest PASSES_KEPT passing evidence of each step, with their lines."""

    def saved(self, names: tuple[str, ...]) -> dict[str, Any]:
        """A copy of these aggregates (EVENT_AGGREGATES or EVIDENCE_AGGREGATES)."""
        return {name: _copy(getattr(self, name)) for name in names}

    def restore(self, saved: dict[str, Any]) -> None:
        """Put back aggregates `saved` copied (they stay as they were: copied again)."""
        for name, value in saved.items():
            setattr(self, name, _copy(value))

    def _on_event(self, event: Any, line: int) -> None:
        """Fold one event into the aggregates (the hot path of a scan)."""
        if self.first_event_at is None:
            self.first_event_at = event.at
        self.last_event_at = event.at
        ledger = self.ledger
        if event.actor != ledger.actor:
            ledger.new_actor(event, line)
        kind = event.type
        if kind == "step":
            step, steps = event.step, self.step_latest
            before = steps.get(step)
            steps[step] = StepLatest.of(event, line)
            if (
                before is None
                or event.state in NOTED_STATES
                or event.plan_version != ledger.plan_now
                or (ledger.mixed and before.actor != event.actor)
            ):
                ledger.step(event, line, before)
            if step not in self.event_step_refs:
                self.event_step_refs[step] = Reference(self.events_path, line)
            if event.plan_version not in self.plan_version_refs:
                self.plan_version_refs[event.plan_version] = Reference(self.events_path, line)
            self.halt = None
        elif kind == "usage":
            self.usage.append(
                UsagePoint(event.at, float(event.usd), event.tokens, event.steps, line)
            )
        elif kind == "attempt":
            step = event.step
            if step not in self.event_step_refs:
                self.event_step_refs[step] = Reference(self.events_path, line)
            if event.approval and event.phase == "started":
                self.used_approvals.setdefault(event.approval, event)
            latest = self.step_latest.get(step)
            ledger.attempt(event, line, latest.plan_version if latest else ledger.plan_now or 1)
        elif kind == "halt":
            self.halt = event
            ledger.halt(event, line)
        elif kind == "waiter":
            seen = self.waiters.get(event.request)
            if seen is None or (seen.state != "withdrawn" and event.state == "withdrawn"):
                self.waiters[event.request] = event

    def _on_evidence(self, item: Evidence, line: int) -> None:
        self.recent_evidence.append(EvidenceSeen(line, item.id, item.step, item.verdict))
        if item.step not in self.evidence_step_refs:
            self.evidence_step_refs[item.step] = Reference(self.evidence_path, line)
        if item.verdict == "pass":
            share_field_sets(item)  # kept (its artifact too)
            self.passed_steps.add(item.step)
            kept = (*self.passes.get(item.step, ()), (line, item))
            self.passes[item.step] = kept[-PASSES_KEPT:]
        if item.artifact is not None:
            artifact = f"{self.base}/artifacts/{item.artifact.path}"
            if artifact not in self.artifact_refs:
                share_field_sets(item.artifact)
                reference = Reference(self.evidence_path, line)
                self.artifact_refs[artifact] = (item.artifact, reference)

    # ---- applying file changes -------------------------------------------------------

    def exists(self) -> bool:
        info = lstat(self.root, self.base)
        return info is not None and stat.S_ISDIR(info.st_mode)

    def apply(self, located: Located) -> None:
        """Re-read the one file `located` names (or forget it if it is gone)."""
        self._derive_again()
        rel = located.relpath
        present = os.path.lexists(os.path.join(self.root, rel))  # os.path: pathlib costs more
        # (a symlink on the way is refused when the file is read: `present` only says
        # whether to read it or forget it)
        kind = located.kind
        if kind is Kind.EVENTS:
            self.events = self._poll(rel, kind, present, self.events)
        elif kind is Kind.EVIDENCE:
            self.evidence = self._poll(rel, kind, present, self.evidence)
        elif kind is Kind.INTENT:
            self.intent = self._load(rel, Intent) if present else None
        elif kind is Kind.CONSTRAINTS:
            self.constraints = self._load(rel, Constraints) if present else None
        elif kind is Kind.HANDOFF:
            self.handoff = self._load(rel, Handoff) if present else None
        elif kind is Kind.PLAN:
            self._apply_plan(int(located.parts["version"]), rel, present)
        elif kind is Kind.REQUEST:
            self._store(self.requests, located.parts["request"], rel, present, ApprovalRequest)
        elif kind is Kind.DECISION:
            self._store(self.decisions, located.parts["request"], rel, present, Decision)
        elif kind is Kind.LEASE:
            self._lease(located.parts["request"], present)
            self.set_path_problem(rel, file_problem(self.root, rel) if present else None)
        elif kind is Kind.HISTORY:
            _toggle(self.history, rel, present)
            self.set_path_problem(rel, check_history(self.root, rel) if present else None)
            if located.parts["name"].startswith("constraints."):
                revision = int(located.parts["revision"])
                self._store(self.constraint_history, revision, rel, present, Constraints)
        elif kind is Kind.POLICY_SIG:
            if present:
                self.policy_signatures[rel] = read_file(self.root, rel, sshsig.MAX_ARMOR)
            else:
                self.policy_signatures.pop(rel, None)
        elif kind is Kind.ARTIFACT:
            _toggle(self.artifacts, rel, present)
            self.set_path_problem(rel, file_problem(self.root, rel) if present else None)

    def _poll(
        self, rel: str, kind: Kind, present: bool, reader: LogReader | None
    ) -> LogReader | None:
        if not present:
            if kind is Kind.EVENTS:
                self._reset_events()
            else:
                self._reset_evidence()
            return None
        if reader is None:
            reader = self.reader(kind, rel)
        notice = reader.poll().notice
        if notice is not None:
            self.notices.append(notice)
        return reader

    def reader(self, kind: Kind, rel: str) -> LogReader:
        """A new reader of this mission's log `rel` (events or evidence) that folds into
        it (it does not become the mission's until set as `events` or `evidence`)."""
        if kind is Kind.EVENTS:
            return LogReader(self.root, rel, kind, self._on_event, self._reset_events)
        return LogReader(self.root, rel, kind, self._on_evidence, self._reset_evidence)

    def _lease(self, request_id: str, present: bool) -> None:
        """Test whether the request's waiter still holds its lease (never blocks); a lease
        that is not a regular file counts as nobody waiting, and is a problem too."""
        held = waiting(self.root, self.id, request_id) if present else None
        if held is None:
            self.leases.pop(request_id, None)
        else:
            self.leases[request_id] = held

    def _store(
        self,
        table: dict[Any, Loaded[Any]],
        key: str | int,
        rel: str,
        present: bool,
        model: type[Any],
    ) -> None:
        if present:
            table[key] = self._load(rel, model)
        else:
            table.pop(key, None)

    def _load(self, rel: str, model: type[Any]) -> Loaded[Any]:
        """The document `rel` as `model`, kept for as long as it is unchanged: its record's
        field sets shared, its raw tree only where it is read again (a request's: its
        digest, its args shown as written) or where no record came of it (what the review
        reads of its schema)."""
        loaded = load_document(self.root, rel, model)
        if loaded.record is not None:
            share_field_sets(loaded.record)
            if model is not ApprovalRequest:
                loaded.raw = None
        return loaded

    def _apply_plan(self, version: int, rel: str, present: bool) -> None:
        if not present:
            self.plans.pop(version, None)
            return
        loaded = self._load(rel, Plan)
        self.plans[version] = loaded
        if loaded.sha256 is None or loaded.record is None:
            return
        before = self.plan_hashes.get(version)
        self.plan_hashes[version] = loaded.sha256
        if before is not None and before != loaded.sha256:
            self.notices.append(
                Problem(
                    rel,
                    None,
                    "plan-changed",
                    f"plan v{version} changed after it was written",
                    "plan versions are immutable: write a new version with a reason instead",
                    "warn",
                )
            )

    def forget_artifact(self, rel: str) -> None:
        """`rel` is a folder now (a layout folder under artifacts/): no artifact is there."""
        self._derive_again()
        self.artifacts.discard(rel)

    def unchecked_artifacts(self) -> list[str]:
        """Cited artifacts whose file changed since their last check, or that were never
        checked (`hash_artifacts` checks them); only metadata is read here."""
        found = []
        for rel, (cited, _) in self.artifact_refs.items():
            now = signature(self.root, rel, cited) if rel in self.artifacts else None
            checked = self.artifact_checks.get(rel)
            if now is not None and (checked is None or checked.signature != now):
                found.append(rel)
        return found

    def hash_artifacts(self, relpaths: list[str]) -> dict[str, ArtifactCheck]:
        """Hash these cited artifacts now (IO: a scan, `hud check` or a read-ahead step)."""
        return {
            rel: hash_artifact(
                self.root, rel, self.artifact_refs[rel][0], self.artifact_refs[rel][1]
            )
            for rel in relpaths
            if rel in self.artifact_refs
        }

    def take_artifact_checks(self, checks: dict[str, ArtifactCheck]) -> None:
        self._derive_again()
        self.artifact_checks.update(checks)

    def indexed_paths(self) -> list[str]:
        """Every path this index holds something of (to re-check when a folder moves)."""
        paths = [loaded.relpath for loaded in self.documents()]
        paths += [reader.relpath for reader in (self.events, self.evidence) if reader]
        leases = [lease_path(self.id, request_id) for request_id in self.leases]
        return [*paths, *self.history, *self.artifacts, *leases, *self.path_problems]

    def set_path_problem(self, rel: str, problem: Problem | None) -> None:
        """Record (or clear) the problem of a path that holds no record."""
        self._derive_again()
        if problem is None:
            self.path_problems.pop(rel, None)
        else:
            self.path_problems[rel] = problem

    def forget_prefix(self, rel: str) -> None:
        """A path under the mission vanished: drop everything indexed at or below it."""
        self._derive_again()
        prefix = rel + "/"
        self.path_problems = {
            k: v for k, v in self.path_problems.items() if k != rel and not k.startswith(prefix)
        }
        self.plans = {k: v for k, v in self.plans.items() if not v.relpath.startswith(prefix)}
        self.requests = {k: v for k, v in self.requests.items() if not v.relpath.startswith(prefix)}
        self.decisions = {
            k: v for k, v in self.decisions.items() if not v.relpath.startswith(prefix)
        }
        self.history = {p for p in self.history if not p.startswith(prefix)}
        self.constraint_history = {
            k: v for k, v in self.constraint_history.items() if not v.relpath.startswith(prefix)
        }
        self.policy_signatures = {
            k: v for k, v in self.policy_signatures.items() if not k.startswith(prefix)
        }
        self.artifacts = {p for p in self.artifacts if not p.startswith(prefix)}
        self.leases = {
            k: v for k, v in self.leases.items() if not lease_path(self.id, k).startswith(prefix)
        }

    # ---- views -----------------------------------------------------------------------

    @property
    def latest_plan(self) -> Plan | None:
        for version in sorted(self.plans, reverse=True):
            record = self.plans[version].record
            if record is not None:
                return record
        return None

    @property
    def title(self) -> str:
        if self.intent is not None and self.intent.record is not None:
            return self.intent.record.title
        return self.id

    def problems(self) -> list[Problem]:
        """File problems, log problems and broken invariants of this mission (cached)."""
        if self._problems is None:
            self._problems = self._collect_problems()
        return self._problems

    def _collect_problems(self) -> list[Problem]:
        found: list[Problem] = []
        for loaded in self.documents():
            found.extend(loaded.problems)
        for reader, last in zip(
            (self.events, self.evidence), self.until or (None, None), strict=True
        ):
            if reader is None:
                continue
            if last is None:
                found.extend(reader.problems)
                pending = reader.pending_problem
                if pending is not None:
                    found.append(pending)
            else:
                found.extend(p for p in reader.problems if p.line is None or p.line <= last)
        found.extend(self.path_problems.values())
        for rel in sorted(self.artifact_refs.keys() & self.artifacts):
            checked = self.artifact_checks.get(rel)
            if (
                checked is not None
                and checked.problem is not None
                and rel not in self.path_problems
            ):
                found.append(checked.problem)
        found.extend(mission_invariants(self))
        return found

    def documents(self) -> list[Loaded[Any]]:
        docs: list[Loaded[Any]] = [d for d in (self.intent, self.constraints, self.handoff) if d]
        docs.extend(self.plans.values())
        docs.extend(self.requests.values())
        docs.extend(self.decisions.values())
        return docs

    def signer_paths(self) -> set[str]:
        """The `signers/` files the policy in force names."""
        return self.effective_policy.signer_files()

    def signers_changed(self) -> None:
        """A `signers/` file changed: signature states and problems are derived again."""
        self._derive_again()

    def _derive_again(self) -> None:
        """A file of the mission (or a `signers/` file it names) changed: what is derived
        from them (problems, the signature policy and states) is derived again."""
        self._problems = None
        self._policy = None
        self._effective = None
        self._signatures.clear()

    @property
    def effective_policy(self) -> EffectivePolicy:
        """The approval rules in force (`store.trust.policy`): the constraints within the floor."""
        if self._effective is None:
            rules = self._rules()
            signing = Signing(
                _revision(self.constraints),
                tuple(r for r in map(_revision, self.constraint_history.values()) if r),
                signature_texts(self.policy_signatures.values()),
            )
            self._effective = effective_policy(
                self.id, floor_of(self.signers), rules, self.signers, signing
            )
        return self._effective

    def _rules(self) -> Constraints | Problem:
        """The constraints record, or the Problem that there is none (missing: with what
        the last kept revision required)."""
        loaded = self.constraints
        if loaded is not None and loaded.record is not None:
            return loaded.record
        history = {r: kept.record for r, kept in self.constraint_history.items()}
        why = None
        if loaded is not None:
            why = loaded.problems[0].message if loaded.problems else "unreadable"
        return constraints_missing(self.id, history, why)

    @property
    def signature_policy(self) -> Policy:
        if self._policy is None:
            self._policy = policy(self.effective_policy, self.signers)
        return self._policy

    def signature(self, request_id: str) -> SignatureState | None:
        """The signature state of the request's decision (None: no decision loads)."""
        decided = self.decisions.get(request_id)
        if decided is None or decided.record is None:
            return None
        cached = self._signatures.get(request_id)
        if cached is None or cached[0] is not decided.record:
            state = signature_state(self.id, decided.record, self.signature_policy)
            cached = self._signatures[request_id] = (decided.record, state)
        return cached[1]

    def decision_is_current(self, request_id: str) -> bool | None:
        """Whether the decision's digest matches the request as it is now (None: unknown)."""
        request = self.requests.get(request_id)
        decision = self.decisions.get(request_id)
        if request is None or request.raw is None or decision is None or decision.record is None:
            return None
        return decision.record.digest == request_digest(request.raw)


def _revision(loaded: Loaded[Constraints] | None) -> Revision | None:
    """A loaded constraints revision, for signed policy (None: it does not load)."""
    if loaded is None or loaded.record is None or loaded.sha256 is None:
        return None
    return Revision(loaded.record.revision, loaded.record, loaded.sha256)


def _copy(value: Any) -> Any:
    """An aggregate's container copied (what it holds is immutable); a value as it is."""
    return value.copy() if isinstance(value, dict | set | deque | Ledger) else value


def _toggle(items: set[str], rel: str, present: bool) -> None:
    if present:
        items.add(rel)
    else:
        items.discard(rel)
