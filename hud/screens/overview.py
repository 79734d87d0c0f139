"""The overview: one row per mission, most urgent first; `/` filters, Enter opens."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Input

from hud.screens.base import HudScreen, writes
from widgets.header import HudHeader
from widgets.mission_table import MissionTable
from widgets.row_table import RowTable

if TYPE_CHECKING:
    from store.row import MissionSummary


def matches(summary: MissionSummary, needle: str) -> bool:
    """Case-insensitive match of the filter against id, title, status and step."""
    if not needle:
        return True
    haystack = " ".join(
        (summary.id, summary.title, summary.status.value, summary.current_step or "")
    ).lower()
    return all(word in haystack for word in needle.lower().split())


class OverviewScreen(HudScreen):
    """Every mission in the state directory."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="overview.filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="overview.clear"),
        Binding("n", writes("new_mission"), "New mission", id="overview.new"),
    ]

    AUTO_FOCUS = "#missions"

    def compose(self) -> ComposeResult:
        yield HudHeader()
        field = Input(placeholder="filter: id, title, status, step", id="filter")
        field.display = False
        yield field
        yield MissionTable(id="missions")
        yield Footer()

    @property
    def table(self) -> MissionTable:
        return self.query_one(MissionTable)

    @property
    def needle(self) -> str:
        return self.query_one("#filter", Input).value.strip()

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        table = self.table
        table.variables = self.app.theme_variables
        summaries = self.hud.summaries
        needle = self.needle
        if touched is None or needle:
            shown = [s for s in summaries.values() if matches(s, needle)]
            table.show(shown, self.hud.now(), complete=True)
        else:
            changed = [summaries[m] for m in touched if m in summaries]
            table.show(changed, self.hud.now(), complete=False)
            gone = [m for m in touched if m not in summaries]
            if gone:
                table.show(summaries.values(), self.hud.now(), complete=True)
        self.sub_title = f"{len(summaries)} missions"

    # ---- filter -----------------------------------------------------------------------

    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.display = True
        field.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.workspace_changed(None)

    def action_clear_filter(self) -> None:
        field = self.query_one("#filter", Input)
        if field.value or field.display:
            field.value = ""
            field.display = False
            self.table.focus()

    # ---- navigation -------------------------------------------------------------------

    def on_row_table_selected(self, event: RowTable.Selected) -> None:
        self.hud.open_mission(event.key)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()

    # ---- writing ----------------------------------------------------------------------

    def action_new_mission(self) -> None:
        from hud.screens.edit import NewMissionScreen

        self.app.push_screen(NewMissionScreen(), self._created)

    def _created(self, mission_id: str | None) -> None:
        if mission_id is not None:
            self.call_after_refresh(self._select, mission_id)

    def _select(self, mission_id: str) -> None:
        """Put the cursor on a mission's row, if it is shown."""
        table = self.table
        if mission_id in table.order:
            table.move_to(table.order.index(mission_id))
