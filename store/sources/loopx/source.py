"""loopx goals (`.loopx/registry.json`) as a source: one row per goal, `loopx:<goal>`.

Read-only. Any change to a loopx file reads the whole project again (its files are
small and capped): off the event loop first (`read_ahead` captures every file the
load reads, in any root), then `apply` loads from those captures.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from store.format.confined import capture, read_file
from store.format.problems import Problem
from store.format.records import Settings
from store.format.row import MissionSummary
from store.sources.base import Ask, Captures, Quiet
from store.sources.loopx import FOLDER
from store.sources.loopx.goal import Goal, when
from store.sources.loopx.project import WATCH_PREFIX, LoopxProject, load
from store.sources.loopx.row import goal_summary


class LoopxSource(Quiet):
    """The loopx project whose registry is `.loopx/registry.json` under the root."""

    kind = "loopx"

    def __init__(self, root: Path, settings: Callable[[], Settings]) -> None:
        self.root = root
        self.settings = settings
        self.loaded: LoopxProject | None = None

    def present(self) -> bool:
        return self.loaded is not None

    def owns(self, rel: str) -> bool:
        return (
            rel == FOLDER
            or rel.startswith((f"{FOLDER}/", WATCH_PREFIX))
            or (self.loaded is not None and rel in self.loaded.state_files)
        )

    def follows(self, folder: Path) -> bool:
        """True for a folder outside the root that hud.toml's `loopx_roots` allow (all,
        when unset)."""
        allowed = self.settings().loopx_roots
        if allowed is None:
            return True
        roots = [Path(os.path.normpath(self.root / os.path.expanduser(r))) for r in allowed]
        return any(folder == r or r in folder.parents for r in roots)

    def read_ahead(self, paths: list[str]) -> Captures:
        captured: Captures = {}

        def read(root: Path, rel: str, cap: int) -> bytes | Problem:
            found = captured[(str(root), rel)] = capture(root, rel, lambda _f: 0, cap + 1)
            return found if isinstance(found, Problem) else found.data

        load(self.root, read, self.follows)
        return captured

    def apply(self, paths: Iterable[str]) -> set[str]:
        before = self.row_ids()
        self.loaded = load(self.root, read_file, self.follows)
        return before | self.row_ids()

    def goal(self, row_id: str) -> Goal | None:
        return self.loaded.goals.get(row_id) if self.loaded is not None else None

    def row_ids(self) -> set[str]:
        return set(self.loaded.goals) if self.loaded is not None else set()

    def row(self, row_id: str, now: datetime, settings: Settings) -> MissionSummary | None:
        goal = self.goal(row_id)
        return goal_summary(goal, now, settings) if goal is not None else None

    def problems_by_row(self) -> dict[str, list[Problem]]:
        goals = self.loaded.goals if self.loaded is not None else {}
        return {row_id: list(goal.problems) for row_id, goal in goals.items()}

    def loose_problems(self) -> list[Problem]:
        return list(self.loaded.problems) if self.loaded is not None else []

    def detail(self, row_id: str) -> str | None:
        return self.kind if self.goal(row_id) is not None else None

    def asks(self) -> list[Ask]:
        """An open user gate asks a human, as its goal's row counts it; loopx records the
        answer (`loopx todo complete ...`), not the HUD."""
        asks = []
        for row_id in sorted(self.row_ids()):
            goal = self.goal(row_id)
            for gate in goal.gates() if goal is not None else []:
                blocks = f" (blocks {gate.blocks_agent})" if gate.blocks_agent else ""
                asks.append(
                    Ask(
                        row_id=row_id,
                        ask_id=f"gate:{gate.todo_id}",
                        tool="loopx",
                        step=gate.task_class,
                        summary=f"loopx gate: {gate.text}{blocks}",
                        asked_at=when(gate.meta.get("updated_at")),
                    )
                )
        return asks

    def watch_paths(self) -> dict[str, Path]:
        followed = self.loaded.followed if self.loaded is not None else []
        return {f"{WATCH_PREFIX}{n}": folder for n, folder in enumerate(followed)}
