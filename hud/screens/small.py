"""A SMALL workspace as one mission: intent & constraints, plan, progress, handoff, checks.

The overview row `small:<dir>` opens this screen. Plan, progress, handoff and
workspace.small.yml are the agent's: shown, never written. Intent and constraints
are human-owned: `e` / `E` edit them through the same flow as native records ($EDITOR
or the in-app editor, validation with line numbers, conflicts shown): `hud.acts.small`.
The HUD writes no progress entry; `c` copies the `small accept` commands that record one
(docs/small.md).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from hud.acts.small import accept_commands
from hud.screens.base import RowScreen
from store.sources.small.workspace import SmallWorkspace
from widgets.footer import HudFooter
from widgets.hanging import Document
from widgets.header import HudHeader
from widgets.keys import key_of
from widgets.small import (
    PlanTable,
    Timeline,
    checks_text,
    entry_detail,
    handoff_text,
    intent_text,
    resume_line,
    task_detail,
)
from widgets.tabs.common import DocumentScroll

KEYS = {
    "intent": "small.edit_intent",
    "constraints": "small.edit_constraints",
    "copy": "small.copy_accept",
}
"""What the intent tab names keys for -> binding id."""
TABS = (
    ("intent", "Intent"),
    ("plan", "Plan"),
    ("progress", "Progress"),
    ("handoff", "Handoff"),
    ("checks", "Checks"),
)


class SmallScreen(RowScreen[SmallWorkspace]):
    """Tabs over the SMALL workspace of the state directory."""

    DEFAULT_CSS = """
    SmallScreen #small-resume { height: 1; padding: 0 1; background: $boost; }
    SmallScreen TabbedContent { height: 1fr; }
    SmallScreen TabbedContent > ContentSwitcher { height: 1fr; }
    SmallScreen TabPane { height: 1fr; padding: 0; }
    SmallScreen TabPane > Vertical, SmallScreen TabPane > DocumentScroll { height: 1fr; }
    SmallScreen #plan-detail, SmallScreen #entry-detail {
        height: 9; border-top: solid $panel-lighten-2; padding: 0 1; overflow-y: auto;
    }
    SmallScreen DocumentScroll Static { padding: 0 1; }
    """

    WRITES = frozenset({"edit_intent", "edit_constraints"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="small.back"),
        Binding("e", "edit_intent", "Edit intent", id="small.edit_intent"),
        Binding("E", "edit_constraints", "Edit constraints", id="small.edit_constraints"),
        Binding("c", "copy_accept", "Copy accept cmd", show=False, id="small.copy_accept"),
        *[
            Binding(str(i), f"tab('{tab}')", title, show=False, id=f"small.{tab}")
            for i, (tab, title) in enumerate(TABS, start=1)
        ],
        Binding("right_square_bracket", "step_tab(1)", "Next tab", show=False, id="small.next"),
        Binding("left_square_bracket", "step_tab(-1)", "Prev tab", show=False, id="small.prev"),
    ]

    @property
    def small(self) -> SmallWorkspace:
        return self.hud.workspace.small

    @property
    def documents(self) -> tuple[str, ...]:
        """The workspace's human-writable files (`Source.documents`): the ones `e` and
        `E` edit, whose `small accept` commands are given."""
        return self.hud.workspace.documents(self.mission_id)

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Document(id="small-resume")
        with TabbedContent(id="tabs"):
            with TabPane("1 Intent", id="intent"), DocumentScroll():
                yield Document(id="intent-text")
            with TabPane("2 Plan", id="plan"), Vertical():
                yield PlanTable(id="plan-table")
                yield Document(id="plan-detail")
            with TabPane("3 Progress", id="progress"), Vertical():
                yield Timeline(id="timeline")
                yield Document(id="entry-detail")
            with TabPane("4 Handoff", id="handoff"), DocumentScroll():
                yield Document(id="handoff-text")
            with TabPane("5 Checks", id="checks"), DocumentScroll():
                yield Document(id="checks-text")
        yield HudFooter()

    # ---- refresh ---------------------------------------------------------------------

    GONE = "{} is gone (no .small/ folder)"

    def find_row(self) -> SmallWorkspace | None:
        return self.small if self.small.present else None

    def row_changed(self, small: SmallWorkspace) -> None:
        self.query_one("#small-resume", Static).update(
            resume_line(
                small.current_task_id,
                small.task(small.current_task_id),
                small.verdicts(),
                self.app.theme_variables,
            )
        )
        active = self.query_one(TabbedContent).active
        getattr(self, f"_show_{active}", lambda: None)()

    def _show_intent(self) -> None:
        small = self.small
        text = intent_text(
            small.data("intent"),
            small.data("constraints"),
            intent_path=small.files["intent"].relpath,
            constraints_path=small.files["constraints"].relpath,
            keys={
                name: key
                for name, binding in KEYS.items()
                if (key := key_of(self, binding)) is not None
            },
            accept=accept_commands(small, self.documents),
            variables=self.app.theme_variables,
        )
        self.query_one("#intent-text", Static).update(text)

    def _show_plan(self) -> None:
        table = self.query_one(PlanTable)
        table.show(self.small.tasks, self.app.theme_variables)
        self._plan_detail()

    def _plan_detail(self) -> None:
        table = self.query_one(PlanTable)
        detail = task_detail(table.selected, self.small.entries, self.app.theme_variables)
        self.query_one("#plan-detail", Static).update(detail)

    def _show_progress(self) -> None:
        timeline = self.query_one(Timeline)
        timeline.show(self.small.entries, self.small.generation, self.app.theme_variables)
        self._entry_detail()

    def _entry_detail(self) -> None:
        timeline = self.query_one(Timeline)
        self.query_one("#entry-detail", Static).update(
            entry_detail(timeline.selected, self.app.theme_variables)
        )

    def _show_handoff(self) -> None:
        small = self.small
        text = handoff_text(
            small.data("handoff"),
            relpath=small.files["handoff"].relpath,
            current=small.task(small.current_task_id),
            variables=self.app.theme_variables,
        )
        self.query_one("#handoff-text", Static).update(text)

    def _show_checks(self) -> None:
        small = self.small
        self.query_one("#checks-text", Static).update(
            checks_text(small.verdicts(), small.problems(), self.app.theme_variables)
        )

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.workspace_changed({self.mission_id})
        self._focus_active()

    def on_mount(self) -> None:
        self.call_after_refresh(self._focus_active)

    def _focus_active(self) -> None:
        """Keys go to the active tab's table or document (j/k, arrows, g/G)."""
        pane = self.query_one(TabbedContent).active_pane
        if pane is None:
            return
        for target in pane.query("PlanTable, Timeline, DocumentScroll"):
            target.focus()
            return

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if isinstance(event.data_table, PlanTable):
            self._plan_detail()
        elif isinstance(event.data_table, Timeline):
            self._entry_detail()

    # ---- actions ---------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_step_tab(self, step: int) -> None:
        ids = [tab for tab, _ in TABS]
        active = self.query_one(TabbedContent).active
        self.action_tab(ids[(ids.index(active) + step) % len(ids)])

    def action_copy_accept(self) -> None:
        commands = "\n".join(accept_commands(self.small, self.documents))
        self.app.copy_to_clipboard(commands)
        self.notify("copied the `small accept` commands (OSC 52 clipboard)")

    def action_edit_intent(self) -> None:
        self._edit("intent")

    def action_edit_constraints(self) -> None:
        self._edit("constraints")

    def _edit(self, kind: str) -> None:
        from hud.acts.small import edit_small
        from hud.screens.asking import Dialogs

        document = self.small.files[kind].relpath
        if self.hud.writer is None or document not in self.documents:
            return
        ask = Dialogs(self)
        flow = edit_small(ask.session, ask, self.small, document)
        self.run_worker(flow, exclusive=True, group="small-edit")
