"""Everything a human decision on an approval request is checked against, in one place.

The HUD's request screen and `hud decide` both call `review()` and then `refusal()`:
what one refuses, the other refuses too. Pure: it reads the in-memory index
(`MissionState`, `Workspace`), never a file, and imports neither textual nor rich.

Fail closed. A request cannot be approved in place when

* its mission or request id is not a safe id (`store.format.layout.unsafe_id`; such a file is
  not a request of the layout, and no decision could be written for it);
* it is not pending (approved, rejected, stale: changed since it was decided or bound to
  a plan version that no longer holds (`store.derivation.plan_binding`), or expired);
* it does not load as a request (its `args` not a JSON object, a field missing, bad JSON),
  or its `id` is not its file name, or it has no digest;
* its `tool` or `args` (keys or values, at any depth) hold a control, bidi, zero-width
  or other invisible character: the approver could not see what they approve;
* it does not match its plan: the plan version it names is missing or does not load,
  or the step is not in that version; a newer plan version that changes only read-only
  steps is a warning (`read-only-change`), not a blocker;
* the mission's constraints.toml does not load (the approval's validity and the tool
  rules come from it), or `[tools]` denies the tool or has an `allow` list without it;
* nobody waits for it any more (`store.derivation.derive.nobody_waiting`): it was filed by a waiter
  (`store.derivation.lease`) that withdrew it or is gone.

Rejecting needs only a pending request with a digest, and a reason.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from store.derivation.derive import RequestStatus, nobody_waiting, request_binding, request_status
from store.derivation.mission import MissionState
from store.derivation.plan_binding import UNBOUND, PlanBinding
from store.format.layout import request_path, unsafe_id
from store.format.records import (
    RISK_ORDER,
    ApprovalRequest,
    Decision,
    PlanStep,
    canonical_json,
    safe_digest,
    snapshot_of,
)
from store.format.text import UNSEEN
from store.index.workspace import Workspace
from store.trust.signatures import SignatureState

Verdict = Literal["approve", "reject"]
Confirmation = Literal["none", "confirm", "type_tool"]
"""What the approver must do beyond pressing approve: nothing, confirm, or type the tool."""

DEFAULT_VALID_FOR_SECONDS = 3600
MAX_LISTED = 5

# ---- hazardous characters ------------------------------------------------------------------


def char_name(char: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`; controls have no name: `U+001B`."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}" if name else f"U+{ord(char):04X}"


def field_path(parts: Iterable[str | int]) -> str:
    """`args.items[2]["we ird"]`: plain names dotted, others quoted (ASCII, escaped)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier() and part.isascii():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=True)}]"
    return out


@dataclass(frozen=True, slots=True)
class Hazard:
    """A hazardous character at `path`; `in_key` when it is in an object key."""

    path: str
    char: str
    in_key: bool

    def __str__(self) -> str:
        where = f"a key in {self.path}" if self.in_key else self.path
        return f"{where}: {char_name(self.char)}"


def _first_hazard(text: str, *, lines: bool = False) -> str | None:
    unseen = UNSEEN[lines]
    return next((char for char in text if unseen.match(char)), None)


def hazards(
    value: Any, parts: tuple[str | int, ...] = (), *, lines: bool = False
) -> Iterator[Hazard]:
    """Every string (key or value, at any depth) of `value` holding a hazardous character.

    With `lines`, a line break in a string value is not one: it shows as `\\n` in the
    args and as a line break in the call's preview (an edit's text, a script). Keys and
    every other control stay hazards."""
    if isinstance(value, str):
        char = _first_hazard(value, lines=lines)
        if char is not None:
            yield Hazard(field_path(parts), char, False)
    elif isinstance(value, dict):
        for key, item in value.items():
            key_text = str(key)
            char = _first_hazard(key_text)
            if char is not None:
                yield Hazard(field_path(parts) or "(top level)", char, True)
            yield from hazards(item, (*parts, key_text), lines=lines)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from hazards(item, (*parts, index), lines=lines)


# ---- field-level diff ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """One field that differs between two versions of a request."""

    path: str
    kind: Literal["added", "removed", "changed"]
    before: Any = None
    after: Any = None


def _same(a: Any, b: Any) -> bool:
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):
        return bool(a == b)


def field_diff(before: Any, after: Any, parts: tuple[str | int, ...] = ()) -> list[Change]:
    """Field by field: objects by key, arrays by index, anything else as a whole value."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[Change] = []
        for key in sorted(set(before) | set(after)):
            path = (*parts, key)
            if key not in after:
                found.append(Change(field_path(path), "removed", before=before[key]))
            elif key not in before:
                found.append(Change(field_path(path), "added", after=after[key]))
            else:
                found.extend(field_diff(before[key], after[key], path))
        return found
    if isinstance(before, list) and isinstance(after, list):
        found = []
        for index in range(max(len(before), len(after))):
            path = (*parts, index)
            if index >= len(after):
                found.append(Change(field_path(path), "removed", before=before[index]))
            elif index >= len(before):
                found.append(Change(field_path(path), "added", after=after[index]))
            else:
                found.extend(field_diff(before[index], after[index], path))
        return found
    if _same(before, after):
        return []
    return [Change(field_path(parts) or "(request)", "changed", before, after)]


# ---- request versions seen -----------------------------------------------------------------


class SeenRequests:
    """Request versions this process saw while a decision on them was current.

    A decision keeps only a digest (and, when the HUD wrote it, `request_json`); when
    an agent later changes the request, this is how the HUD can still show what it
    was. Only decided requests are kept, at most `per_request` versions each.
    """

    def __init__(self, per_request: int = 4) -> None:
        self.per_request = per_request
        self._versions: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self._marks: dict[tuple[str, str], tuple[str | None, str | None]] = {}

    def observe(self, mission: MissionState) -> None:
        """Remember each decided request of `mission` whose decision is current."""
        for request_id, decided in mission.decisions.items():
            loaded = mission.requests.get(request_id)
            if loaded is None or loaded.raw is None or decided.record is None:
                continue
            key = (mission.id, request_id)
            mark = (loaded.sha256, decided.sha256)
            if self._marks.get(key) == mark:
                continue
            self._marks[key] = mark
            digest = safe_digest(loaded.raw)
            if digest is not None and digest == decided.record.digest:
                self.remember(mission.id, request_id, loaded.raw)

    def remember(self, mission: str, request_id: str, raw: dict[str, Any]) -> None:
        digest = safe_digest(raw)
        if digest is None:
            return
        versions = self._versions.setdefault((mission, request_id), {})
        versions.pop(digest, None)
        versions[digest] = raw
        while len(versions) > self.per_request:
            del versions[next(iter(versions))]

    def get(self, mission: str, request_id: str, digest: str) -> dict[str, Any] | None:
        return self._versions.get((mission, request_id), {}).get(digest)


# ---- the review ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Earlier:
    """Another decision on the same mission, with what its request asked for."""

    request_id: str
    decision: Decision
    tool: str | None
    risk: str | None
    status: RequestStatus
    signature: SignatureState


@dataclass(frozen=True, slots=True)
class Review:
    """What an approver needs to decide one request, and whether they may."""

    mission: str
    mission_title: str
    request_id: str
    relpath: str
    status: RequestStatus
    request: ApprovalRequest | None
    raw: dict[str, Any] | None
    digest: str | None
    plan_version: int | None
    latest_plan_version: int | None
    step: PlanStep | None
    decision: Decision | None
    blockers: tuple[str, ...]
    """Why it cannot be approved in place (empty: it can)."""
    reject_blockers: tuple[str, ...]
    """Why it cannot be rejected (empty: it can, with a reason)."""
    warnings: tuple[str, ...]
    earlier: tuple[Earlier, ...]
    previous: dict[str, Any] | None
    """For a stale request: the version the decision was made on, when known."""
    changes: tuple[Change, ...] | None
    """For a stale request: previous -> now, field by field (None: previous unknown)."""
    valid_for_seconds: int
    binding: PlanBinding = UNBOUND
    """What newer plan versions mean for the request (`store.derivation.plan_binding`)."""
    digest_changed: bool = False
    """True when a decision exists and its digest does not match the request as it is now."""
    signature: SignatureState | None = None
    """The decision's signature (`store.trust.signatures`); None: no decision."""

    @property
    def plan_stale(self) -> bool:
        """Stale because its plan version no longer holds (not because the request changed)."""
        return self.status is RequestStatus.STALE and not self.digest_changed

    @property
    def can_approve(self) -> bool:
        return not self.blockers

    @property
    def can_reject(self) -> bool:
        return not self.reject_blockers

    @property
    def risk(self) -> str:
        """The request's risk; an unreadable one counts as the highest."""
        if self.request is not None:
            return self.request.risk
        raw_risk = self.raw.get("risk") if self.raw else None
        return raw_risk if isinstance(raw_risk, str) and raw_risk in RISK_ORDER else "irreversible"

    @property
    def tool(self) -> str:
        if self.request is not None:
            return self.request.tool
        raw_tool = self.raw.get("tool") if self.raw else None
        return raw_tool if isinstance(raw_tool, str) else ""

    @property
    def expires_at(self) -> datetime | None:
        return self.request.expires_at if self.request is not None else None

    @property
    def confirmation(self) -> Confirmation:
        """external_write needs a confirmation; irreversible, the tool name typed."""
        if self.risk == "irreversible":
            return "type_tool"
        return "confirm" if self.risk == "external_write" else "none"

    def valid_until(self, now: datetime) -> datetime:
        """When an approval given `now` stops holding: now + `[approval] valid_for_seconds`."""
        return now + timedelta(seconds=self.valid_for_seconds)


def _decided_line(verb: str, decision: Decision) -> str:
    when = decision.decided_at.isoformat()
    return f"{verb} by {decision.decided_by} at {when}"


def _status_blocker(
    status: RequestStatus, decision: Decision | None, binding: PlanBinding, digest_changed: bool
) -> str:
    if status is RequestStatus.STALE and not digest_changed and binding.stale:
        return binding.reason
    if status is RequestStatus.STALE:
        return (
            "stale: changed since it was decided (digest mismatch); the agent must file "
            "a new request"
        )
    if decision is not None and status is RequestStatus.APPROVED:
        return "already " + _decided_line("approved", decision)
    if decision is not None and status is RequestStatus.REJECTED:
        return "already " + _decided_line("rejected", decision)
    if status is RequestStatus.EXPIRED:
        if decision is not None:
            return f"expired: {_decided_line(decision.decision + 'd', decision)}, no longer valid"
        return "expired: it was not decided before its expires_at"
    return f"not pending ({status.value})"


def review(
    mission: MissionState,
    request_id: str,
    now: datetime,
    seen: SeenRequests | None = None,
) -> Review:
    """Everything about request `request_id` of `mission` that bears on a decision."""
    loaded = mission.requests[request_id]
    request, raw = loaded.record, loaded.raw
    status = request_status(mission, request_id, now)
    decided = mission.decisions.get(request_id)
    decision = decided.record if decided is not None else None
    digest = safe_digest(raw) if raw is not None else None
    binding = request_binding(mission, request_id)
    digest_changed = decision is not None and mission.decision_is_current(request_id) is not True

    common: list[str] = []  # blocks approving and rejecting
    blockers: list[str] = []  # blocks approving
    warnings: list[str] = []

    unsafe = id_blocker(mission.id, request_id)
    if unsafe is not None:
        common.append(unsafe)
    if status is not RequestStatus.PENDING:
        common.append(_status_blocker(status, decision, binding, digest_changed))
    elif decided is not None and decision is None:
        common.append(f"a decision file exists but does not load: {decided.relpath}")
    else:
        gone = nobody_waiting(mission, request_id)
        if gone is not None:
            blockers.append(
                f"{gone}; an approval could not run the call (reject it, for the record)"
            )
    if raw is None:
        first = loaded.problems[0].message if loaded.problems else "unreadable"
        common.append(f"the request file does not load: {first}")
    elif digest is None:
        common.append("the request has no canonical JSON, so no digest to bind to")
    elif raw.get("id") != request_id:
        common.append(f"the request's id {raw.get('id')!r} is not its file name {request_id!r}")
    if raw is not None and request is None:
        args = raw.get("args")
        if "args" in raw and not isinstance(args, dict):
            blockers.append(f"args is not a JSON object (it is {_json_type(args)})")
        else:
            first = loaded.problems[0].message if loaded.problems else "invalid"
            blockers.append(f"the request is not valid: {first}")

    if raw is not None:
        found = [
            *hazards(raw.get("tool"), ("tool",)),
            *hazards(raw.get("args"), ("args",), lines=True),
        ]
        if found:
            listed = "; ".join(str(h) for h in found[:MAX_LISTED])
            more = f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
            blockers.append(
                f"tool or args contain control or invisible characters ({listed}{more}): "
                "what would run is not what you can read"
            )

    step, plan_version, latest = _plan_checks(mission, request, raw, blockers)
    if binding.stale and binding.reason not in common:
        blockers.append(binding.reason)
    elif binding.message and not binding.stale:
        warnings.append(binding.reason)
    valid_for = _constraint_checks(mission, request, blockers, warnings)
    if step is not None and request is not None:
        _risk_check(request, step, warnings)

    previous: dict[str, Any] | None = None
    changes: tuple[Change, ...] | None = None
    if status is RequestStatus.STALE and decision is not None and digest_changed:
        previous = snapshot_of(decision)
        if previous is None and seen is not None:
            previous = seen.get(mission.id, request_id, decision.digest)
        if previous is not None and raw is not None:
            changes = tuple(field_diff(previous, raw))

    reject_blockers = tuple(common)
    return Review(
        mission=mission.id,
        mission_title=mission.title,
        request_id=request_id,
        relpath=request_path(mission.id, request_id),
        status=status,
        request=request,
        raw=raw,
        digest=digest,
        plan_version=plan_version,
        latest_plan_version=latest,
        step=step,
        decision=decision,
        blockers=(*common, *blockers),
        reject_blockers=reject_blockers,
        warnings=tuple(warnings),
        earlier=tuple(_earlier(mission, request_id, now)),
        previous=previous,
        changes=changes,
        valid_for_seconds=valid_for,
        binding=binding,
        digest_changed=digest_changed,
        signature=mission.signature(request_id),
    )


def _risk_check(request: ApprovalRequest, step: PlanStep, warnings: list[str]) -> None:
    if RISK_ORDER[request.risk] > RISK_ORDER[step.risk]:
        warnings.insert(
            0,
            f"risk {request.risk} is higher than plan v{request.plan_version} declares "
            f"for step {step.id} ({step.risk})",
        )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _plan_checks(
    mission: MissionState,
    request: ApprovalRequest | None,
    raw: dict[str, Any] | None,
    blockers: list[str],
) -> tuple[PlanStep | None, int | None, int | None]:
    """The step the request serves, from the plan version it names (what newer versions
    mean for it is `store.derivation.plan_binding`)."""
    loaded_versions = [v for v, p in mission.plans.items() if p.record is not None]
    latest = max(loaded_versions, default=None)
    version = request.plan_version if request is not None else None
    step_id = request.step if request is not None else None
    if request is None and raw is not None:
        raw_version, raw_step = raw.get("plan_version"), raw.get("step")
        version = raw_version if isinstance(raw_version, int) else None
        step_id = raw_step if isinstance(raw_step, str) else None
    if version is None or step_id is None:
        return None, version, latest
    plan_loaded = mission.plans.get(version)
    if plan_loaded is None:
        blockers.append(f"plan v{version}, which the request names, does not exist")
        return None, version, latest
    plan = plan_loaded.record
    if plan is None:
        blockers.append(f"plan v{version}, which the request names, does not load")
        return None, version, latest
    step = next((s for s in plan.steps if s.id == step_id), None)
    if step is None:
        blockers.append(f"step {step_id!r} is not in plan v{version}")
    return step, version, latest


def _constraint_checks(
    mission: MissionState,
    request: ApprovalRequest | None,
    blockers: list[str],
    warnings: list[str],
) -> int:
    """Tool rules and the auto policy of the rules in force (`MissionState.effective_policy`:
    the constraints within the workspace floor); returns their `valid_for_seconds`."""
    rules = mission.effective_policy
    if rules.refusal is not None:
        blockers.append(
            f"no approval policy: {rules.refusal} (the approval's validity and tool rules "
            "come from it; fix it first)"
        )
        return DEFAULT_VALID_FOR_SECONDS
    if request is not None:
        refused = rules.tool_refusal(request.tool)
        if refused is not None:
            blockers.append(refused)
        if request.risk in rules.auto:
            warnings.append(
                f"constraints [approval] auto includes {request.risk}: the agent could have "
                "acted without asking"
            )
    return rules.valid_for_seconds


def _earlier(mission: MissionState, request_id: str, now: datetime) -> Iterator[Earlier]:
    found: list[Earlier] = []
    for other_id, decided in mission.decisions.items():
        if other_id == request_id or decided.record is None:
            continue
        signature = mission.signature(other_id)
        assert signature is not None  # its decision loads
        other = mission.requests.get(other_id)
        record = other.record if other is not None else None
        status = (
            request_status(mission, other_id, now) if other is not None else RequestStatus.STALE
        )
        found.append(
            Earlier(
                other_id,
                decided.record,
                record.tool if record else None,
                record.risk if record else None,
                status,
                signature,
            )
        )
    found.sort(key=lambda e: (e.decision.decided_at, e.request_id), reverse=True)
    yield from found


# ---- deciding ---------------------------------------------------------------------------------


def id_blocker(mission_id: str, request_id: str) -> str | None:
    """Why a request cannot be decided for its ids alone (None: they are safe ids)."""
    why = unsafe_id(mission_id, request_id)
    return None if why is None else f"{why}; the agent must file the request under a safe id"


def refusal(
    review: Review, verdict: Verdict, reason: str, seen_digest: str | None = None
) -> str | None:
    """Why this decision must not be written (None: it may).

    `seen_digest` is the digest of the request the human looked at; a request that
    changed since is refused, so a decision never binds to something unseen.
    """
    if seen_digest is not None and review.digest != seen_digest:
        return "the request changed while you were looking at it; review it again"
    if verdict == "approve":
        if review.blockers:
            return "cannot approve: " + "; ".join(review.blockers)
        return None
    if review.reject_blockers:
        return "cannot reject: " + "; ".join(review.reject_blockers)
    if not reason.strip():
        return "a rejection needs a reason"
    return None


# ---- the queue ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One row of the approvals queue."""

    mission: str
    request_id: str
    status: RequestStatus
    risk: str
    tool: str
    step: str
    plan_version: int | None
    summary: str
    requested_at: datetime | None
    expires_at: datetime | None
    binding: PlanBinding = UNBOUND
    """What newer plan versions mean for the request: a stale rule, a notice, or none."""
    nobody_waiting: str | None = None
    """Why nobody waits for its decision any more (`store.derivation.derive.nobody_waiting`)."""

    @property
    def key(self) -> str:
        return f"{self.mission}/{self.request_id}"

    def sort_key(self) -> tuple[bool, int, int, float, float, str, str]:
        """Soonest expiry first (to the minute, as shown; none last), then highest risk,
        then the exact expiry, then the oldest request."""
        expires = self.expires_at.timestamp() if self.expires_at else 0.0
        requested = self.requested_at.timestamp() if self.requested_at else 0.0
        rank = RISK_ORDER.get(self.risk, max(RISK_ORDER.values()))
        minute = int(expires // 60)
        return (
            self.expires_at is None,
            minute,
            -rank,
            expires,
            requested,
            self.mission,
            self.request_id,
        )


def queue_item(mission: MissionState, request_id: str, now: datetime) -> QueueItem:
    loaded = mission.requests[request_id]
    record, raw = loaded.record, loaded.raw or {}
    status = request_status(mission, request_id, now)
    binding = request_binding(mission, request_id)
    if record is not None:
        return QueueItem(
            mission.id,
            request_id,
            status,
            record.risk,
            record.tool,
            record.step,
            record.plan_version,
            record.summary,
            record.requested_at,
            record.expires_at,
            binding,
            nobody_waiting(mission, request_id),
        )

    def text(name: str) -> str:
        value = raw.get(name)
        return value if isinstance(value, str) else ""

    risk = text("risk")
    version = raw.get("plan_version")
    return QueueItem(
        mission.id,
        request_id,
        status,
        risk if risk in RISK_ORDER else "irreversible",
        text("tool"),
        text("step"),
        version if isinstance(version, int) else None,
        text("summary") or "(invalid request)",
        None,
        None,
        binding,
        nobody_waiting(mission, request_id),
    )


QUEUED = RequestStatus.PENDING
"""The status of the requests the approval queue shows."""


def queued(mission: MissionState, request_id: str, now: datetime) -> bool:
    """Whether the request is in the approval queue: the one predicate the queue
    (`approval_queue`), its count and its notifications share."""
    return request_status(mission, request_id, now) is QUEUED


def approval_queue(
    workspace: Workspace, now: datetime, *, everything: bool = False
) -> list[QueueItem]:
    """Pending requests across missions (every request with `everything`), sorted."""
    items = [
        queue_item(mission, request_id, now)
        for mission in workspace.missions.values()
        for request_id in mission.requests
    ]
    items += ask_items(workspace)
    if not everything:
        items = [item for item in items if item.status is QUEUED]  # `queued`'s status
    items.sort(key=QueueItem.sort_key)
    return items


def ask_items(workspace: Workspace) -> list[QueueItem]:
    """Every source's open questions to a human (`Source.asks`: a loopexec escalation, a
    loopx user gate) are in the queue too (and counted in the header); opening one shows
    its row: the source's runtime records the answer, not the HUD."""
    return [
        QueueItem(
            mission=ask.row_id,
            request_id=ask.ask_id,
            status=RequestStatus.PENDING,
            risk="escalation",
            tool=ask.tool,
            step=ask.step,
            plan_version=None,
            summary=ask.summary,
            requested_at=ask.asked_at,
            expires_at=None,
        )
        for source in workspace.sources
        for ask in source.asks()
    ]


class PendingIndex:
    """The pending requests of each mission, to notice new ones as changes arrive.

    `update` costs time in proportion to the missions touched. The first call only
    learns what is pending (nothing is "new" at start-up).
    """

    def __init__(self) -> None:
        self.pending: dict[str, frozenset[str]] = {}
        self.seeded = False

    def update(
        self, workspace: Workspace, touched: set[str] | None, now: datetime
    ) -> list[tuple[str, str]]:
        """Apply a change; returns the (mission, request) pairs newly pending."""
        ids = set(workspace.missions) if touched is None else touched
        new: list[tuple[str, str]] = []
        for mission_id in sorted(ids):
            mission = workspace.missions.get(mission_id)
            current = (
                frozenset(r for r in mission.requests if queued(mission, r, now))
                if mission is not None
                else frozenset()
            )
            if self.seeded:
                before = self.pending.get(mission_id, frozenset())
                new.extend((mission_id, r) for r in sorted(current - before))
            if current:
                self.pending[mission_id] = current
            else:
                self.pending.pop(mission_id, None)
        if touched is None:
            for gone in set(self.pending) - ids:
                del self.pending[gone]
        self.seeded = True
        return new

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.pending.values())
