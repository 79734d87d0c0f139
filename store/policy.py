"""The approval policy in force for a mission, one derivation for `authorize()`, `hud
check`, the HUD and `hud decide` (`effective_policy`, pure: it reads no file).

Two files make it: the workspace **floor**, `policy.toml` at the state directory's root
(admin-owned, the HUD never writes it; none: no minimums), and the mission's
constraints.toml. A mission's constraints may tighten the floor, never loosen it:
signatures are required when either requires them; `auto` keeps only the risk classes
the floor's `never_auto` leaves; `valid_for_seconds` is at most the floor's
`max_valid_for_seconds`; the floor's `allowed_signers`, when it names one, is the one
used; revoked keys are the floor's and the mission's. A constraints value set below the
floor is a warning (`below-floor`): the floor applies.

A native mission's constraints.toml is required: the policy comes from it, so when it
is missing or does not load nothing is authorized (`constraints_missing` says why, and
what the last revision kept in `history/` required); so when policy.toml does not load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from store.layout import POLICY_FILE, WORKSPACE_FILE, Kind, doc_path
from store.load import parse_document
from store.problems import Problem
from store.records import (
    ApprovalRequest,
    Constraints,
    Decision,
    FloorApproval,
    Risk,
    WorkspaceIdentity,
    WorkspacePolicy,
)

RootFiles = Mapping[str, bytes | Problem]
"""The root trust files read (`layout.TRUST_FILE_RE`), by path: their bytes, or why not."""


def _root_document(files: RootFiles, relpath: str, model: type[Any]) -> Any:
    """A root document from `files` (None: no such file; a Problem: it does not load)."""
    found = files.get(relpath)
    if found is None or isinstance(found, Problem):
        return found
    loaded = parse_document(relpath, found, model)
    if loaded.record is None:
        return loaded.problems[0] if loaded.problems else None
    return loaded.record


def workspace_id(files: RootFiles) -> str | Problem | None:
    """The state directory's id in workspace.toml (None: there is none yet)."""
    found = _root_document(files, WORKSPACE_FILE, WorkspaceIdentity)
    return found.id if isinstance(found, WorkspaceIdentity) else found


def floor_of(files: RootFiles) -> FloorApproval | Problem:
    """The workspace floor (policy.toml `[approval]`): no file, no minimums; a Problem
    when it does not load (then nothing is authorized)."""
    found = _root_document(files, POLICY_FILE, WorkspacePolicy)
    if isinstance(found, Problem):
        return found
    return found.approval if isinstance(found, WorkspacePolicy) else FloorApproval()


@dataclass(frozen=True, slots=True)
class EffectivePolicy:
    """The approval rules in force for one mission (`effective_policy`)."""

    require_signature: bool = False
    auto: tuple[Risk, ...] = ()
    valid_for_seconds: int = 3600
    allowed_signers: str | None = None
    revoked_keys: tuple[str, ...] = ()
    tools_allow: tuple[str, ...] | None = None
    """None: any tool (constraints `[tools] allow` is empty)."""
    tools_deny: tuple[str, ...] = ()
    floor: bool = False
    """True when policy.toml sets a minimum."""
    refusal: str | None = None
    """Set when no policy can be derived (constraints.toml or policy.toml missing or not
    loading): `authorize()` refuses every approval with it."""
    problems: tuple[Problem, ...] = ()
    """Where the constraints go below the floor (warnings: the floor applies)."""

    def signer_files(self) -> set[str]:
        """The `signers/` files this policy reads."""
        return {p for p in (self.allowed_signers, *self.revoked_keys) if p}

    def tool_refusal(self, tool: str) -> str | None:
        """Why no request for `tool` can be approved (`[tools]`), or None."""
        if tool in self.tools_deny:
            return f"constraints [tools] deny {tool!r}"
        if self.tools_allow is not None and tool not in self.tools_allow:
            return f"constraints [tools] allow does not list {tool!r}"
        return None

    def describe(self) -> str:
        """One line for the mission screen."""
        if self.refusal is not None:
            return f"nothing is authorized: {self.refusal}"
        signed = "signatures required" if self.require_signature else "signatures optional"
        auto = ", ".join(self.auto) if self.auto else "nothing"
        parts = [signed, f"auto: {auto}", f"valid for {self.valid_for_seconds} s"]
        if self.allowed_signers:
            parts.append(f"signers: {self.allowed_signers}")
        if self.floor:
            parts.append("within the floor (policy.toml)")
        return "; ".join(parts)

    def to_json(self) -> dict[str, object]:
        """For `hud check --json` (`effective_policy` of each mission)."""
        return {
            "require_signature": self.require_signature,
            "auto": list(self.auto),
            "valid_for_seconds": self.valid_for_seconds,
            "allowed_signers": self.allowed_signers,
            "revoked_keys": list(self.revoked_keys),
            "tools_allow": list(self.tools_allow) if self.tools_allow is not None else None,
            "tools_deny": list(self.tools_deny),
            "floor": self.floor,
            "refusal": self.refusal,
        }


def below_floor(floor: FloorApproval, constraints: Constraints) -> list[str]:
    """Each value the constraints set explicitly below the floor, naming the field and
    the floor's value (the HUD refuses to save such constraints)."""
    rules = constraints.approval
    given = rules.model_fields_set
    found = []
    if floor.require_signature and "require_signature" in given and not rules.require_signature:
        found.append(
            "[approval] require_signature = false: the floor (policy.toml) has "
            "require_signature = true"
        )
    never = [risk for risk in rules.auto if risk in floor.never_auto]
    if never:
        found.append(
            f"[approval] auto includes {', '.join(never)}: the floor (policy.toml) has "
            f"never_auto = {list(floor.never_auto)}"
        )
    longest = floor.max_valid_for_seconds
    if longest is not None and rules.valid_for_seconds > longest and "valid_for_seconds" in given:
        found.append(
            f"[approval] valid_for_seconds = {rules.valid_for_seconds}: the floor "
            f"(policy.toml) has max_valid_for_seconds = {longest}"
        )
    named = rules.allowed_signers
    if floor.allowed_signers and named and named != floor.allowed_signers:
        found.append(
            f"[approval] allowed_signers = {named!r}: the floor (policy.toml) has "
            f"allowed_signers = {floor.allowed_signers!r}"
        )
    return found


_FLOOR_HINT = (
    "a mission may tighten the workspace floor, never loosen it: raise the value to the "
    "floor's (or ask the admin who keeps policy.toml)"
)


def effective_policy(
    mission: str, floor: FloorApproval | Problem, constraints: Constraints | Problem
) -> EffectivePolicy:
    """The rules in force: the mission's `constraints` kept within the `floor` (module
    docstring). A Problem for either (missing, does not load) refuses everything."""
    if isinstance(floor, Problem):
        return EffectivePolicy(refusal=f"{floor.path} does not load: {floor.message}")
    if isinstance(constraints, Problem):
        return EffectivePolicy(refusal=constraints.message)
    rules = constraints.approval
    longest = floor.max_valid_for_seconds or rules.valid_for_seconds
    relpath = doc_path(mission, Kind.CONSTRAINTS)
    problems = tuple(
        Problem(relpath, None, "below-floor", f"{why}; the floor applies", _FLOOR_HINT, "warn")
        for why in below_floor(floor, constraints)
    )
    revoked = (floor.revoked_keys, rules.revoked_keys)
    return EffectivePolicy(
        require_signature=floor.require_signature or rules.require_signature,
        auto=tuple(risk for risk in rules.auto if risk not in floor.never_auto),
        valid_for_seconds=min(rules.valid_for_seconds, longest),
        allowed_signers=floor.allowed_signers or rules.allowed_signers,
        revoked_keys=tuple(dict.fromkeys(path for path in revoked if path)),
        tools_allow=tuple(constraints.tools.allow) or None,
        tools_deny=tuple(constraints.tools.deny),
        floor=floor != FloorApproval(),
        problems=problems,
    )


def _required(constraints: Constraints) -> str:
    """What a constraints revision required of approvals, in a few words."""
    rules = constraints.approval
    parts = [
        f"require_signature = {str(rules.require_signature).lower()}",
        f"auto = {list(rules.auto)}",
        f"valid_for_seconds = {rules.valid_for_seconds}",
    ]
    if rules.allowed_signers:
        parts.append(f"allowed_signers = {rules.allowed_signers!r}")
    return ", ".join(parts)


def constraints_missing(
    mission: str, history: Mapping[int, Constraints | None], why: str | None = None
) -> Problem:
    """The error of a mission whose constraints.toml is missing (`why` None) or does not
    load (`why`): nothing is authorized until it is back. `history` holds the kept
    revisions (`history/constraints.r<N>.toml`, None when one does not load)."""
    relpath = doc_path(mission, Kind.CONSTRAINTS)
    kept = {revision: record for revision, record in history.items() if record is not None}
    if kept:
        last = max(kept)
        told = f"; the last kept revision (history r{last}) required {_required(kept[last])}"
    else:
        told = ""
    if why is None:
        message = f"{relpath} is missing: authorize() refuses every approval{told}"
    else:
        message = f"{relpath} does not load ({why}): authorize() refuses every approval{told}"
    return Problem(
        relpath,
        None,
        "constraints-missing",
        message,
        "the mission's policy lives there: restore it (from history/, or write it again) "
        "and make it writable by the admin only (docs/approvals.md, Permissions)",
    )


CLOCK_SKEW = timedelta(seconds=60)
"""How far in the future a decision's `decided_at` may be (clocks differ a little)."""


def decision_times(
    request: ApprovalRequest, decision: Decision, valid_for_seconds: int, now: datetime | None
) -> str | None:
    """Why a decision's times do not bind (None: they do): it counts only when
    `requested_at <= decided_at <= min(expires_at, now + 60 s)` and `valid_until <=
    decided_at + valid_for_seconds` (of the policy in force). `now` None leaves out the
    bound that moves with the clock (`hud check`'s view of the files alone)."""
    decided = decision.decided_at
    if decided < request.requested_at.replace(microsecond=0):  # decisions keep whole seconds
        asked = _text(request.requested_at)
        return f"decided_at {_text(decided)} is before the request (requested_at {asked})"
    if request.expires_at is not None and decided > request.expires_at:
        expired = _text(request.expires_at)
        return f"expired: request expired at {expired}, before decided_at {_text(decided)}"
    if now is not None and decided > now + CLOCK_SKEW:
        return f"decided_at {_text(decided)} is in the future (now {_text(now)})"
    longest = decided + timedelta(seconds=valid_for_seconds)
    if decision.valid_until is not None and decision.valid_until > longest:
        return (
            f"valid_until {_text(decision.valid_until)} is later than decided_at + "
            f"valid_for_seconds ({valid_for_seconds}) allows ({_text(longest)})"
        )
    return None


def _text(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
