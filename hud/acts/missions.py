"""Create a mission: an id from its title, then its intent.toml and constraints.toml."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hud.acts.session import AlreadyExists, HumanWriteError, Session
from store.format.layout import safe_mission_id
from store.index.workspace import Workspace


def mission_slug(title: str) -> str:
    """A mission id from a title: ASCII, lower case, words joined by `-`; `mission` if none."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:56].strip("-") or "mission"


def unique_mission_id(title: str, taken: Callable[[str], bool]) -> str:
    """The slug of `title`, or the slug with -2, -3 ... when `taken`."""
    base = mission_slug(title)
    number = 1
    while True:
        candidate = base if number == 1 else f"{base}-{number}"
        if safe_mission_id(candidate) and not taken(candidate):
            return candidate
        number += 1


def mission_taken(workspace: Workspace, mission_id: str) -> bool:
    """A known mission, or any folder or file of that name under missions/."""
    root = workspace.root
    return mission_id in workspace.missions or os.path.lexists(root / "missions" / mission_id)


@dataclass(frozen=True, slots=True)
class NewMission:
    """What the new-mission form collected, already typed."""

    title: str
    objective: str = ""
    non_goals: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    success_evidence: tuple[str, ...] = ()
    open_decisions: tuple[str, ...] = ()
    budget: Mapping[str, Any] | None = None

    def intent(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "objective": self.objective,
            "non_goals": list(self.non_goals),
            "success_evidence": list(self.success_evidence),
            "open_decisions": list(self.open_decisions),
            "scope": {"include": list(self.include), "exclude": list(self.exclude)},
        }

    def constraints(self) -> dict[str, Any]:
        limits = {k: v for k, v in (self.budget or {}).items() if v is not None}
        return {"budget": limits}


def create_mission(session: Session, form: NewMission) -> str:
    """Create the mission's intent.toml and constraints.toml; returns its id.

    Raises HumanWriteError (Invalid, ...) when the writer refuses, or in read-only mode.
    """
    writer = session.writer
    if writer is None:
        raise HumanWriteError("", "read-only: nothing is written")
    workspace = session.workspace
    skip: set[str] = set()
    for _ in range(100):
        mission_id = unique_mission_id(
            form.title, lambda m: m in skip or mission_taken(workspace, m)
        )
        try:
            saved = writer.create_mission(mission_id, form.intent(), form.constraints())
        except AlreadyExists:
            skip.add(mission_id)  # another writer took this id first: try the next
            continue
        session.wrote([s.relpath for s in saved])
        return mission_id
    raise HumanWriteError("", "no free mission id for this title")
