"""Pydantic models for every record in a state directory (see docs/format.md).

Models accept unknown fields (they are reported as warnings by the loader, via
`model_extra`) and are strict about types: a string is never coerced to a number.
Timestamps are RFC 3339 strings with a zone, parsed to aware datetimes.

Annotations here are evaluated as Python reads them (no `from __future__ import
annotations`): pydantic would otherwise evaluate each field's string again when it
builds the model: about 10 M instructions (1 %) of every `hud check`'s start.
"""

import hashlib
import json
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Annotated, Any, Literal, Self, TypeVar, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from store.format.layout import REQUEST_ID_RE, SIGNERS_FILE_RE

M = TypeVar("M", bound=BaseModel)

Timestamp = AwareDatetime
"""RFC 3339 with a zone; parsed natively by pydantic-core (records are validated as JSON)."""
Number = float | int
Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
RequestId = Annotated[str, Field(pattern=REQUEST_ID_RE)]
SignersFile = Annotated[str, Field(pattern=SIGNERS_FILE_RE)]
StepId = Annotated[str, Field(min_length=1, max_length=128)]

Risk = Literal["read_only", "reversible_write", "external_write", "irreversible"]
RISK_ORDER: dict[str, int] = {risk: rank for rank, risk in enumerate(get_args(Risk))}
"""Each risk class's rank, from the `Risk` literal's order (read_only lowest)."""
StepState = Literal[
    "ready",
    "running",
    "waiting_for_approval",
    "blocked",
    "verifying",
    "succeeded",
    "failed",
    "outcome_unknown",
]
GENESIS = "0" * 64


class Record(BaseModel):
    """Base of every record: strict types, unknown fields kept for a warning."""

    model_config = ConfigDict(
        strict=True,
        extra="allow",
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        allow_inf_nan=False,
    )


class Document(Record):
    """A whole-file record; carries `schema = 1`."""

    schema_version: Literal[1] = Field(alias="schema")


# ---- human-owned -------------------------------------------------------------------


class Scope(Record):
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)


class Intent(Document):
    title: str = Field(min_length=1)
    objective: str = ""
    non_goals: list[str] = Field(default_factory=list)
    scope: Scope = Field(default_factory=Scope)
    success_evidence: list[str] = Field(default_factory=list)
    open_decisions: list[str] = Field(default_factory=list)
    created_by: str = ""
    created_at: Timestamp | None = None
    revision: int = Field(default=1, ge=1)
    edited_by: str = ""
    edited_at: Timestamp | None = None


class Rule(Record):
    id: str = Field(min_length=1)
    rule: str
    severity: Literal["error", "warn"] = "error"


class Budget(Record):
    usd: Number | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)
    steps: int | None = Field(default=None, ge=0)
    wall_seconds: Number | None = Field(default=None, ge=0)
    deadline: Timestamp | None = None
    max_attempts_per_step: int | None = Field(default=None, ge=1)
    """Attempts one step may start; a step that used them all without succeeding needs a
    human (`store.derivation.derive.retries_exhausted`)."""


class ApprovalPolicy(Record):
    auto: list[Risk] = Field(default_factory=list)
    valid_for_seconds: int = Field(default=3600, gt=0)
    require_signature: bool = False
    """`authorize()` refuses a decision without a valid signature (`store.trust.signatures`)."""
    allowed_signers: SignersFile | None = None
    """`signers/<name>`: who may sign decisions (OpenSSH allowed-signers format)."""
    revoked_keys: SignersFile | None = None
    """`signers/<name>`: keys whose signatures are refused (public keys, one a line)."""

    @model_validator(mode="after")
    def _required_needs_signers(self) -> Self:
        if self.require_signature and self.allowed_signers is None:
            raise ValueError("require_signature needs allowed_signers (signers/<name>)")
        return self


class Tools(Record):
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class Constraints(Document):
    rule: list[Rule] = Field(default_factory=list)
    budget: Budget = Field(default_factory=Budget)
    approval: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
    tools: Tools = Field(default_factory=Tools)
    revision: int = Field(default=1, ge=1)
    edited_by: str = ""
    edited_at: Timestamp | None = None


class FloorApproval(Record):
    """policy.toml `[approval]`: the minimums every mission's constraints keep."""

    require_signature: bool = False
    never_auto: list[Risk] = Field(default_factory=list)
    """Risk classes no mission may put in `[approval] auto`."""
    max_valid_for_seconds: int | None = Field(default=None, gt=0)
    allowed_signers: SignersFile | None = None
    """Who may sign decisions, in every mission (a mission cannot name another file)."""
    revoked_keys: SignersFile | None = None
    """Keys refused in every mission (besides the mission's own revoked_keys)."""
    require_signed_policy: bool = False
    """A loosening of a mission's constraints counts only when signed (`store.trust.policy`)."""
    policy_signers: SignersFile | None = None
    """Who may sign constraints (OpenSSH allowed-signers format)."""

    @model_validator(mode="after")
    def _named_files(self) -> Self:
        if self.require_signature and self.allowed_signers is None:
            raise ValueError("require_signature needs allowed_signers (signers/<name>)")
        if self.require_signed_policy and self.policy_signers is None:
            raise ValueError("require_signed_policy needs policy_signers (signers/<name>)")
        return self


class WorkspacePolicy(Document):
    """policy.toml: the workspace policy floor (admin-owned; the HUD never writes it)."""

    approval: FloorApproval = Field(default_factory=FloorApproval)


class WorkspaceIdentity(Document):
    """workspace.toml: the state directory's identity, created once (never rewritten)."""

    id: Annotated[
        str, Field(pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
    ]
    created_by: str = ""
    created_at: Timestamp | None = None


class Decision(Document):
    request: RequestId
    digest: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
    decision: Literal["approve", "reject"]
    reason: str = ""
    decided_by: str = Field(min_length=1)
    decided_at: Timestamp
    valid_until: Timestamp | None = None
    origin: str = ""
    request_json: str | None = None
    """The request decided on, as ASCII JSON (`request_snapshot`); its canonical form
    has `digest`. Optional: lets a stale request show what changed, field by field."""
    signature: str | None = None
    """An armored SSH signature (SSHSIG) over `store.trust.signatures.payload` (optional)."""

    @model_validator(mode="after")
    def _reject_needs_reason(self) -> Self:
        if self.decision == "reject" and not self.reason.strip():
            raise ValueError("a rejection needs a reason")
        return self


NotifySeverity = Literal["info", "warning", "critical"]
"""How urgent a notification is (`hud notify`, docs/notifications.md)."""


class NotifyTarget(Record):
    """Where `hud notify` sends (an Apprise URL) and what: only events of these missions
    (shell patterns), risk classes and severities; an empty list lets all through."""

    url: str = Field(min_length=1, max_length=2048)
    missions: list[str] = Field(default_factory=list)
    risks: list[Risk | Literal["escalation"]] = Field(default_factory=list)
    severities: list[NotifySeverity] = Field(default_factory=list)


class Settings(Document):
    """hud.toml: workspace settings."""

    stale_after_seconds: int = Field(default=600, gt=0)
    theme: str = "hud-dark"
    bell: bool = False
    keys: dict[str, str] = Field(default_factory=dict)
    loopx_roots: list[str] | None = None
    """Folders outside the state directory the HUD may read loopx state from (a
    registry's common_runtime_root, a goal's repo); unset: wherever the registry says."""
    notify: list[NotifyTarget] = Field(default_factory=list)
    """The workspace's notification targets (`[[notify]]`): used only where the person
    running `hud notify` trusts this state directory (docs/notifications.md)."""


# ---- agent-owned --------------------------------------------------------------------


class PlanStep(Record):
    id: StepId
    title: str
    depends_on: list[StepId] = Field(default_factory=list)
    risk: Risk = "read_only"
    effect: str = ""
    verification: str = ""
    recovery: str = ""
    needs_approval: bool = False


class Plan(Document):
    version: int = Field(ge=1)
    created_at: Timestamp
    author: str
    reason: str = ""
    assumptions: list[str] = Field(default_factory=list)
    steps: list[PlanStep]
    expected_evidence: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _replan_needs_reason(self) -> Self:
        if self.version > 1 and not self.reason.strip():
            raise ValueError("plan versions after 1 need a reason (why the plan changed)")
        ids = [s.id for s in self.steps]
        if len(ids) != len(set(ids)):
            raise ValueError("step ids must be unique within a plan version")
        return self


class LogLine(Record):
    """Fields every log line carries: sequence number, time and hash chain link."""

    schema_version: Literal[1] | None = Field(default=None, alias="schema")
    seq: int = Field(ge=1)
    at: Timestamp
    prev: Hex64


class EventBase(LogLine):
    actor: str


class StepEvent(EventBase):
    type: Literal["step"]
    step: StepId
    plan_version: int = Field(ge=1)
    state: StepState
    reason: str = ""


class AttemptEvent(EventBase):
    type: Literal["attempt"]
    step: StepId
    attempt: int = Field(ge=1)
    phase: Literal["started", "finished"]
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    idempotency_key: str = ""
    approval: str | None = None
    effect_possible: bool = False
    outcome: Literal["ok", "error", "unknown"] | None = None
    external_ref: str | None = None
    output_ref: str | None = None


class UsageEvent(EventBase):
    type: Literal["usage"]
    usd: Number = Field(ge=0)
    tokens: int = Field(ge=0)
    steps: int = Field(ge=0)


class HeartbeatEvent(EventBase):
    type: Literal["heartbeat"]


class ErrorEvent(EventBase):
    type: Literal["error"]
    message: str
    step: StepId | None = None


class HaltEvent(EventBase):
    type: Literal["halt"]
    reason: str


class WaiterEvent(EventBase):
    """A waiter (`store.derivation.lease`) on approval request `request` saw its decision
    (`received`) or left without one (`withdrawn`: the request can no longer be approved)."""

    type: Literal["waiter"]
    request: RequestId
    state: Literal["received", "withdrawn"]
    reason: str = ""


Event = Annotated[
    StepEvent | AttemptEvent | UsageEvent | HeartbeatEvent | ErrorEvent | HaltEvent | WaiterEvent,
    Field(discriminator="type"),
]


class Artifact(Record):
    path: str = Field(min_length=1)
    sha256: Hex64
    bytes: int = Field(ge=0)


class Evidence(LogLine):
    id: str = Field(min_length=1)
    step: StepId
    observed: str
    method: str
    proves: str
    verdict: Literal["pass", "fail"]
    artifact: Artifact | None = None
    observer: str = ""
    """Who made the observation when it was not the agent that did the step (a CI job,
    a second agent, a person): what makes the evidence independent."""


class ApprovalRequest(Document):
    id: RequestId
    step: StepId
    plan_version: int = Field(ge=1)
    tool: str = Field(min_length=1)
    args: dict[str, Any]
    risk: Risk
    summary: str = ""
    requested_by: str
    requested_at: Timestamp
    expires_at: Timestamp | None = None


class Handoff(Document):
    at: Timestamp
    plan_version: int | None = Field(default=None, ge=1)
    current_step: str | None = None
    summary: str = ""
    verified: list[str] = Field(default_factory=list)
    blockers: list[str] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    resume_after_seq: int = Field(default=0, ge=0)


# ---- digests --------------------------------------------------------------------------


def canonical_json(value: Any) -> bytes:
    """Keys sorted, separators `,` `:`, UTF-8, no ASCII escaping."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def request_digest(raw: dict[str, Any]) -> str:
    """The digest a decision binds to: sha256 of the request's canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical_json(raw)).hexdigest()


MAX_SNAPSHOT_BYTES = 64 * 1024


def request_snapshot(raw: dict[str, Any]) -> str | None:
    """The request as a decision keeps it (`request_json`): sorted keys, ASCII escapes
    (so no raw control or bidi character lands in the TOML), or None over 64 KiB."""
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text if len(text) <= MAX_SNAPSHOT_BYTES else None


def snapshot_of(decision: Decision) -> dict[str, Any] | None:
    """The request a decision was made on, from its `request_json`, if it has one that
    parses to an object whose digest is the decision's (else None: not trusted)."""
    text = decision.request_json
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or safe_digest(value) != decision.digest:
        return None
    return value


def safe_digest(raw: dict[str, Any]) -> str | None:
    """The request digest, or None when the value has no canonical JSON."""
    try:
        return request_digest(raw)
    except (TypeError, ValueError, UnicodeError):
        return None


def _json_default(value: object) -> str:
    """TOML gives datetimes: pass them on as RFC 3339 text (naive ones stay naive)."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def validate(target: type[M] | TypeAdapter[Any], data: Mapping[str, Any]) -> Any:
    """Validate parsed data (JSON or TOML) as JSON, the one path every record takes.

    Strict JSON mode parses timestamps natively and refuses NaN and Infinity; TOML
    datetimes become RFC 3339 text first, so a local (zoneless) one is refused.
    """
    payload = json.dumps(data, default=_json_default, ensure_ascii=False).encode()
    if isinstance(target, TypeAdapter):
        return target.validate_json(payload)
    return target.model_validate_json(payload)


_TIME: TypeAdapter[datetime] = TypeAdapter(Timestamp)


def parse_time(value: object) -> datetime:
    """A TOML or JSON time value as an aware datetime (ValidationError if it is not one)."""
    return _TIME.validate_json(json.dumps(value, default=_json_default))


SHARED_FIELD_SETS = 4096
"""At most this many distinct field sets are shared (`share_field_sets`)."""
_FIELD_SETS: dict[frozenset[str], set[str]] = {}


def share_field_sets(record: BaseModel) -> None:
    """Let `record` and the records nested in it hold one shared set of the fields they
    were given per distinct set, instead of a set each (216 to 728 bytes: a plan of five
    steps held seven): for records kept as long as their file is unchanged.

    Safe because records are frozen (pydantic adds to the set only on assignment, and
    `model_copy` copies it first); a record with unknown fields keeps its own set (their
    names are the writer's: sharing them would let a file grow the table)."""
    stack: list[Any] = [record]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            stack.extend(item.__dict__.values())
            given = item.__pydantic_fields_set__
            if item.__pydantic_extra__ or type(given) is not set:
                continue
            key = frozenset(given)
            shared = _FIELD_SETS.get(key)
            if shared is None and len(_FIELD_SETS) < SHARED_FIELD_SETS:
                shared = _FIELD_SETS[key] = given
            if shared is not None:
                object.__setattr__(item, "__pydantic_fields_set__", shared)
        elif type(item) is list:
            stack.extend(item)
