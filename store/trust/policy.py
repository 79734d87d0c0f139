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

**Signed policy.** Where the floor says `require_signed_policy`, a constraints revision
that loosens the policy (turns `require_signature` off, adds to `auto`, widens `[tools]
allow` or drops a `deny`, names other signers files, lengthens `valid_for_seconds`)
counts only when it is signed: a detached SSHSIG in the namespace POLICY_NAMESPACE over
`policy_payload` (the workspace id, the mission and the sha256 of the file's bytes), kept
as `constraints.toml.sig` (or, for a kept revision, `history/constraints.r<N>.toml.sig`:
any signature file of the mission vouches for the revision whose bytes it signs), by a
key of the floor's `policy_signers` file. An unsigned loosening is an error
(`policy-unsigned`) and is not applied: each field keeps the stricter of the current
constraints and the last validly signed revision (the floor alone when there is none).

A native mission's constraints.toml is required: the policy comes from it, so when it
is missing or does not load nothing is authorized (`constraints_missing` says why, and
what the last revision kept in `history/` required); so when policy.toml does not load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from store.format.layout import POLICY_FILE, WORKSPACE_FILE, Kind, doc_path
from store.format.load import parse_document
from store.format.problems import Problem
from store.format.records import (
    ApprovalRequest,
    Constraints,
    Decision,
    FloorApproval,
    Risk,
    WorkspaceIdentity,
    WorkspacePolicy,
    canonical_json,
)
from store.trust import sshsig
from store.trust.signers import parse_allowed, vouching

POLICY_NAMESPACE = "operator-hud-policy@v1"
DEFAULT_VALID_FOR_SECONDS = 3600

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
    policy_signers: str | None = None
    """The floor's file of keys that may sign constraints (`require_signed_policy`)."""
    signed_by: str | None = None
    """Who signed the constraints revision in force (a `policy_signers` principal)."""
    floor: bool = False
    """True when policy.toml sets a minimum."""
    refusal: str | None = None
    """Set when no policy can be derived (constraints.toml or policy.toml missing or not
    loading): `authorize()` refuses every approval with it."""
    problems: tuple[Problem, ...] = ()
    """Where the constraints go below the floor (warnings: the floor applies)."""

    def signer_files(self) -> set[str]:
        """The `signers/` files this policy reads."""
        named = (self.allowed_signers, *self.revoked_keys, self.policy_signers)
        return {p for p in named if p}

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
        if self.signed_by:
            parts.append(f"constraints signed by {self.signed_by}")
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
            "policy_signers": self.policy_signers,
            "signed_by": self.signed_by,
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
    "a mission may tighten the workspace floor, never loosen it: bring the value within "
    "the floor's (or ask the admin who keeps policy.toml)"
)


@dataclass(frozen=True, slots=True)
class Revision:
    """One constraints revision as read: its record and the sha256 of its bytes."""

    number: int
    record: Constraints
    sha256: str


@dataclass(frozen=True, slots=True)
class Signing:
    """What signed policy needs beyond the files: the constraints in force (`current`),
    the kept revisions, the texts of the mission's signature files, and the time."""

    current: Revision | None
    history: tuple[Revision, ...] = ()
    signatures: tuple[str, ...] = ()
    now: datetime | None = None


def policy_payload(workspace: str, mission: str, sha256: str) -> bytes:
    """What a constraints signature covers: canonical JSON, so `printf` writes it too
    (docs/approvals.md, Signed policy)."""
    return canonical_json(
        {"version": 1, "workspace": workspace, "mission": mission, "constraints_sha256": sha256}
    )


def _signer(
    files: RootFiles, floor: FloorApproval, mission: str, revision: Revision, signing: Signing
) -> str | None:
    """The `policy_signers` principal whose signature vouches for `revision`, or None."""
    workspace, name = workspace_id(files), floor.policy_signers
    data = files.get(name) if name else None
    if not isinstance(workspace, str) or name is None or not isinstance(data, bytes):
        return None
    allowed = parse_allowed(name, data)
    message = policy_payload(workspace, mission, revision.sha256)
    at = signing.now or datetime.now().astimezone()
    for text in signing.signatures:
        try:
            parsed = sshsig.parse(text)
            sshsig.verify(parsed, message, POLICY_NAMESPACE)
        except ValueError:
            continue
        entry = vouching(allowed, parsed.key, POLICY_NAMESPACE, at)
        if entry is not None:
            return entry.principals
    return None


def _terms(constraints: Constraints) -> EffectivePolicy:
    """A constraints revision's approval terms, as written."""
    rules = constraints.approval
    return EffectivePolicy(
        require_signature=rules.require_signature,
        auto=tuple(rules.auto),
        valid_for_seconds=rules.valid_for_seconds,
        allowed_signers=rules.allowed_signers,
        revoked_keys=tuple(p for p in (rules.revoked_keys,) if p),
        tools_allow=tuple(constraints.tools.allow) or None,
        tools_deny=tuple(constraints.tools.deny),
    )


def _floor_terms(floor: FloorApproval) -> EffectivePolicy:
    """The floor as terms: what holds when no signed revision says more."""
    return EffectivePolicy(
        require_signature=floor.require_signature,
        valid_for_seconds=floor.max_valid_for_seconds or DEFAULT_VALID_FOR_SECONDS,
        allowed_signers=floor.allowed_signers,
        revoked_keys=tuple(p for p in (floor.revoked_keys,) if p),
    )


def loosened(terms: EffectivePolicy, base: EffectivePolicy) -> list[str]:
    """Where `terms` is looser than `base`, one phrase each."""
    found = []
    if base.require_signature and not terms.require_signature:
        found.append("require_signature turned off")
    added = [risk for risk in terms.auto if risk not in base.auto]
    if added:
        found.append(f"auto adds {', '.join(added)}")
    if terms.valid_for_seconds > base.valid_for_seconds:
        found.append(f"valid_for_seconds {base.valid_for_seconds} -> {terms.valid_for_seconds}")
    if base.tools_allow is not None and (
        terms.tools_allow is None or set(terms.tools_allow) - set(base.tools_allow)
    ):
        found.append("[tools] allow widened")
    if set(base.tools_deny) - set(terms.tools_deny):
        found.append("[tools] deny narrowed")
    if terms.allowed_signers != base.allowed_signers and terms.allowed_signers is not None:
        found.append(f"allowed_signers names {terms.allowed_signers!r}")
    if set(base.revoked_keys) - set(terms.revoked_keys):
        found.append("revoked_keys dropped")
    return found


def _meet(terms: EffectivePolicy, base: EffectivePolicy) -> EffectivePolicy:
    """The stricter of `terms` and `base`, field by field."""
    allow: tuple[str, ...] | None = terms.tools_allow
    if base.tools_allow is not None:
        allow = tuple(t for t in (allow or base.tools_allow) if t in base.tools_allow)
    return replace(
        terms,
        require_signature=terms.require_signature or base.require_signature,
        auto=tuple(risk for risk in terms.auto if risk in base.auto),
        valid_for_seconds=min(terms.valid_for_seconds, base.valid_for_seconds),
        allowed_signers=base.allowed_signers,  # naming another file is a loosening
        revoked_keys=tuple(dict.fromkeys((*base.revoked_keys, *terms.revoked_keys))),
        tools_allow=allow,
        tools_deny=tuple(dict.fromkeys((*base.tools_deny, *terms.tools_deny))),
    )


def effective_policy(
    mission: str,
    floor: FloorApproval | Problem,
    constraints: Constraints | Problem,
    files: RootFiles | None = None,
    signing: Signing | None = None,
) -> EffectivePolicy:
    """The rules in force: the mission's `constraints` kept within the `floor` and, where
    the floor requires signed policy, an unsigned loosening not applied (module
    docstring; `files` are the root trust files, `signing` the revisions and their
    signatures). A Problem for either file (missing, does not load) refuses everything."""
    if isinstance(floor, Problem):
        return EffectivePolicy(refusal=f"{floor.path} does not load: {floor.message}")
    if isinstance(constraints, Problem):
        return EffectivePolicy(refusal=constraints.message)
    relpath = doc_path(mission, Kind.CONSTRAINTS)
    problems = [
        Problem(relpath, None, "below-floor", f"{why}; the floor applies", _FLOOR_HINT, "warn")
        for why in below_floor(floor, constraints)
    ]
    terms = _terms(constraints)
    if floor.require_signed_policy:
        terms, problem = _signed_terms(mission, floor, terms, files or {}, signing)
        problems.extend([problem] if problem is not None else [])
    revoked = (floor.revoked_keys, *terms.revoked_keys)
    longest = floor.max_valid_for_seconds or terms.valid_for_seconds
    return replace(
        terms,
        require_signature=floor.require_signature or terms.require_signature,
        auto=tuple(risk for risk in terms.auto if risk not in floor.never_auto),
        valid_for_seconds=min(terms.valid_for_seconds, longest),
        allowed_signers=floor.allowed_signers or terms.allowed_signers,
        revoked_keys=tuple(dict.fromkeys(path for path in revoked if path)),
        policy_signers=floor.policy_signers,
        floor=floor != FloorApproval(),
        problems=tuple(problems),
    )


def _signed_terms(
    mission: str,
    floor: FloorApproval,
    terms: EffectivePolicy,
    files: RootFiles,
    signing: Signing | None,
) -> tuple[EffectivePolicy, Problem | None]:
    """The terms in force where the floor requires signed policy, and the problem of an
    unsigned loosening (not applied: the stricter of it and the last signed revision)."""
    current = signing.current if signing is not None else None
    kept = sorted(signing.history if signing is not None else (), key=lambda r: -r.number)
    base, what, latest = _floor_terms(floor), "the floor (no signed revision)", 0
    for revision in kept:
        signer = _signer(files, floor, mission, revision, signing) if signing else None
        if signer is not None:
            base, what = _terms(revision.record), f"signed revision r{revision.number}"
            latest = revision.number
            break
    unsigned = "unsigned loosening"
    if current is not None and signing is not None:
        signer = _signer(files, floor, mission, current, signing)
        if signer is not None and current.number >= latest:
            return replace(terms, signed_by=signer), None
        if signer is not None:  # an older signed revision put back: a rollback
            unsigned = f"loosening by a rollback to signed r{current.number}"
    looser = loosened(terms, base)
    if not looser:
        return terms, None
    problem = Problem(
        doc_path(mission, Kind.CONSTRAINTS),
        None,
        "policy-unsigned",
        f"{unsigned} ({'; '.join(looser)}): not applied, {what} holds for it",
        f"an admin signs the revision (namespace {POLICY_NAMESPACE}, a key of "
        f"{floor.policy_signers}): docs/approvals.md, Signed policy",
    )
    return _meet(terms, base), problem


def signature_texts(found: Iterable[bytes | Problem]) -> tuple[str, ...]:
    """The texts of the signature files read (unreadable ones vouch for nothing)."""
    return tuple(
        data.decode("utf-8", errors="replace") for data in found if isinstance(data, bytes)
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
    request: ApprovalRequest, decision: Decision, valid_for_seconds: int, now: datetime
) -> str | None:
    """Why a decision's times do not bind (None: they do): it counts only when
    `requested_at <= decided_at <= min(expires_at, now + 60 s)` and `valid_until <=
    decided_at + valid_for_seconds` (of the policy in force)."""
    decided = decision.decided_at
    if decided < request.requested_at.replace(microsecond=0):  # decisions keep whole seconds
        asked = _text(request.requested_at)
        return f"decided_at {_text(decided)} is before the request (requested_at {asked})"
    if request.expires_at is not None and decided > request.expires_at:
        expired = _text(request.expires_at)
        return f"expired: request expired at {expired}, before decided_at {_text(decided)}"
    if decided > now + CLOCK_SKEW:
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
