"""The overview: one row per mission, most urgent first; `/` filters, Enter opens.

With no row to show it says why and what to do next (`hud.first_run`): no missions yet
in a state directory, or a folder that is not one, which it offers to make one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from hud.first_run import Place, guidance, make_state_dir, place_of
from hud.screens.base import HudScreen, home_relative
from widgets.columns import DetailLine
from widgets.filter import FilterField, Filtering, filter_bindings, matches
from widgets.footer import HudFooter
from widgets.header import HudHeader
from widgets.keys import hint, key_of
from widgets.mission_table import MissionTable
from widgets.row_table import RowTable
from widgets.safe_text import safe
from widgets.words import plural

if TYPE_CHECKING:
    from hud.acts.session import HumanWriter
    from store.format.row import MissionSummary


def summary_matches(summary: MissionSummary, needle: str) -> bool:
    """The filter against id, title, status and step."""
    return matches(needle, summary.id, summary.title, summary.status.value, summary.current_step)


class OverviewScreen(Filtering, HudScreen):
    """Every mission in the state directory."""

    WRITES = frozenset({"new_mission", "make_state_dir"})
    BINDINGS: ClassVar[list[BindingType]] = [
        *filter_bindings("overview"),
        # priority: the form opens as the key arrives, and takes the keys typed after it
        Binding("n", "new_mission", "New mission", id="overview.new", priority=True),
        Binding("c", "make_state_dir", "Make state dir", id="overview.create"),
    ]

    FOOTER_FIRST = ("table.select", "overview.filter", "overview.new", "approvals")
    AUTO_FOCUS = "#missions"
    DEFAULT_CSS = "OverviewScreen #guide { height: auto; padding: 1 2; }"

    place: reactive[Place | None] = reactive(None, bindings=True)
    """What the directory is, once a finished scan found no row (None: not asked)."""

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield FilterField(placeholder="filter: id, title, status, step", id="filter")
        yield MissionTable(id="missions")
        yield DetailLine(id="row-detail")
        yield Static(id="guide")
        yield HudFooter()

    @property
    def table(self) -> MissionTable:
        return self.query_one(MissionTable)

    def on_mount(self) -> None:
        self.watch(self.table, "cursor", self.show_detail, init=False)

    def show_detail(self) -> None:
        """The focused row's id in full, and its title, under the table."""
        table = self.table
        summary = table.summaries.get(table.cursor_key or "")
        detail = None
        if summary is not None and table.display:
            detail = safe(summary.id)
            detail.stylize("bold")
            detail.append("  ").append_text(safe(summary.title))
        self.query_one(DetailLine).show(detail)

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        table = self.table
        table.variables = self.app.theme_variables
        summaries = self.hud.summaries
        needle = self.needle
        if touched is None or needle:
            shown = [s for s in summaries.values() if summary_matches(s, needle)]
            table.show(shown, self.hud.now(), complete=True)
        else:
            changed = [summaries[m] for m in touched if m in summaries]
            table.show(changed, self.hud.now(), complete=False)
            gone = [m for m in touched if m not in summaries]
            if gone:
                table.show(summaries.values(), self.hud.now(), complete=True)
        self.sub_title = plural(len(summaries), "mission")
        if summaries:
            self.place = None
        elif self.hud.scanned.is_set():
            self.look_at_directory()
        self.show_guide()
        self.show_detail()

    # ---- no row: what to do next --------------------------------------------------------

    @work(thread=True, exclusive=True, group="first-run")
    def look_at_directory(self) -> None:
        place = place_of(self.hud.root)
        self.app.call_from_thread(setattr, self, "place", place)

    def watch_place(self) -> None:
        self.show_guide()

    def show_guide(self) -> None:
        """Instead of an empty table: why it is empty and what to do."""
        empty = self.table.row_count == 0
        unfiltered = empty and self.place is not None and not self.needle
        if empty and self.needle:
            text = Text("No mission matches the filter. ", style="bold")
            text.append_text(hint(self, ("overview.clear", "clears it")))
        elif unfiltered and self.place is not None:
            text = guidance(
                self.place,
                home_relative(self.hud.root),
                self.hud.root,
                key_of(self, "overview.new"),
                key_of(self, "overview.create"),
            )
        else:
            text = Text()
        guide = self.query_one("#guide", Static)
        guide.update(text)
        guide.display = bool(text.plain)
        self.table.display = not unfiltered
        if self.table.display and self.focused is None:
            self.set_focus(self.table)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        hidden = {
            "filter": self.place is not None,  # no row to filter
            "new_mission": self.place is Place.OTHER,  # not without the confirmation
            "make_state_dir": self.place is not Place.OTHER,
        }
        if hidden.get(action):
            return False
        return super().check_action(action, parameters)

    def action_make_state_dir(self) -> None:
        from hud.screens.decide import ConfirmDialog  # a dialog not on the first screen

        question = Text("Make ", style="bold")
        question.append_text(safe(home_relative(self.hud.root)))
        question.append(" a state directory? ", style="bold")
        question.append("This creates the folder missions/ in it; nothing else is written.")
        self.app.push_screen(ConfirmDialog(question), self._make_state_dir)

    def _make_state_dir(self, yes: bool | None) -> None:
        writer = self.hud.writer
        if yes and writer is not None:
            self._create(writer)

    @work(thread=True, exclusive=True, group="first-run")
    def _create(self, writer: HumanWriter) -> None:
        from store.format.confined import Refused

        try:
            make_state_dir(writer)
        except (Refused, OSError) as exc:
            message = exc.problem.message if isinstance(exc, Refused) else str(exc)
            self.app.notify(f"missions/ not created: {message}", severity="error")
            return
        self.app.notify(f"{home_relative(self.hud.root)} is a state directory now")
        self.app.call_from_thread(self.look_at_directory)

    # ---- filter -------------------------------------------------------------------------

    def filter_target(self) -> Widget:
        return self.table

    def filter_changed(self) -> None:
        self.workspace_changed(None)

    # ---- navigation -------------------------------------------------------------------

    def on_row_table_selected(self, event: RowTable.Selected) -> None:
        self.hud.open_mission(event.key)

    # ---- writing ----------------------------------------------------------------------

    async def action_new_mission(self) -> None:
        from hud.screens.edit import NewMissionScreen

        # awaited: the form is up and its first field focused before the next key
        await self.app.push_screen(NewMissionScreen(), self._created)

    def _created(self, mission_id: str | None) -> None:
        if mission_id is not None:
            self.call_after_refresh(self._select, mission_id)

    def _select(self, mission_id: str) -> None:
        """Put the cursor on a mission's row, if it is shown."""
        table = self.table
        if mission_id in table.order:
            table.move_to(table.order.index(mission_id))
