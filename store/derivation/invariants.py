"""Cross-record invariants of one mission (DESIGN.md, "Invariants")."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from store.derivation.derive import over_budget
from store.derivation.instructions import stale_instructions
from store.format.layout import decision_path, plan_path
from store.format.problems import Problem
from store.format.records import snapshot_of
from store.trust.policy import constraints_missing, decision_times

if TYPE_CHECKING:
    from store.derivation.view import MissionView


def mission_invariants(mission: MissionView) -> list[Problem]:
    """Every broken invariant that needs more than one file to see."""
    return [
        *_missing_documents(mission),
        *_plan_versions(mission),
        *_step_references(mission),
        *_succeeded_without_evidence(mission),
        *_requests_and_decisions(mission),
        *_signatures(mission),
        *_decision_times(mission),
        *_missing_artifacts(mission),
        *_run_findings(mission),
    ]


RUN_FINDINGS = {
    "redone-effect": "an effect that finished ok was done again under another idempotency key "
    "(or none): check for a duplicate in the world; resume must reuse the key",
    "replayed-effect": "an effect whose outcome was not known was tried again under another "
    "key (or none): it may have happened twice",
    "unkeyed-repeat": "give effectful attempts an idempotency key the tool deduplicates by",
    "forgotten-ref": "the run lost track of the id of what it made: reconcile with the world "
    "before going on",
}
"""The ledger's findings `hud check` warns of (docs/review.md), with their hints."""
RUN_CODES = frozenset({*RUN_FINDINGS, "over-budget", "stale-instructions"})
"""The codes of warnings about what a run did (no file is broken)."""


def _run_findings(mission: MissionView) -> list[Problem]:
    """Warnings of what the run did wrong (it is no broken file): effects done twice,
    external ids lost, budget spent past its limit, instructions acted on after they
    changed. The review answers the same questions (store.analysis.review)."""
    found = [
        Problem(mission.events_path, mark.line, kind, f"{mark.step}: {mark.detail}", hint, "warn")
        for (kind, _, _), mark in sorted(mission.ledger.findings.items())
        if (hint := RUN_FINDINGS.get(kind)) is not None
    ]
    found += [
        Problem(
            mission.events_path,
            overrun.line or None,
            "over-budget",
            f"usage past the budget: {overrun.describe()}",
            "a runaway loop or a surprise bill: stop the run, raise [budget] in "
            "constraints.toml if the spend is wanted",
            "warn",
        )
        for overrun in over_budget(mission)
    ]
    found += [
        Problem(
            mission.events_path,
            stale.line,
            "stale-instructions",
            stale.note,
            "the agent must read the current intent and constraints and write a new plan "
            "version before acting",
            "warn",
        )
        for stale in stale_instructions(mission)
    ]
    return found


def _missing_documents(mission: MissionView) -> list[Problem]:
    found = []
    if mission.constraints is None:
        history = {r: loaded.record for r, loaded in mission.constraint_history.items()}
        found.append(constraints_missing(mission.id, history))
    if mission.intent is not None:
        return found
    return [
        *found,
        Problem(
            f"{mission.base}/intent.toml",
            None,
            "missing-intent",
            "mission has no intent.toml: nobody has said what the work is",
            "create it (the HUD's `n` key, or write the TOML by hand)",
            "warn",
        ),
    ]


def _plan_versions(mission: MissionView) -> list[Problem]:
    found = []
    versions = sorted(mission.plans)
    for expected, version in enumerate(versions, start=1):
        if version != expected:
            found.append(
                Problem(
                    plan_path(mission.id, version),
                    None,
                    "plan-gap",
                    f"plan v{version} exists without v{expected}",
                    "plan versions count 1, 2, 3 ... with no gaps",
                )
            )
            break
    for version, loaded in mission.plans.items():
        record = loaded.record
        if record is not None and record.version != version:
            found.append(
                Problem(
                    loaded.relpath,
                    None,
                    "plan-version-mismatch",
                    f"file v{version}.json says version {record.version}",
                    "the file name and the version field must agree",
                )
            )
    return found


def _plan_step_ids(mission: MissionView) -> set[str]:
    return {
        step.id
        for loaded in mission.plans.values()
        if loaded.record is not None
        for step in loaded.record.steps
    }


def _step_references(mission: MissionView) -> list[Problem]:
    if not mission.plans:
        return []
    known = _plan_step_ids(mission)
    found = []
    for refs in (mission.event_step_refs, mission.evidence_step_refs):
        for step, ref in refs.items():
            if step not in known:
                found.append(
                    Problem(
                        ref.relpath,
                        ref.line,
                        "unknown-step",
                        f"step {step!r} is in no plan version",
                        "events and evidence must name steps of some plan version",
                    )
                )
    for version, ref in mission.plan_version_refs.items():
        if version not in mission.plans:
            found.append(
                Problem(
                    ref.relpath,
                    ref.line,
                    "unknown-plan-version",
                    f"plan_version {version} does not exist",
                    f"write plan/v{version}.json before referring to it",
                )
            )
    return found


def _succeeded_without_evidence(mission: MissionView) -> list[Problem]:
    return [
        Problem(
            f"{mission.base}/events.jsonl",
            latest.line,
            "unproven-success",
            f"step {step!r} succeeded without evidence with verdict pass",
            "append evidence for the step to evidence.jsonl before marking it succeeded",
        )
        for step, latest in mission.step_latest.items()
        if latest.state == "succeeded" and step not in mission.passed_steps
    ]


def _requests_and_decisions(mission: MissionView) -> list[Problem]:
    found = []
    for request_id, loaded in mission.requests.items():
        if loaded.record is not None and loaded.record.id != request_id:
            found.append(
                Problem(
                    loaded.relpath,
                    None,
                    "request-id-mismatch",
                    f"request file {request_id}.json has id {loaded.record.id!r}",
                    "the file name and the id field must agree",
                )
            )
    for request_id, decided in mission.decisions.items():
        decision = decided.record
        if request_id not in mission.requests:
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "orphan-decision",
                    f"decision for request {request_id!r}, which does not exist",
                    f"remove the decision, or restore approvals/{request_id}.json",
                )
            )
        elif decision is not None and decision.request != request_id:
            found.append(
                Problem(
                    decision_path(mission.id, request_id),
                    None,
                    "decision-request-mismatch",
                    f"decision file names request {decision.request!r}",
                    "the file name and the request field must agree",
                )
            )
        elif mission.decision_is_current(request_id) is False:
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "stale-decision",
                    "the request changed after it was decided (digest no longer matches)",
                    "the action needs a new review: the agent must file a new request",
                )
            )
        if decision is not None and decision.request_json and snapshot_of(decision) is None:
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "decision-snapshot-mismatch",
                    "request_json is not the request this decision's digest binds to",
                    "the decision was edited after it was written (decisions are write-once); "
                    "its digest still binds it, the copy is ignored",
                    "warn",
                )
            )
    return found


def _signatures(mission: MissionView) -> list[Problem]:
    """The signers files' problems, then each decision whose signature is invalid, and
    each unsigned approval where signatures are required (a warning once an attempt
    used it: it ran, likely before they were required)."""
    rules = mission.signature_policy
    found: list[Problem] = []
    found.extend(mission.effective_policy.problems)
    for named in (rules.allowed, *rules.revoked):
        if isinstance(named, Problem):
            found.extend([named] if named.code == "signers-missing" else [])
        elif named is not None:
            found.extend(named.problems)
    for request_id, decided in sorted(mission.decisions.items()):
        state = mission.signature(request_id)
        if state is None or decided.record is None:
            continue
        if state.kind == "unvouched":
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "signature-unvouched",
                    state.describe(),
                    "an admin lists the signers' keys in signers/<name> (OpenSSH allowed "
                    "signers) and names it as [approval] allowed_signers in constraints.toml "
                    "or policy.toml; then the signature is checked",
                    "warn",
                )
            )
        elif state.kind == "invalid":
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "signature-invalid",
                    state.describe(),
                    "the decision was edited after signing, or its signer is not trusted "
                    "(signers/ files, constraints.toml [approval]); decide it again, signed",
                    "error" if rules.allowed is not None else "warn",
                )
            )
        elif state.kind == "unsigned" and state.required and decided.record.decision == "approve":
            used = request_id in mission.used_approvals  # before signatures were required
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "signature-missing",
                    state.describe()
                    + (": an attempt used it" if used else ": authorize() refuses this approval"),
                    "the agent must file a new request, to be approved with --sign-key",
                    "warn" if used else "error",
                )
            )
    return found


def _decision_times(mission: MissionView) -> list[Problem]:
    """Each approval whose times do not bind (`store.trust.policy.decision_times`, now being
    when the mission's problems are derived): `authorize()` refuses it."""
    rules = mission.effective_policy
    if rules.refusal is not None:
        return []
    found = []
    for request_id, decided in sorted(mission.decisions.items()):
        loaded = mission.requests.get(request_id)
        decision, request = decided.record, loaded.record if loaded is not None else None
        if decision is None or request is None or decision.decision != "approve":
            continue
        why = decision_times(request, decision, rules.valid_for_seconds, datetime.now(UTC))
        if why is not None:
            found.append(
                Problem(
                    decided.relpath,
                    None,
                    "decision-times",
                    f"{why}: authorize() refuses this approval",
                    "decide it again (the HUD and hud decide write times that bind)",
                )
            )
    return found


def _missing_artifacts(mission: MissionView) -> list[Problem]:
    return [
        Problem(
            ref.relpath,
            ref.line,
            "missing-artifact",
            f"artifact {artifact} is missing (no file at that path)",
            "the agent must write the artifact before the evidence that cites it",
        )
        for artifact, (_, ref) in mission.artifact_refs.items()
        if artifact not in mission.artifacts
    ]
