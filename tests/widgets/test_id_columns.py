"""An id column of a tab's table is never narrower than `ID_LEAST`, whatever its spec says."""

from __future__ import annotations

import pytest

from widgets.columns import ID_LEAST
from widgets.keyed_table import Column, KeyedTable
from widgets.tabs import evidence, execution, plan

TABLES: list[tuple[tuple[Column, ...], tuple[str, ...]]] = [
    (evidence.COLUMNS, ("id", "step")),
    (execution.COLUMNS, ("step",)),
    (plan.STEP_COLUMNS, ("id", "depends")),
]


@pytest.mark.parametrize(("columns", "ids"), TABLES)
@pytest.mark.parametrize("width", [80, 200])
def test_id_columns_keep_their_least_width(
    columns: tuple[Column, ...], ids: tuple[str, ...], width: int
) -> None:
    table = KeyedTable(columns, ids=ids)
    laid = dict(zip([key for key, *_ in columns], table.widths_for(width), strict=True))
    assert all((laid[key] or 0) >= ID_LEAST for key in ids), laid


def test_a_narrow_id_column_is_widened() -> None:
    table = KeyedTable((("step", "Step", 7, 14), ("rest", "Rest", 0, 0)), ids=("step",))
    assert table.column_spec[0] == ("step", "Step", ID_LEAST, 14)
