"""The interface every source of overview rows implements (native, SMALL, loopexec, loopx).

A state directory holds state written by one or more runtimes. Each is read by one
`Source`: the workspace routes every changed path to the first source that `owns` it,
asks each for its rows and problems, and the app and `hud check` iterate over
sources without naming one. A source only reads: nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, Self

from store.format.confined import Captured
from store.format.problems import Problem
from store.format.records import Settings
from store.format.row import MissionSummary

Captures = dict[tuple[str, str], Captured | Problem]
"""Files read ahead off the event loop, by (root, relative path): see `confined.serving`."""


@dataclass(frozen=True, slots=True)
class Ask:
    """A question a source's runtime puts to a human and records the answer to itself
    (a loopexec escalation, a loopx user gate): in the approvals queue, it opens its row."""

    row_id: str
    ask_id: str
    """Its id in the queue, one per question of the row."""
    tool: str
    step: str
    summary: str
    asked_at: datetime | None


class ReadAhead(Protocol):
    """A source's state read elsewhere while the HUD starts (a prefetch child)."""

    def row(self) -> MissionSummary | None:
        """Its overview row, as soon as there is one; None if none came."""

    def result(self) -> object:
        """The state, for `Source.use`; None if none came."""

    def close(self) -> None:
        """End it, whatever it has done."""


class Source(Protocol):
    """One kind of durable agent state under a state directory."""

    kind: str
    """Which detail screen shows its rows ("mission", "small", "loopexec", "loopx"): the
    key of the HUD's table of detail screens (`hud.screens.details.DETAIL_SCREENS`), and
    its name in the registry (`store.sources.registry.KINDS`, which holds its folders)."""

    def present(self) -> bool:
        """True when there is something of it under the directory (rows or problems)."""

    def owns(self, rel: str) -> bool:
        """True for a changed path this source reads."""

    def read_ahead(self, paths: list[str]) -> Captures:
        """Files `apply(paths)` reads beyond the changed paths themselves (which the
        workspace captures), read now: called off the event loop."""

    def apply(self, paths: Iterable[str]) -> set[str]:
        """Bring the index up to date for these owned paths; returns the rows touched."""

    def row_ids(self) -> set[str]:
        """The id of every overview row it has."""

    def row(self, row_id: str, now: datetime, settings: Settings) -> MissionSummary | None:
        """The overview row `row_id`, None if it has no such row."""

    def problems_by_row(self) -> dict[str, list[Problem]]:
        """Its problems under the row they belong to."""

    def loose_problems(self) -> list[Problem]:
        """Its problems that belong to no row."""

    def verdicts(self, row_id: str) -> dict[str, str]:
        """A row's verdict per check, for `hud check` (empty when the source has none)."""

    def detail(self, row_id: str) -> str | None:
        """The kind of detail screen that renders `row_id`, None if it has no such row."""

    def watch_paths(self) -> dict[str, Path]:
        """Folders outside the state directory the watcher must watch, by the prefix
        their changed paths take (`<prefix>/<path>`)."""

    def documents(self, row_id: str) -> tuple[str, ...]:
        """The human-writable files of a row (relative paths), if any."""

    def asks(self) -> list[Ask]:
        """Its open questions to a human, for the approvals queue."""

    def use(self, state: object) -> None:
        """Start from state read elsewhere (a prefetch child), checked against the disk
        now; state that is not this source's is ignored."""

    def take(self, part: Self) -> tuple[Self, set[str]]:
        """Absorb `part`, the same source as built by a partial scan: the source to keep
        and the rows it touched."""


class Quiet:
    """What a source has none of, by default: reads beyond its changed paths, problems
    of no row, verdicts, folders outside the root, human-writable documents, questions
    to a human. And how it takes a partial scan's part: whole, if the part found
    anything of it."""

    def present(self) -> bool:
        raise NotImplementedError

    def row_ids(self) -> set[str]:
        raise NotImplementedError

    def read_ahead(self, paths: list[str]) -> Captures:
        return {}

    def loose_problems(self) -> list[Problem]:
        return []

    def verdicts(self, row_id: str) -> dict[str, str]:
        return {}

    def watch_paths(self) -> dict[str, Path]:
        return {}

    def documents(self, row_id: str) -> tuple[str, ...]:
        return ()

    def asks(self) -> list[Ask]:
        return []

    def use(self, state: object) -> None:
        """Nothing is read ahead for it elsewhere."""

    def take(self, part: Self) -> tuple[Self, set[str]]:
        """The part, with all its rows, if it found anything of this source; else this."""
        if part.present():
            return part, part.row_ids()
        return self, set()
