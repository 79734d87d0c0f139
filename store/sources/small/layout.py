"""The SMALL workspace layout: the six files under `.small/`, who owns each, their keys.

SMALL states ownership in each file (`owner:`) and in the protocol: intent and
constraints are human-owned, the HUD may edit them (through `store.writers.human`); plan,
progress and handoff are the agent's, and workspace.small.yml is the CLI's
metadata: the HUD only reads them.
"""

from __future__ import annotations

FILES: dict[str, str] = {
    "intent": "intent.small.yml",
    "constraints": "constraints.small.yml",
    "plan": "plan.small.yml",
    "progress": "progress.small.yml",
    "handoff": "handoff.small.yml",
    "workspace": "workspace.small.yml",
}
"""Kind -> file name under `.small/`."""

KINDS: dict[str, str] = {name: kind for kind, name in FILES.items()}
CANONICAL = frozenset(FILES.values())
REQUIRED = ("intent", "constraints", "plan", "progress", "handoff")
"""The five artifacts `small verify` requires; workspace.small.yml is checked apart."""

OWNERS: dict[str, str] = {
    "intent": "human",
    "constraints": "human",
    "plan": "agent",
    "progress": "agent",
    "handoff": "agent",
    "workspace": "agent",
}
HUMAN_KINDS = frozenset(kind for kind, owner in OWNERS.items() if owner == "human")
"""The only SMALL files the HUD ever writes."""

_BASE = frozenset({"small_version", "owner"})
TOP_LEVEL_KEYS: dict[str, frozenset[str]] = {
    "intent": _BASE | {"intent", "scope", "success_criteria"},
    "constraints": _BASE | {"constraints"},
    "plan": _BASE | {"tasks"},
    "progress": _BASE | {"entries"},
    "handoff": _BASE | {"summary", "resume", "links", "replayId", "run"},
    "workspace": _BASE | {"kind", "created_at", "updated_at", "run"},
}

SMALL_DIR = ".small"
ID_PREFIX = "small:"
