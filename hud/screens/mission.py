"""One mission: intent and constraints, plan, execution, evidence, budget, handoff, a
replay of its log and a review of its plan."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static, TabbedContent, TabPane

from hud import saving
from hud.export import CitedEvidence, handoff_markdown
from hud.screens.base import RowScreen
from hud.screens.mission_views import TABS
from store.derivation.mission import MissionState
from store.format.layout import Kind
from store.format.records import Evidence
from store.format.row import MissionSummary
from widgets.footer import HudFooter
from widgets.header import HudHeader
from widgets.safe_text import safe
from widgets.status import status_text
from widgets.tabs.common import Reselected

if TYPE_CHECKING:
    from hud.acts.session import Session
    from hud.screens.asking import Dialogs


class MissionScreen(RowScreen[tuple[MissionState, MissionSummary]]):
    """Tabs over one mission; each tab's widget is fed data by a view in mission_views."""

    WRITES = frozenset({"edit_intent", "edit_constraints", "adjust_budget"})
    SAVES = frozenset({"export"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="mission.back"),
        Binding("x", "export", "Export handoff", id="mission.export"),
        *[
            Binding(str(index), f"tab('{tab.id}')", tab.title, show=False, id=f"mission.{tab.id}")
            for index, tab in enumerate(TABS, start=1)
        ],
        Binding("right_square_bracket", "next_tab", "Next tab", show=False, id="mission.next"),
        Binding("left_square_bracket", "prev_tab", "Prev tab", show=False, id="mission.prev"),
        Binding("e", "edit_intent", "Edit intent", id="mission.edit"),
        Binding("E", "edit_constraints", "Edit constraints", id="mission.edit_constraints"),
        Binding("h", "history", "History", id="mission.history"),
        Binding("b,plus", "adjust_budget", "Adjust budget", id="mission.budget_adjust"),
    ]

    FOOTER_FIRST = (
        "mission.back",
        "mission.budget_adjust",
        "mission.edit",
        "mission.edit_constraints",
        "mission.history",
        "approvals",
    )

    def __init__(self, mission_id: str, tab: str = "") -> None:
        """Open `mission_id` on `tab` (a tab id; the first tab when empty)."""
        super().__init__(mission_id)
        self._first_tab = tab

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield Static(id="mission-title")
        with TabbedContent(id="tabs", initial=self._first_tab):
            for index, tab in enumerate(TABS, start=1):
                with TabPane(Content(f"{index} {tab.title}"), id=tab.id):
                    yield tab.widget()
        yield HudFooter()

    @property
    def mission(self) -> MissionState | None:
        return self.hud.workspace.missions.get(self.mission_id)

    GONE = "mission {} is gone"

    def find_row(self) -> tuple[MissionState, MissionSummary] | None:
        mission = self.mission
        summary = self.hud.summaries.get(self.mission_id)
        return None if mission is None or summary is None else (mission, summary)

    def row_changed(self, row: tuple[MissionState, MissionSummary]) -> None:
        mission, summary = row
        title = status_text(summary.status.value, self.app.theme_variables)
        title.append(f"  {self.mission_id}  ")
        title.append_text(safe(summary.title))
        self.query_one("#mission-title", Static).update(title)
        active = self.query_one(TabbedContent).active
        for tab in TABS:
            if tab.id == active:
                tab.update(self, mission)

    def on_reselected(self, event: Reselected) -> None:
        """A tab wants another event or version shown: feed it again."""
        self.workspace_changed({self.mission_id})

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.workspace_changed({self.mission_id})
        self.refresh_bindings()

    def action_export(self) -> None:
        """Write the handoff as Markdown to <mission>-handoff.md where the HUD saves
        (`HudApp.save_folder`: never in read-only mode, never inside STATE_DIR)."""
        mission = self.mission
        if mission is not None:
            self.save_handoff(CitedEvidence.of(mission))

    @work(thread=True, exclusive=True, group="export")
    def save_handoff(self, cited: CitedEvidence) -> None:
        """Off the event loop: read the cited evidence, have the loop render, save."""
        app = self.app
        folder = self.hud.save_folder()
        if isinstance(folder, str):
            app.notify(folder, severity="error")
            return
        text = app.call_from_thread(self._markdown, cited.read())
        if text is None:
            return
        target = folder / f"{self.mission_id}-handoff.md"
        try:
            saving.write_text(target, text)
        except OSError as exc:
            app.notify(f"export failed: {exc}", severity="error")
            return
        app.notify(f"handoff written to {target}")

    def _markdown(self, evidence: Mapping[str, Evidence | None]) -> str | None:
        mission = self.mission
        if mission is None:
            return None
        workspace = self.hud.workspace
        return handoff_markdown(mission, workspace.clock(), workspace.settings, evidence)

    def action_tab(self, tab_id: str) -> None:
        self.query_one(TabbedContent).active = tab_id

    def _step_tab(self, step: int) -> None:
        ids = [tab.id for tab in TABS]
        active = self.query_one(TabbedContent).active
        self.action_tab(ids[(ids.index(active) + step) % len(ids)])

    def action_next_tab(self) -> None:
        self._step_tab(1)

    def action_prev_tab(self) -> None:
        self._step_tab(-1)

    # ---- writing intent and constraints (hud.acts); history -----------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = super().check_action(action, parameters)
        if action == "adjust_budget" and allowed:
            tabs = self.query(TabbedContent)
            return bool(tabs) and tabs.first().active == "budget"
        return allowed

    def action_edit_intent(self) -> None:
        from hud.acts.documents import edit_document

        self._edit(lambda session, ask: edit_document(session, ask, self.mission_id, Kind.INTENT))

    def action_edit_constraints(self) -> None:
        from hud.acts.documents import edit_document

        self._edit(
            lambda session, ask: edit_document(session, ask, self.mission_id, Kind.CONSTRAINTS)
        )

    def action_adjust_budget(self) -> None:
        from hud.acts.budget import adjust_budget

        self._edit(lambda session, ask: adjust_budget(session, ask, self.mission_id))

    def _edit(self, act: Callable[[Session, Dialogs], Coroutine[Any, Any, object]]) -> None:
        """Run one editing act at a time (a key pressed twice starts nothing more)."""
        from hud.screens.asking import Dialogs

        if any(w.group == "edit" and not w.is_finished for w in self.workers):
            return
        ask = Dialogs(self)
        self.run_worker(act(ask.session, ask), group="edit")

    def action_history(self) -> None:
        from hud.screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.mission_id))
