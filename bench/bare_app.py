"""The baselines for start-up: a bare Textual app showing a DataTable, empty or with N
rows (`python -m bench.bare_app N`), the rows made in memory."""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.widgets import DataTable


class Bare(App[None]):
    def __init__(self, rows: int) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable()
        table.add_columns("Status", "Mission")
        table.add_rows(("running", f"Benchmark mission m{n:05d}") for n in range(self.rows))
        yield table


if __name__ == "__main__":
    Bare(int(sys.argv[1]) if len(sys.argv) > 1 else 0).run()
