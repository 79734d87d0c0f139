"""Signed decisions: the payload a decision's signature covers, and what it is worth.

The payload is the canonical JSON (`store.format.records.canonical_json`: keys sorted,
separators `,` `:`, UTF-8) of `mission`, `request`, `digest`, `decision`, `reason`,
`decided_at`, `expires_at` (the decision's `valid_until`, or null), `approver` (its
`decided_by`) and `origin`; times are UTC, `2026-03-01T12:00:00Z` (fractions of a second
only when there are some). It is signed as SSHSIG in the namespace NAMESPACE
(`store.trust.sshsig`), so `ssh-keygen -Y verify` checks it too (`hud decide --print-payload`
prints it).

Version 2 of the payload (what the HUD and `hud decide` sign) adds `"version": 2` and
`workspace`, the id of the state directory (workspace.toml), so a decision copied into
another state directory does not verify there. A version 1 signature (no `version`, no
`workspace`) still verifies where signatures are not required; where they are, only
version 2 counts.

`signature_state` is the one derivation of a decision's signature for the HUD, `hud
check` and `authorize()`: *valid* (the signature verifies, its key is listed in the
policy's allowed-signers file for a principal pattern matching `decided_by`, in the
namespace, valid at `decided_at` and now, not revoked), *unvouched* (it matches its
payload, but the policy names no allowed-signers file), *invalid* (why) or *unsigned*; with
`[approval] require_signature`, only *valid* authorizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from store.format.layout import WORKSPACE_FILE
from store.format.problems import Problem
from store.format.records import Decision, canonical_json
from store.trust import sshsig
from store.trust.policy import EffectivePolicy, RootFiles, workspace_id
from store.trust.signers import AllowedSigners, Revoked, parse_allowed, parse_revoked, trusted

NAMESPACE = "operator-hud-approval@v1"
SignerFiles = RootFiles


def utc_text(moment: datetime) -> str:
    """A time as the payload writes it: UTC, `Z`."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def payload(
    mission: str,
    request: str,
    digest: str,
    decision: str,
    reason: str,
    decided_by: str,
    decided_at: datetime,
    valid_until: datetime | None,
    origin: str,
    workspace: str | None = None,
) -> bytes:
    """The bytes a decision's signature covers: version 2 with the `workspace` id, else
    version 1 (no workspace: read only where signatures are not required)."""
    bound = {"version": 2, "workspace": workspace} if workspace is not None else {}
    return canonical_json(
        {
            **bound,
            "mission": mission,
            "request": request,
            "digest": digest,
            "decision": decision,
            "reason": reason,
            "decided_at": utc_text(decided_at),
            "expires_at": utc_text(valid_until) if valid_until is not None else None,
            "approver": decided_by,
            "origin": origin,
        }
    )


def decision_payload(mission: str, decision: Decision, workspace: str | None = None) -> bytes:
    """The payload of a decision as written (version 2 with `workspace`, else 1)."""
    return payload(
        mission,
        decision.request,
        decision.digest,
        decision.decision,
        decision.reason,
        decision.decided_by,
        decision.decided_at,
        decision.valid_until,
        decision.origin,
        workspace,
    )


@dataclass(frozen=True, slots=True)
class Policy:
    """What the policy in force (`store.trust.policy.EffectivePolicy`) says about signatures,
    with the files it names."""

    required: bool = False
    allowed: AllowedSigners | Problem | None = None
    """None: the policy names no allowed-signers file."""
    revoked: tuple[Revoked | Problem, ...] = ()
    workspace: str | Problem | None = None
    """The state directory's id (workspace.toml); None: there is none yet."""


def _named(relpath: str, files: SignerFiles) -> bytes | Problem:
    """A signers file's bytes, or the Problem that it is missing or unreadable."""
    found = files.get(relpath)
    if found is not None:
        return found
    return Problem(
        relpath,
        None,
        "signers-missing",
        f"{relpath}, named in [approval] of constraints.toml or policy.toml, does not exist",
        "create it, or fix the path in constraints.toml (or policy.toml)",
    )


def policy(rules: EffectivePolicy, files: SignerFiles) -> Policy:
    """The signature policy of a mission: the rules in force, their files read."""
    allowed: AllowedSigners | Problem | None = None
    if rules.allowed_signers is not None:
        found = _named(rules.allowed_signers, files)
        allowed = (
            found if isinstance(found, Problem) else parse_allowed(rules.allowed_signers, found)
        )
    revoked = []
    for relpath in rules.revoked_keys:
        found = _named(relpath, files)
        revoked.append(found if isinstance(found, Problem) else parse_revoked(relpath, found))
    return Policy(rules.require_signature, allowed, tuple(revoked), workspace_id(files))


@dataclass(frozen=True, slots=True)
class SignatureState:
    """A decision's signature: valid (by `principal`, key `fingerprint`), invalid (`why`)
    or unsigned; `required` when the mission requires signatures."""

    kind: Literal["valid", "invalid", "unvouched", "unsigned"]
    """`unvouched`: the signature matches the payload, but the policy names no
    allowed-signers file, so nothing says whose key it is."""
    required: bool
    principal: str = ""
    fingerprint: str = ""
    why: str = ""

    @property
    def authorizes(self) -> bool:
        """Whether `authorize()` lets the decision through: a valid signature where one
        is required; anything where none is (whoever can edit a decision can also
        remove its signature, so an invalid one adds no protection there)."""
        return self.kind == "valid" or not self.required

    def describe(self) -> str:
        """One line for people: `signed, valid: alice (SHA256:...)`."""
        if self.kind == "valid":
            return f"signed, valid: {self.principal} ({self.fingerprint})"
        if self.kind == "invalid":
            return f"signature INVALID: {self.why}"
        if self.kind == "unvouched":
            return f"signed by a key no file vouches for ({self.fingerprint})"
        return "unsigned — this mission requires signatures" if self.required else "unsigned"


def signature_state(
    mission: str, decision: Decision, rules: Policy, now: datetime | None = None
) -> SignatureState:
    """What `decision`'s signature is worth under the mission's `rules` at `now` (default:
    the current time): the signer's key must be valid both at `decided_at` and now."""
    if decision.signature is None:
        return SignatureState("unsigned", rules.required)
    try:
        parsed = sshsig.parse(decision.signature)
        _verify(parsed, mission, decision, rules)
        if rules.allowed is None:
            return SignatureState(
                "unvouched", rules.required, fingerprint=parsed.fingerprint, why=UNVOUCHED
            )
        _trust(parsed, decision, rules, now or datetime.now(UTC))
    except ValueError as exc:
        return SignatureState("invalid", rules.required, why=str(exc))
    return SignatureState("valid", rules.required, decision.decided_by, parsed.fingerprint)


def _verify(parsed: sshsig.Parsed, mission: str, decision: Decision, rules: Policy) -> None:
    """Raise ValueError unless `parsed` signs the decision's payload: version 2 (bound to
    this state directory), or version 1 where signatures are not required."""
    workspace = rules.workspace
    if isinstance(workspace, str):
        try:
            sshsig.verify(parsed, decision_payload(mission, decision, workspace), NAMESPACE)
            return
        except sshsig.SigError as exc:
            if str(exc) != sshsig.MISMATCH:
                raise
    elif rules.required:
        why = workspace.message if isinstance(workspace, Problem) else "it does not exist"
        raise ValueError(
            f"{WORKSPACE_FILE} names no state directory id ({why}): a signature cannot be "
            "bound to this state directory"
        )
    try:
        sshsig.verify(parsed, decision_payload(mission, decision), NAMESPACE)
    except sshsig.SigError as exc:
        if str(exc) != sshsig.MISMATCH:
            raise
        raise ValueError(
            "the signature does not match the payload: edited after signing, or signed in "
            "another state directory"
        ) from None
    if rules.required:
        raise ValueError(
            "it signs a version 1 payload, bound to no state directory: where signatures "
            "are required only version 2 counts; decide it again"
        )


UNVOUCHED = "the approval policy names no allowed_signers file to check it against"


def _trust(parsed: sshsig.Parsed, decision: Decision, rules: Policy, now: datetime) -> None:
    """Raise ValueError unless the rules trust the signer of `parsed` as its approver, at
    `decided_at` (which the signer chose) and `now` (as `ssh-keygen -Y verify` checks)."""
    allowed = rules.allowed
    if allowed is None:
        raise ValueError(UNVOUCHED)
    if isinstance(allowed, Problem):
        raise ValueError(f"{allowed.path}: {allowed.message}")
    for revoked in rules.revoked:
        if isinstance(revoked, Problem):
            raise ValueError(f"cannot tell whether its key is revoked: {revoked.message}")
        if parsed.key.public_data in revoked.keys:
            raise ValueError(f"its key {parsed.fingerprint} is revoked ({revoked.relpath})")
    for at, when in ((decision.decided_at, "at decided_at"), (now, "now")):
        try:
            trusted(allowed, parsed.key, decision.decided_by, NAMESPACE, at)
        except ValueError as exc:
            raise ValueError(f"{exc} (checked {when}, {utc_text(at)})") from None
