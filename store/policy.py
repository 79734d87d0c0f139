"""The approval policy in force for a mission, one derivation for `authorize()`, `hud
check`, the HUD and `hud decide`.

A native mission's constraints.toml is required: the policy comes from it, so when it
is missing or does not load nothing is authorized (`constraints_missing` says why, and
what the last revision kept in `history/` required).
"""

from __future__ import annotations

from collections.abc import Mapping

from store.layout import Kind, doc_path
from store.problems import Problem
from store.records import Constraints


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
