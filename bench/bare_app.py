"""The baseline for start-up: a bare Textual app that shows an empty DataTable."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable


class Bare(App[None]):
    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable()
        table.add_columns("Status", "Mission")
        yield table


if __name__ == "__main__":
    Bare().run()
