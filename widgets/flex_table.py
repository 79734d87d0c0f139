"""A row-cursor DataTable whose one zero-width column takes the width the others leave."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey


class FlexTable(DataTable[Text]):
    """Columns from `COLUMNS` as (key, label, width); width 0 marks the flexible one."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = ()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)

    def on_mount(self) -> None:
        for key, label, width in self.COLUMNS:
            self.add_column(label, key=key, width=width or 20)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        if not self.columns:
            return
        flexible = next(key for key, _, width in self.COLUMNS if not width)
        fixed = sum(width + 2 for _, _, width in self.COLUMNS if width)
        column = self.columns[ColumnKey(flexible)]
        column.width = max(12, self.size.width - fixed - 3)
        column.auto_width = False
        self.refresh()
