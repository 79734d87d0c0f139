"""The approval policy in force for a mission, one derivation for `authorize()`, `hud
check`, the HUD and `hud decide`.

A native mission's constraints.toml is required: the policy comes from it, so when it
is missing or does not load nothing is authorized (`constraints_missing` says why, and
what the last revision kept in `history/` required).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from store.layout import Kind, doc_path
from store.problems import Problem
from store.records import ApprovalRequest, Constraints, Decision


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
