"""SMALL Protocol v1.0.0 records: the JSON Schemas as pydantic models, and lenient views.

The models mirror `schemas-v1.0.0/*.schema.json` (draft 2020-12) field for field:
`small_version` is exactly the string "1.0.0", `owner` the one the file must have,
unknown keys are refused (`additionalProperties: false`) except on plan tasks.
`format` keywords (date-time, uri) are annotations in draft 2020-12 and are not
enforced here; timestamps are checked by the lint, as the reference CLI does.
There is no schema for workspace.small.yml; its model follows the CLI's reader.

The views (`Task`, `Entry`, ...) are what the HUD shows. They are built leniently
from whatever parsed, so a file with schema problems still shows what it can.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Version = Literal["1.0.0"]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[a-fA-F0-9]{64}$")]
LowerSha256 = Annotated[str, StringConstraints(pattern=r"^[a-f0-9]{64}$")]
Commit = Annotated[str, StringConstraints(pattern=r"^[a-f0-9]{7,40}$")]
TaskStatus = Literal["pending", "in_progress", "completed", "blocked", "cancelled"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Scope(_Strict):
    include: list[str]
    exclude: list[str]


class Intent(_Strict):
    small_version: Version
    owner: Literal["human"]
    intent: NonEmpty
    scope: Scope
    success_criteria: list[str]


class Constraint(_Strict):
    id: NonEmpty
    rule: NonEmpty
    severity: Literal["error", "warn"]


class Constraints(_Strict):
    small_version: Version
    owner: Literal["human"]
    constraints: list[Constraint] = Field(min_length=1)


class PlanTask(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    id: NonEmpty
    title: NonEmpty
    steps: list[str] | None = None
    acceptance: list[str] | None = None


class Plan(_Strict):
    small_version: Version
    owner: Literal["agent"]
    tasks: list[PlanTask] = Field(min_length=1)


class ProgressEntry(_Strict):
    timestamp: str | None = None
    task_id: NonEmpty
    replayId: Sha256 | None = None
    status: TaskStatus | None = None
    evidence: NonEmpty | dict[str, Any] | None = None
    verification: NonEmpty | dict[str, Any] | None = None
    command: NonEmpty | None = None
    command_summary: NonEmpty | None = None
    command_sha256: LowerSha256 | None = None
    command_ref: NonEmpty | None = None
    test: NonEmpty | dict[str, Any] | None = None
    link: str | None = None
    commit: Commit | None = None
    notes: str | None = None


class ProgressHead(_Strict):
    """progress.small.yml without its entries (each entry is checked on its own)."""

    small_version: Version
    owner: Literal["agent"]
    entries: list[Any]


class Resume(_Strict):
    current_task_id: NonEmpty | None = None
    next_steps: list[str]


class Link(_Strict):
    url: str | None = None
    description: str | None = None


class ReplayId(_Strict):
    value: Sha256
    source: Literal["auto", "manual"]


class Run(_Strict):
    created_at: str | None = None
    transition_reason: Literal["reset", "archive", "manual", "self_heal"] | None = None
    previous_replay_id: Sha256 | None = None
    previous_run_ref: str | None = None


class Handoff(_Strict):
    small_version: Version
    owner: Literal["agent"]
    summary: NonEmpty
    resume: Resume
    links: list[Link]
    replayId: ReplayId
    run: Run | None = None


class WorkspaceRun(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    replay_id: str | None = None


class WorkspaceMeta(_Strict):
    """workspace.small.yml, as the CLI's `workspace.Load` reads it (no published schema)."""

    small_version: Version
    owner: Literal["agent", "human"] | None = None
    kind: Literal["repo-root", "examples"]
    created_at: str | None = None
    updated_at: str | None = None
    run: WorkspaceRun | None = None


SCHEMAS: dict[str, type[BaseModel]] = {
    "intent": Intent,
    "constraints": Constraints,
    "plan": Plan,
    "progress": ProgressHead,
    "handoff": Handoff,
    "workspace": WorkspaceMeta,
}


# ---- lenient views for display -----------------------------------------------------------


def text_of(value: Any) -> str:
    """A value as display text: strings as they are, None as "", others as YAML-ish."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {text_of(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(text_of(v) for v in value)
    return str(value)


def strings_of(value: Any) -> list[str]:
    if isinstance(value, list):
        return [text_of(v) for v in value]
    return [] if value is None else [text_of(value)]


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    title: str
    status: str
    dependencies: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    acceptance: list[str] = field(default_factory=list)
    line: int | None = None

    @classmethod
    def of(cls, raw: Any, line: int | None) -> Task:
        item = raw if isinstance(raw, dict) else {}
        depends = item.get("dependencies", item.get("depends_on"))
        return cls(
            id=text_of(item.get("id")).strip(),
            title=text_of(item.get("title")).strip(),
            status=text_of(item.get("status")).strip(),
            dependencies=strings_of(depends),
            steps=strings_of(item.get("steps")),
            acceptance=strings_of(item.get("acceptance")),
            line=line,
        )


EVIDENCE_FIELDS = ("evidence", "verification", "command", "test", "link", "commit")


@dataclass(frozen=True, slots=True)
class Entry:
    """One progress entry, as shown in the timeline."""

    index: int
    line: int | None
    timestamp: str
    task_id: str
    status: str
    evidence: str
    verification: str
    command: str
    command_summary: str
    command_ref: str
    command_sha256: str
    test: str
    link: str
    commit: str
    notes: str
    replay_id: str

    @classmethod
    def of(cls, index: int, raw: Any, line: int | None) -> Entry:
        item = raw if isinstance(raw, dict) else {}
        return cls(
            index=index,
            line=line,
            timestamp=text_of(item.get("timestamp")),
            task_id=text_of(item.get("task_id")).strip(),
            status=text_of(item.get("status")),
            evidence=text_of(item.get("evidence")),
            verification=text_of(item.get("verification")),
            command=text_of(item.get("command")),
            command_summary=text_of(item.get("command_summary")),
            command_ref=text_of(item.get("command_ref")),
            command_sha256=text_of(item.get("command_sha256")),
            test=text_of(item.get("test")),
            link=text_of(item.get("link")),
            commit=text_of(item.get("commit")),
            notes=text_of(item.get("notes")),
            replay_id=text_of(item.get("replayId")).strip(),
        )

    @property
    def what(self) -> str:
        """The shortest description of what happened: command summary, command, evidence."""
        return self.command_summary or self.command or self.evidence or self.notes

    @property
    def strict_evidence(self) -> bool:
        """S1 counts an entry with non-empty evidence or notes."""
        return bool(self.evidence.strip() or self.notes.strip())
