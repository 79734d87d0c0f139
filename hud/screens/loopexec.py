"""One loopexec run: summary (state, heartbeat, escalation, attestation) and receipt timeline.

Read-only: everything in `.loopexec/` is the runtime's. The overview row
`loopexec:<run id>` opens this screen.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from hud.screens.base import RowScreen
from store.sources.loopexec.runs import LoopexecRun
from widgets.footer import HudFooter
from widgets.hanging import Document
from widgets.header import HudHeader
from widgets.loopexec import ReceiptTable, event_detail, summary_text


class LoopexecScreen(RowScreen[LoopexecRun]):
    DEFAULT_CSS = """
    LoopexecScreen #loop-summary { height: auto; max-height: 11; padding: 0 1; }
    LoopexecScreen #event-detail {
        height: 4; border-top: solid $panel-lighten-2; padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="loopexec.back"),
        Binding("j", "cursor_down", "Down", show=False, id="loopexec.down"),
        Binding("k", "cursor_up", "Up", show=False, id="loopexec.up"),
    ]

    AUTO_FOCUS = "#receipt"

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Document(id="loop-summary")
        yield ReceiptTable(id="receipt")
        yield Document(id="event-detail")
        yield HudFooter()

    @property
    def run(self) -> LoopexecRun | None:
        return self.hud.workspace.loopexec.run_of(self.mission_id)

    def find_row(self) -> LoopexecRun | None:
        return self.run

    def row_changed(self, run: LoopexecRun) -> None:
        loopexec = self.hud.workspace.loopexec
        variables = self.app.theme_variables
        self.query_one("#loop-summary", Static).update(
            summary_text(
                run.id,
                state=loopexec.run_state(run),
                halt_reason=loopexec.halt_reason(run),
                events=run.events,
                heartbeat=loopexec.run_heartbeat(run),
                escalation=run.escalation,
                escalation_open=loopexec.escalation_open(run),
                attested=run.attested,
                now=self.hud.workspace.clock(),
                variables=variables,
            )
        )
        self.query_one(ReceiptTable).show(run.events, variables)
        self._detail()

    def _detail(self) -> None:
        table = self.query_one(ReceiptTable)
        self.query_one("#event-detail", Static).update(
            event_detail(table.selected, self.app.theme_variables)
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def action_cursor_down(self) -> None:
        self.query_one(ReceiptTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one(ReceiptTable).action_cursor_up()
