"""The SMALL workspace (`.small/`) as a source: one row, `small:<folder>`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from store.format.problems import Problem
from store.format.records import Settings
from store.format.row import MissionSummary
from store.sources.base import Quiet
from store.sources.small.layout import HUMAN_KINDS
from store.sources.small.workspace import SmallWorkspace


class SmallSource(Quiet):
    """Routes SMALL paths to a `SmallWorkspace` and shows it as one row."""

    kind = "small"

    def __init__(self, root: Path) -> None:
        self.workspace = SmallWorkspace(root)

    def present(self) -> bool:
        return self.workspace.present

    def owns(self, rel: str) -> bool:
        return self.workspace.owns(rel)

    def apply(self, paths: Iterable[str]) -> set[str]:
        touched: set[str] = set()
        for rel in paths:
            touched |= self.workspace.apply(rel)
        return touched

    def row_ids(self) -> set[str]:
        return {self.workspace.id} if self.workspace.present else set()

    def row(self, row_id: str, now: datetime, settings: Settings) -> MissionSummary | None:
        return self.workspace.summary(now, settings) if row_id in self.row_ids() else None

    def problems_by_row(self) -> dict[str, list[Problem]]:
        return {row_id: self.workspace.problems() for row_id in self.row_ids()}

    def verdicts(self, row_id: str) -> dict[str, str]:
        return self.workspace.verdicts() if row_id in self.row_ids() else {}

    def detail(self, row_id: str) -> str | None:
        return self.kind if row_id in self.row_ids() else None

    def documents(self, row_id: str) -> tuple[str, ...]:
        files = self.workspace.files
        return tuple(files[k].relpath for k in sorted(HUMAN_KINDS)) if self.detail(row_id) else ()

    def use(self, state: object) -> None:
        """Start from a workspace read elsewhere (store.index.prefetch), checked against
        the disk now: a file whose bytes changed since is read again."""
        if isinstance(state, SmallWorkspace) and state.root == self.workspace.root:
            self.workspace = state
            state.load()
