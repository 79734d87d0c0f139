"""Words around numbers and names: `1 problem`, `2 problems`; ids cut yet kept apart."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 problem`, `0 problems`, `1,200 entries` (`many` when adding an s is wrong)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def apart(values: Iterable[str], width: int) -> dict[str, str]:
    """Each value as shown in `width` cells, no two values alike.

    A value that fits is kept whole. A longer one keeps as much of its start as it can
    and as much of its end as it needs to differ from every other value:
    `deploy-gateway-2` and `deploy-gateway-3` in 10 cells are `deploy-g…2` and
    `deploy-g…3`, not `deploy-ga…` twice.
    """
    given = set(values)
    long = sorted(value for value in given if len(value) > width)
    shown = {value: value for value in given if len(value) <= width}
    for value in long:
        shown[value] = _cut(value, width, long, given)
    return shown


def _cut(value: str, width: int, long: list[str], given: set[str]) -> str:
    """The form of `value` with the longest start that no other value could also take."""
    if width < 2:
        return value[:width]
    for head in range(width - 1, -1, -1):
        tail = width - 1 - head
        start, end = value[:head], value[len(value) - tail :] if tail else ""
        if f"{start}…{end}" not in given and not _rival(value, start, end, long):
            return f"{start}…{end}"
    return value[: width - 1] + "…"


def _rival(value: str, start: str, end: str, long: list[str]) -> bool:
    """Whether another of the (sorted) `long` values starts with `start` and ends with `end`."""
    for other in long[bisect_left(long, start) :]:
        if not other.startswith(start):
            return False
        if other != value and other.endswith(end):
            return True
    return False
