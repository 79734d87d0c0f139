"""Adjust one budget limit: raise, lower or remove it in constraints.toml, changing only
its line (`store.writers.toml_edit`); a conflict re-applies the change on top of theirs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hud.acts.documents import Choice, EditAsk, load_existing
from hud.acts.limits import LIMITS
from hud.acts.session import Conflict, HumanWriteError, Saved, Session
from store.format.layout import Kind, doc_path
from store.format.records import Constraints
from store.index.workspace import Workspace
from store.writers.toml_edit import set_table_value

BUDGET_CHOICES: tuple[Choice, ...] = (("apply the change on top of theirs", "retry"),)


@dataclass(frozen=True, slots=True)
class LimitNow:
    """One budget limit as the adjust dialog shows it."""

    key: str
    value: Any
    used: str


class BudgetAsk(EditAsk, Protocol):
    async def choose_limit(
        self, mission_id: str, limits: Sequence[LimitNow], key: str | None
    ) -> tuple[str, Any] | None:
        """The limit the human picked and its new value (None: remove it); None: gave up."""
        ...


def budget_now(workspace: Workspace, mission_id: str, limits: Mapping[str, Any]) -> list[LimitNow]:
    """Each limit with its current value and, where known, what was used."""
    mission = workspace.missions.get(mission_id)
    used: dict[str, str] = {}
    if mission is not None and mission.usage:
        last = mission.usage[-1]
        used = {"usd": f"${last.usd:,.2f}", "tokens": f"{last.tokens:,}", "steps": f"{last.steps}"}
    if mission is not None and mission.first_event_at and mission.last_event_at:
        elapsed = (mission.last_event_at - mission.first_event_at).total_seconds()
        used["wall_seconds"] = f"{elapsed:,.0f}s"
    return [LimitNow(spec.key, limits.get(spec.key), used.get(spec.key, "")) for spec in LIMITS]


async def adjust_budget(
    session: Session, ask: BudgetAsk, mission_id: str, key: str | None = None
) -> Saved | None:
    """Raise, lower or remove one `[budget]` limit in constraints.toml, changing only its line."""
    writer = session.writer
    if writer is None:
        return None
    relpath = doc_path(mission_id, Kind.CONSTRAINTS)
    loaded = await load_existing(session, relpath, Constraints)
    if loaded is not None and (loaded.record is None or loaded.text is None):
        session.notify(
            f"{relpath} has problems; fix it first with E (edit constraints)",
            severity="error",
        )
        return None
    limits: dict[str, Any] = {}
    if loaded is not None and loaded.record is not None:
        limits = loaded.record.budget.model_dump(exclude_none=True)
    choice = await ask.choose_limit(
        mission_id, budget_now(session.workspace, mission_id, limits), key
    )
    if choice is None:
        return None
    key, value = choice
    if loaded is None or loaded.text is None or loaded.sha256 is None:
        try:
            saved = writer.create_document(relpath, {"budget": {key: value}})
        except HumanWriteError as exc:
            session.notify(str(exc), severity="error")
            return None
        session.announce(saved)
        return saved
    text, sha = loaded.text, loaded.sha256
    while True:
        edited = set_table_value(text, "budget", key, value)
        if edited is None:
            edit = session.key("mission.edit_constraints")
            session.notify(
                f"cannot change [budget] {key} in place; edit constraints"
                + (f" with {edit}" if edit else ""),
                severity="error",
            )
            return None
        if edited == text:
            session.notify(f"budget {key}: unchanged; nothing written")
            return None
        try:
            saved = writer.replace(relpath, edited, sha)
        except Conflict as exc:
            if exc.theirs_sha256 is None:
                session.notify(str(exc), severity="error")
                return None
            if await ask.resolve_conflict(exc, BUDGET_CHOICES) is None:
                return None
            text, sha = exc.theirs, exc.theirs_sha256
            continue
        except HumanWriteError as exc:
            session.notify(str(exc), severity="error")
            return None
        session.announce(saved)
        return saved
