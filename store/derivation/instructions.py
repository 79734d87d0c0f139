"""Stale instructions: a run that acts on what a human has since changed.

The human's current instructions are intent.toml and constraints.toml as they are now;
when they were edited (`edited_at`) is known. Two things the records can show: a step
that ran after the intent was edited under a plan version written before that (no new
plan took the edit in; a constraints edit, say a budget raised, needs no new plan), and
a tool started after the constraints were edited that they now deny (or leave out of a
non-empty allow list). What an agent keeps in its own memory or prompt
is out of reach (docs/review.md). Pure: reads the index, never a file.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from store.derivation.view import MissionView


class Stale(NamedTuple):
    """An events line that acted on instructions older than the current ones."""

    line: int
    step: str | None
    note: str


def _edited(mission: MissionView) -> tuple[datetime, str] | None:
    """When the intent was last edited, and its revision."""
    record = mission.intent.record if mission.intent is not None else None
    if record is None or record.edited_at is None:
        return None
    return record.edited_at, f"intent.toml (revision {record.revision})"


def stale_instructions(mission: MissionView) -> list[Stale]:
    """Steps that ran under a plan older than the intent's last edit, and denied tools
    used after the constraints' edit (or at all, when they carry no edit time)."""
    found: list[Stale] = []
    edited = _edited(mission)
    if edited is not None:
        at, what = edited
        for step, latest in sorted(mission.step_latest.items()):
            plan = mission.plans.get(latest.plan_version)
            created = plan.record.created_at if plan and plan.record else None
            if latest.at > at and created is not None and created < at:
                note = (
                    f"{step} ran under plan v{latest.plan_version} (written "
                    f"{created:%Y-%m-%d %H:%M}) after {what} was edited "
                    f"({at:%Y-%m-%d %H:%M}): no plan took the edit in"
                )
                found.append(Stale(latest.line, step, note))
    constraints = mission.constraints.record if mission.constraints else None
    if constraints is not None:
        tools = constraints.tools
        since = constraints.edited_at
        for tool, (line, at) in sorted(mission.ledger.tools.items(), key=lambda t: t[1][0]):
            denied = tool in tools.deny or (bool(tools.allow) and tool not in tools.allow)
            if denied and (since is None or at > since):
                found.append(
                    Stale(line, None, f"ran {tool}, which constraints.toml [tools] denies")
                )
    return found
