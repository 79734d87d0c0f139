"""Row tables laid out by column priority, for every width from 80 to 200 columns.

Each column wants the width of its widest visible cell (its label at least, `most` at
most). When the row does not fit, columns give up width in the order they `give` (the
highest first), each down to its `least`: ids (`ID_LEAST`) are never cut below a
readable minimum, and are cut in the middle (`widgets.words.apart`), so both ends stay.
The `fill` column (a title, a summary) takes what the others leave, up to the width of
its widest cell (all the room left, when that is not given): on a wide screen every
column has what it wants, nothing is cut that fits, and the room left over stays at the
end of the row, not as a gap inside it.
The focused row's ids are shown whole under the table (`DetailLine`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

ID_LEAST = 12
"""The fewest cells an id is cut to: `deploy…way-2` still reads as its id."""


@dataclass(frozen=True)
class Fit:
    """How one column takes part in the layout."""

    key: str
    label: str
    least: int
    """Never narrower than this (nor than its content, when that is narrower)."""
    most: int | None = None
    """Never wider than this; None: as wide as its widest cell."""
    give: int = 0
    """Columns with the highest `give` are narrowed first."""
    fill: bool = False
    """Takes the width the others leave (one column)."""


def fit_widths(columns: Sequence[Fit], natural: Mapping[str, int], room: int) -> dict[str, int]:
    """The width of each column in `room` cells (cell padding excluded), from the width
    each one's widest visible cell takes (`natural`; missing: `most`, else as much as
    there is for the fill column)."""
    want: dict[str, int] = {}
    least: dict[str, int] = {}
    for column in columns:
        wanted = max(natural.get(column.key, column.most or 0), cell_len(column.label))
        if column.most is not None:
            wanted = min(wanted, column.most)
        least[column.key] = min(column.least, wanted)
        unknown = column.fill and column.key not in natural  # then it takes the spare room
        want[column.key] = least[column.key] if unknown else wanted
    over = sum(want.values()) - room
    for column in sorted(columns, key=lambda column: -column.give):
        if over <= 0:
            break
        cut = min(over, want[column.key] - least[column.key])
        want[column.key] -= cut
        over -= cut
    fill = next((column for column in columns if column.fill), None)
    if over < 0 and fill is not None and fill.key not in natural:
        want[fill.key] -= over
    return want


class DetailLine(Static):
    """The focused row's ids in full (and what else helps), under a table whose cells
    may cut them."""

    DEFAULT_CSS = """
    DetailLine { height: auto; max-height: 2; padding: 0 1; background: $panel; }
    """

    def show(self, text: Text | None) -> None:
        """Show `text`; None hides the line (no row)."""
        self.display = text is not None
        if text is not None:
            self.update(text)
