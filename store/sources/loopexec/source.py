"""loopexec runs (`.loopexec/`) as a source: one row per run, `loopexec:<run>`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from store.format.problems import Problem
from store.format.records import Settings
from store.format.row import MissionSummary
from store.sources.base import Ask, Quiet
from store.sources.loopexec.runs import ID_PREFIX, LoopexecDir

ESCALATION = "escalation"
"""The id of a run's open escalation in the approvals queue (one per run)."""


class LoopexecSource(Quiet):
    """Routes `.loopexec/` paths to a `LoopexecDir`; a row per run."""

    kind = "loopexec"

    def __init__(self, root: Path) -> None:
        self.dir = LoopexecDir(root)

    def present(self) -> bool:
        return not self.dir.empty

    def owns(self, rel: str) -> bool:
        return self.dir.owns(rel)

    def apply(self, paths: Iterable[str]) -> set[str]:
        touched: set[str] = set()
        for rel in paths:
            touched |= self.dir.apply(rel)
        return touched

    def row_ids(self) -> set[str]:
        return {ID_PREFIX + run_id for run_id in self.dir.runs}

    def row(self, row_id: str, now: datetime, settings: Settings) -> MissionSummary | None:
        run = self.dir.run_of(row_id)
        return self.dir.summary(run, now, settings) if run is not None else None

    def problems_by_row(self) -> dict[str, list[Problem]]:
        return self.dir.problems_by_id()

    def loose_problems(self) -> list[Problem]:
        return self.dir.loose_problems()

    def detail(self, row_id: str) -> str | None:
        return self.kind if self.dir.run_of(row_id) is not None else None

    def asks(self) -> list[Ask]:
        """An open escalation asks a human; loopexec records the answer, not the HUD."""
        asks = []
        for run in self.dir.runs.values():
            if not self.dir.escalation_open(run):
                continue
            packet = run.escalation or {}
            reason = packet.get("halt_reason")
            said = f"loopexec escalated: {reason}" if isinstance(reason, str) else "escalated"
            asks.append(
                Ask(
                    row_id=f"{ID_PREFIX}{run.id}",
                    ask_id=ESCALATION,
                    tool="loopexec",
                    step=str(packet.get("iteration", "")),
                    summary=said,
                    asked_at=self.dir.last_activity(run),
                )
            )
        return asks
