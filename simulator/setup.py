"""The human side of a new mission: intent.toml and constraints.toml.

The simulator plays the person who sets a mission up, so it writes these two human
records once, when it creates the mission. It never writes decisions.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import tomli_w

from store.format.layout import Kind, doc_path, mission_dir, safe_mission_id
from store.format.records import Constraints, Intent, validate
from store.writers.agent import AlreadyExists, write_once

SETUP_BY = "sim-operator"


@dataclass(frozen=True, slots=True)
class Brief:
    """What a human asked for: the intent and the limits of one scenario's mission."""

    title: str
    objective: str
    success_evidence: tuple[str, ...]
    auto: tuple[str, ...]
    usd: float
    tokens: int
    steps: int
    wall_seconds: int = 4 * 3600
    deadline_hours: int = 72
    non_goals: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    open_decisions: tuple[str, ...] = ()
    rules: tuple[tuple[str, str], ...] = field(default=())
    valid_for_seconds: int = 3600
    max_attempts_per_step: int = 3


def create_mission(root: Path, base: str) -> str:
    """Create a new mission folder named `base`, or `base-2`, `base-3` ...; its id."""
    (root / "missions").mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        mission = base if number == 1 else f"{base}-{number}"
        if not safe_mission_id(mission):
            raise ValueError(f"unsafe mission id {mission!r}")
        try:
            (root / mission_dir(mission)).mkdir()
        except FileExistsError:
            number += 1
            continue
        return mission


def write_setup(root: Path, mission: str, brief: Brief, now: datetime) -> None:
    """Write intent.toml and constraints.toml (write-once; validated first)."""
    intent: dict[str, Any] = {
        "schema": 1,
        "title": brief.title,
        "objective": brief.objective,
        "non_goals": list(brief.non_goals),
        "scope": {"include": list(brief.include), "exclude": list(brief.exclude)},
        "success_evidence": list(brief.success_evidence),
        "open_decisions": list(brief.open_decisions),
        "created_by": SETUP_BY,
        "created_at": now,
        "revision": 1,
    }
    constraints: dict[str, Any] = {
        "schema": 1,
        "revision": 1,
        "rule": [{"id": rid, "rule": text, "severity": "error"} for rid, text in brief.rules],
        "budget": {
            "usd": brief.usd,
            "tokens": brief.tokens,
            "steps": brief.steps,
            "wall_seconds": brief.wall_seconds,
            "deadline": now + timedelta(hours=brief.deadline_hours),
            "max_attempts_per_step": brief.max_attempts_per_step,
        },
        "approval": {"auto": list(brief.auto), "valid_for_seconds": brief.valid_for_seconds},
    }
    validate(Intent, intent)
    validate(Constraints, constraints)
    for kind, doc in ((Kind.INTENT, intent), (Kind.CONSTRAINTS, constraints)):
        with contextlib.suppress(AlreadyExists):  # a human wrote it first: theirs stands
            write_once(root / doc_path(mission, kind), tomli_w.dumps(doc).encode("utf-8"))
