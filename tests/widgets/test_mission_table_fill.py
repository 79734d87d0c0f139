"""The overview's table takes ten thousand rows a chunk at a time without redoing every
row at each chunk: a row's cells are drawn when it is shown, and the rows keep the
order, the column widths and the cut ids a table given them all at once has."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from store.format.row import MissionStatus, MissionSummary
from widgets import mission_table
from widgets.mission_table import MissionTable

NOW = datetime(2026, 1, 2, tzinfo=UTC)
ROWS = 2000
CHUNK = 200
HEIGHT = 30


def summary(n: int, *, title: str = "", step: str = "s1") -> MissionSummary:
    status = (MissionStatus.RUNNING, MissionStatus.STALE, MissionStatus.NEEDS_YOU)[n % 3]
    return MissionSummary(
        f"mission-{n:05d}",
        status,
        title or f"Mission number {n}",
        step,
        "running",
        1,
        n % 2,
        (n % 10) / 10,
        NOW - timedelta(minutes=n % 90),
        0,
    )


class Tables(App[None]):
    def compose(self) -> ComposeResult:
        yield MissionTable(id="chunks")
        yield MissionTable(id="whole")


def plain_rows(table: MissionTable) -> list[str]:
    return [" ".join(cell.plain for cell in table.cells(key)) for key in table.order]


async def test_ten_chunks_draw_about_a_screenful(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[str] = []
    cells_for = MissionTable.cells_for

    def counted(table: MissionTable, row: MissionSummary) -> tuple[object, ...]:
        drawn.append(row.id)
        return cells_for(table, row)

    monkeypatch.setattr(MissionTable, "cells_for", counted)
    rows = [summary(n) for n in range(ROWS)]
    app = Tables()
    async with app.run_test(size=(120, HEIGHT * 2)) as pilot:
        table = app.query_one("#chunks", MissionTable)
        for start in range(0, ROWS, CHUNK):
            table.show(rows[start : start + CHUNK], NOW, complete=False)
            await pilot.pause()
        table.show(rows, NOW, complete=True)  # the scan is done: every row again
        await pilot.pause()
        assert table.row_count == ROWS
        assert len(drawn) < 12 * HEIGHT  # a screenful per chunk at most, not a row each


async def test_chunks_end_as_one_show_of_every_row() -> None:
    rows = [summary(n, title="t" * (n % 50), step="x" * (n % 17)) for n in range(300)]
    rows += [summary(n, title="long id") for n in range(300, 310)]
    long_ids = [
        MissionSummary(f"deploy-gateway-{n}-staging-region", *astuple_rest(rows[0]))
        for n in range(5)
    ]
    app = Tables()
    async with app.run_test(size=(90, 40)) as pilot:
        chunks = app.query_one("#chunks", MissionTable)
        whole = app.query_one("#whole", MissionTable)
        for start in range(0, len(rows), 37):
            chunks.show(rows[start : start + 37], NOW, complete=False)
        chunks.show(long_ids, NOW, complete=False)
        chunks.show([summary(5, title="retitled"), summary(7, step="y" * 40)], NOW, complete=False)
        final = {row.id: row for row in [*rows, *long_ids]}
        final |= {row.id: row for row in (summary(5, title="retitled"), summary(7, step="y" * 40))}
        whole.show(final.values(), NOW, complete=True)
        await pilot.pause()
        assert chunks.columns == whole.columns
        assert chunks.order == whole.order
        assert plain_rows(chunks) == plain_rows(whole)
        assert all("…" in chunks.cell(row.id, "mission").plain for row in long_ids)
        chunks.show(rows[:10], NOW, complete=True)  # a filter: the rest dropped
        whole.show(rows[:10], NOW, complete=True)
        await pilot.pause()
        assert chunks.columns == whole.columns
        assert plain_rows(chunks) == plain_rows(whole)


def astuple_rest(row: MissionSummary) -> tuple[object, ...]:
    """Every field of `row` but its id."""
    return (
        row.status,
        row.title,
        row.current_step,
        row.step_state,
        row.plan_version,
        row.pending,
        row.budget_fraction,
        row.last_activity,
        row.problems,
    )


async def test_rows_shown_again_as_they_are_cost_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [summary(n) for n in range(ROWS)]
    app = Tables()
    async with app.run_test(size=(120, HEIGHT * 2)) as pilot:
        table = app.query_one("#chunks", MissionTable)
        table.show(rows, NOW, complete=True)
        await pilot.pause()
        measured: list[str] = []
        step_text = mission_table.step_text

        def counted(row: MissionSummary, variables: Mapping[str, str]) -> Text:
            measured.append(row.id)
            return step_text(row, variables)

        monkeypatch.setattr(mission_table, "step_text", counted)
        order = list(table.order)
        table.show(rows, NOW, complete=True)  # the scan's end: every row, none changed
        assert measured == []
        assert table.order == order
