"""Words around numbers and names: `1 problem`, `2 problems`; ids cut yet kept apart."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 problem`, `0 problems`, `1,200 entries` (`many` when adding an s is wrong)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def middle(value: str, width: int) -> str:
    """`value` in `width` cells, cut in the middle when longer, both ends kept:
    `deploy-gateway-eu` in 14 cells is `deploy-…way-eu`."""
    if len(value) <= width:
        return value
    if width < 2:
        return value[:width]
    head = width // 2
    tail = width - 1 - head
    return f"{value[:head]}…{value[len(value) - tail :] if tail else ''}"


def apart(values: Iterable[str], width: int) -> dict[str, str]:
    """Each value as shown in `width` cells, cut in the middle, no two values alike.

    A value that fits is kept whole. A longer one keeps both its ends (`middle`), the
    cut moved as little as it takes to differ from every other value:
    `deploy-gateway-2-staging` and `deploy-gateway-3-staging` in 14 cells are
    `depl…2-staging` and `depl…3-staging`, not `deploy-…taging` twice.
    """
    given = set(values)
    long = sorted(value for value in given if len(value) > width)
    shown = {value: value for value in given if len(value) <= width}
    for value in long:
        shown[value] = _cut(value, width, long, given)
    return shown


def _cut(value: str, width: int, long: list[str], given: set[str]) -> str:
    """The form of `value` with its cut nearest the middle that no other value could
    also take."""
    if width < 2:
        return value[:width]
    balanced = width // 2
    heads = sorted(range(width), key=lambda head: (abs(head - balanced), -head))
    for head in heads:
        tail = width - 1 - head
        start, end = value[:head], value[len(value) - tail :] if tail else ""
        if f"{start}…{end}" not in given and not _rival(value, start, end, long):
            return f"{start}…{end}"
    return middle(value, width)


def _rival(value: str, start: str, end: str, long: list[str]) -> bool:
    """Whether another of the (sorted) `long` values starts with `start` and ends with `end`."""
    for other in long[bisect_left(long, start) :]:
        if not other.startswith(start):
            return False
        if other != value and other.endswith(end):
            return True
    return False
