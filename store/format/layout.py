"""The one table from path pattern to record kind and owner.

Ownership is visible in the file name: `.toml` is human-owned, `.json`/`.jsonl`
machine-owned. `store.writers.human` refuses any path this table does not mark human.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Owner(StrEnum):
    HUMAN = "human"
    AGENT = "agent"
    SYSTEM = "system"
    ADMIN = "admin"
    """Written by the admin by hand, never by the HUD (the workspace policy floor)."""


class Kind(StrEnum):
    SETTINGS = "settings"
    INTENT = "intent"
    CONSTRAINTS = "constraints"
    HISTORY = "history"
    PLAN = "plan"
    EVENTS = "events"
    EVIDENCE = "evidence"
    REQUEST = "request"
    DECISION = "decision"
    LEASE = "lease"
    HANDOFF = "handoff"
    ARTIFACT = "artifact"
    SIGNERS = "signers"
    WORKSPACE = "workspace"
    POLICY = "policy"
    POLICY_SIG = "policy_sig"


# The one id check. An id names a file or folder, so it never holds `..`: no dot
# follows a dot (a look-behind: Python `re` only, so pydantic is given the compiled
# patterns below). Every path pattern of the table embeds these, so `classify` never
# yields an unsafe id.
MISSION_ID = r"[a-z0-9](?:[a-z0-9_-]|(?<!\.)\.){0,63}"
REQUEST_ID = r"[A-Za-z0-9](?:[A-Za-z0-9_-]|(?<!\.)\.){0,127}"
MISSION_ID_RE = re.compile(rf"^{MISSION_ID}\Z")
REQUEST_ID_RE = re.compile(rf"^{REQUEST_ID}\Z")
SIGNERS_FILE_RE = re.compile(rf"^signers/{REQUEST_ID}\Z")
"""An allowed-signers or revoked-keys file (`[approval]` of constraints.toml names it)."""
WORKSPACE_FILE = "workspace.toml"
"""The state directory's identity (`id`), created once, bound into signed decisions."""
POLICY_FILE = "policy.toml"
"""The workspace policy floor (admin-owned; `store.trust.policy`)."""
TRUST_FILE_RE = re.compile(rf"^(?:signers/{REQUEST_ID}|workspace\.toml|policy\.toml)\Z")
"""The files of the state directory's root that every mission's approval policy reads."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of the layout table."""

    kind: Kind
    owner: Owner
    pattern: re.Pattern[str]
    example: str


def _m(rest: str) -> re.Pattern[str]:
    return re.compile(rf"^missions/(?P<mission>{MISSION_ID})/{rest}$")


TABLE: tuple[Entry, ...] = (
    Entry(Kind.SETTINGS, Owner.HUMAN, re.compile(r"^hud\.toml$"), "hud.toml"),
    Entry(Kind.WORKSPACE, Owner.HUMAN, re.compile(r"^workspace\.toml$"), WORKSPACE_FILE),
    Entry(Kind.POLICY, Owner.ADMIN, re.compile(r"^policy\.toml$"), POLICY_FILE),
    Entry(Kind.INTENT, Owner.HUMAN, _m(r"intent\.toml"), "missions/<id>/intent.toml"),
    Entry(
        Kind.CONSTRAINTS,
        Owner.HUMAN,
        _m(r"constraints\.toml"),
        "missions/<id>/constraints.toml",
    ),
    Entry(
        Kind.HISTORY,
        Owner.HUMAN,
        _m(r"history/(?P<name>(?:intent|constraints)\.r(?P<revision>[0-9]+)\.toml)"),
        "missions/<id>/history/intent.r<N>.toml",
    ),
    Entry(Kind.PLAN, Owner.AGENT, _m(r"plan/v(?P<version>[1-9][0-9]*)\.json"), "plan/v<N>.json"),
    Entry(Kind.EVENTS, Owner.AGENT, _m(r"events\.jsonl"), "missions/<id>/events.jsonl"),
    Entry(Kind.EVIDENCE, Owner.AGENT, _m(r"evidence\.jsonl"), "missions/<id>/evidence.jsonl"),
    Entry(
        Kind.REQUEST,
        Owner.AGENT,
        _m(rf"approvals/(?P<request>{REQUEST_ID})\.json"),
        "missions/<id>/approvals/<id>.json",
    ),
    Entry(
        Kind.DECISION,
        Owner.HUMAN,
        _m(rf"approvals/(?P<request>{REQUEST_ID})\.toml"),
        "missions/<id>/approvals/<id>.toml",
    ),
    Entry(
        Kind.LEASE,
        Owner.AGENT,
        _m(rf"approvals/(?P<request>{REQUEST_ID})\.wait"),
        "missions/<id>/approvals/<id>.wait",
    ),
    Entry(
        Kind.POLICY_SIG,
        Owner.ADMIN,
        _m(r"(?:history/constraints\.r[0-9]+\.toml|constraints\.toml)\.sig"),
        "missions/<id>/constraints.toml.sig",
    ),
    Entry(Kind.HANDOFF, Owner.SYSTEM, _m(r"handoff\.json"), "missions/<id>/handoff.json"),
    Entry(Kind.ARTIFACT, Owner.AGENT, _m(r"artifacts/(?P<name>.+)"), "missions/<id>/artifacts/..."),
    Entry(Kind.SIGNERS, Owner.HUMAN, SIGNERS_FILE_RE, "signers/<name>"),
)

# Directories that the layout expects; anything else is an unknown file or folder.
KNOWN_DIRS = re.compile(
    rf"^(signers|missions|missions/{MISSION_ID}(/(plan|approvals|history|artifacts(/.*)?))?)$"
)

# Transient files: store.writers.human's temp files and agents' lock files, never records.
_TRANSIENT = re.compile(r"(^|/)\.[^/]*\.tmp[^/]*$|\.lock$")


@dataclass(frozen=True, slots=True)
class Located:
    """A path classified by the table, with the pattern's named parts."""

    relpath: str
    kind: Kind
    owner: Owner
    mission: str | None
    parts: dict[str, str]


def classify(relpath: str) -> Located | None:
    """The record kind and owner of a path relative to STATE_DIR, or None if unknown."""
    for entry in TABLE:
        match = entry.pattern.fullmatch(relpath)  # `$` alone would let "r1.json\n" in
        if match:
            parts = {k: v for k, v in match.groupdict().items() if v is not None}
            mission = parts.pop("mission", None)
            return Located(relpath, entry.kind, entry.owner, mission, parts)
    return None


def is_transient(relpath: str) -> bool:
    """True for temp and lock files that are never records."""
    return bool(_TRANSIENT.search(relpath))


def is_human(relpath: str) -> bool:
    """True if the table marks this path human-owned (the only ones the HUD may write)."""
    located = classify(relpath)
    return located is not None and located.owner is Owner.HUMAN


def safe_mission_id(value: str) -> bool:
    return bool(MISSION_ID_RE.match(value))


def safe_request_id(value: str) -> bool:
    return bool(REQUEST_ID_RE.match(value))


def unsafe_id(mission: str, request: str | None = None) -> str | None:
    """Why `mission` (or `request`) cannot be an id, or None when they are safe."""
    if not safe_mission_id(mission):
        return (
            f"unsafe mission id {mission!r}: a mission id is 1-64 of a-z, 0-9, '.', '_', '-', "
            "starts with a letter or digit and holds no '..'"
        )
    if request is not None and not safe_request_id(request):
        return (
            f"unsafe request id {request!r}: a request id is 1-128 of A-Z, a-z, 0-9, '.', "
            "'_', '-', starts with a letter or digit and holds no '..'"
        )
    return None


def mission_dir(mission: str) -> str:
    return f"missions/{mission}"


def plan_path(mission: str, version: int) -> str:
    return f"missions/{mission}/plan/v{version}.json"


def request_path(mission: str, request: str) -> str:
    return f"missions/{mission}/approvals/{request}.json"


def decision_path(mission: str, request: str) -> str:
    return f"missions/{mission}/approvals/{request}.toml"


def lease_path(mission: str, request: str) -> str:
    """The waiter's lease on a request (`store.derivation.lease`)."""
    return f"missions/{mission}/approvals/{request}.wait"


def log_path(mission: str, kind: Kind) -> str:
    return f"missions/{mission}/{kind.value}.jsonl"


def doc_path(mission: str, kind: Kind) -> str:
    """intent.toml, constraints.toml or handoff.json of a mission."""
    suffix = "json" if kind is Kind.HANDOFF else "toml"
    return f"missions/{mission}/{kind.value}.{suffix}"


def history_path(mission: str, kind: Kind, revision: int) -> str:
    return f"missions/{mission}/history/{kind.value}.r{revision}.toml"
