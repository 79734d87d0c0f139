"""One mission as an agent sees it: its writer, the bounds humans set, its plan.

Humans create missions (intent.toml), so an agent writes only into one that exists: a
mistyped id is refused rather than made into a new mission. A missing constraints.toml
means the defaults for the gate, and `authorize()` refuses every approval (the policy
lives there); one that does not load stops every approval (as in the HUD).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from store.format.layout import Kind, doc_path, mission_dir, unsafe_id
from store.format.load import load_document
from store.format.records import Constraints, Intent, Plan, PlanStep
from store.writers.agent import AgentError, AgentWriter, policy_on_disk


class Unusable(Exception):
    """The state directory or mission cannot be written at all (exit 2)."""


class Proposal(BaseModel):
    """A plan version as an agent proposes it; the writer adds version, author and time."""

    model_config = ConfigDict(extra="forbid", strict=True)

    steps: list[PlanStep]
    reason: str = ""
    assumptions: list[str] = Field(default_factory=list)
    expected_evidence: list[str] = Field(default_factory=list)


def open_mission(root: Path, mission: str, actor: str) -> AgentWriter:
    """The agent writer of an existing mission of `root`."""
    unsafe = unsafe_id(mission)
    if unsafe is not None:
        raise Unusable(unsafe)
    if not root.is_dir():
        raise Unusable(f"{root}: no such directory")
    if not (root / mission_dir(mission)).is_dir():
        raise Unusable(f"no mission {mission!r} in {root} (a human creates it, with intent.toml)")
    return AgentWriter(root, mission, actor)


def constraints(writer: AgentWriter) -> Constraints:
    """The mission's constraints as they are now, their `[approval] auto` kept within the
    workspace floor (`store.trust.policy`: a risk class it never lets pass alone is asked); the
    defaults when there is no file (then `authorize()` refuses). AgentError when the file
    does not load (nothing can be approved then)."""
    loaded = load_document(writer.root, doc_path(writer.mission, Kind.CONSTRAINTS), Constraints)
    if loaded.record is not None:
        rules, _ = policy_on_disk(writer.root, writer.mission)
        auto = list(rules.auto) if rules.refusal is None else []
        approval = loaded.record.approval.model_copy(update={"auto": auto})
        return loaded.record.model_copy(update={"approval": approval})
    if any(p.code == "missing" for p in loaded.problems):
        return Constraints.model_validate({"schema": 1})
    first = loaded.problems[0].message if loaded.problems else "unreadable"
    raise AgentError(f"constraints.toml does not load ({first}): ask a human to fix it")


def intent(writer: AgentWriter) -> Intent | None:
    return load_document(writer.root, doc_path(writer.mission, Kind.INTENT), Intent).record


def latest_plan(writer: AgentWriter) -> Plan | None:
    versions = writer.plan_versions()
    return writer.load_plan(versions[-1]) if versions else None


def plan_step(writer: AgentWriter, step: str, version: int | None = None) -> tuple[int, PlanStep]:
    """Plan version `version` (default: the latest) and its step `step`, or AgentError."""
    if version is None:
        versions = writer.plan_versions()
        if not versions:
            raise AgentError("the mission has no plan yet: propose one first")
        version = versions[-1]
    plan = writer.load_plan(version)
    for spec in plan.steps:
        if spec.id == step:
            return version, spec
    raise AgentError(f"step {step!r} is not in plan v{version}")


def propose(writer: AgentWriter, proposal: Proposal) -> Plan:
    """Write the next plan version (write-once; versions are contiguous)."""
    steps: list[dict[str, Any]] = [s.model_dump(mode="json") for s in proposal.steps]
    return writer.write_plan(
        steps,
        reason=proposal.reason,
        assumptions=proposal.assumptions,
        expected_evidence=proposal.expected_evidence,
    )
