"""The first scan's paths in batches of whole missions, as the walk finds them: the first
rows are read after a screenful of missions is walked, not after the whole directory.

The walk (`store.index.workspace.Workspace.walk`) lists a folder's subfolders before its
siblings, so a mission's paths come together; a batch is sent when the walk has moved
past its last mission. Should a mission's paths come again later, it is sent again,
whole, in the last batch (the index then takes it whole, replacing the first).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

MISSIONS = "missions"


@dataclass
class Batch:
    """Paths of whole missions, and the other paths walked before them."""

    missions: list[str] = field(default_factory=list)
    """The missions' ids."""
    paths: list[str] = field(default_factory=list)
    """Every path of those missions."""
    other: list[str] = field(default_factory=list)
    """Paths outside `missions/<id>/` (loose files, signers, other sources)."""


def batches(
    paths: Iterable[str], first: int, size: int, most: int | None = None
) -> Iterator[Batch]:
    """`paths` as batches of `first` missions, then `size`, each batch after twice the
    one before up to `most` (the last may be smaller): what each batch costs the owner
    whatever its size (the rows re-sorted, the header counted) is paid fewer times in a
    large directory, and no batch holds the owner longer than `most` missions do."""
    walked: dict[str, list[str]] = {}
    batch, limit, current, sent = Batch(), first, "", False
    late: set[str] = set()
    for rel in paths:
        parts = rel.split("/", 2)
        if len(parts) < 3 or parts[0] != MISSIONS:
            batch.other.append(rel)
            continue
        mission = parts[1]
        if mission != current:
            current = mission
            if len(batch.missions) >= limit and mission not in batch.missions:
                yield _filled(batch, walked)
                batch, limit = Batch(), min(2 * limit, most or size) if sent else size
                sent = True
            if mission not in walked:
                batch.missions.append(mission)
            elif mission not in batch.missions:
                late.add(mission)
        walked.setdefault(mission, []).append(rel)
    yield _filled(batch, walked)
    if late:
        yield _filled(Batch(sorted(late)), walked)


def _filled(batch: Batch, walked: dict[str, list[str]]) -> Batch:
    batch.paths = [rel for mission in batch.missions for rel in walked[mission]]
    return batch
