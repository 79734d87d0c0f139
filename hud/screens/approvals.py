"""Approvals: the queue of pending requests, and one request to review and decide.

The queue (`a` from anywhere) lists every pending request across missions, soonest
expiry first, then highest risk; `/` filters it. Enter opens a request: everything
about it, the full args, and what blocks an approval. `y` approves, `n` rejects; both
are write actions (hidden in read-only mode), both run `hud.acts.decide` (as `hud
decide` does) with the HUD's dialogs. Both run as their key arrives and wait for the
reason dialog to be up, so a reason typed right after the key lands in it whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.widgets import DataTable, Static

from hud.screens.base import HudScreen
from store.derivation.derive import RequestStatus
from store.index.approval_checks import QueueItem, Review, Verdict, approval_queue, review
from widgets.columns import DetailLine
from widgets.filter import FilterField, Filtering, filter_bindings, matches
from widgets.footer import HudFooter
from widgets.header import HudHeader
from widgets.keys import hint, key_of
from widgets.request_view import QueueTable, RequestView, preview_text, queue_detail
from widgets.tabs.common import moment
from widgets.words import plural

if TYPE_CHECKING:
    from hud.acts.decide import Outcome

COUNTDOWN_SECONDS = 1.0


def item_matches(item: QueueItem, needle: str) -> bool:
    """The filter against mission, request, tool, step, risk, status and summary."""
    return matches(
        needle,
        item.mission,
        item.request_id,
        item.tool,
        item.step,
        item.risk,
        item.status.value,
        item.summary,
    )


class ApprovalsScreen(Filtering, HudScreen):
    """Every pending request across missions: soonest expiry, then highest risk, first."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *filter_bindings("approvals"),
        Binding("escape", "app.pop_screen", "Back", id="approvals.back"),
        Binding("h", "toggle_all", "Show all", id="approvals.all"),
        Binding("m", "mission", "Mission", id="approvals.mission"),
    ]
    FOOTER_FIRST = ("table.select", "approvals.back", "approvals.filter", "approvals.mission")
    AUTO_FOCUS = "#approvals-table"

    def __init__(self) -> None:
        super().__init__()
        self.everything = False

    def compose(self) -> ComposeResult:
        self.everything = self.hud.view.get("approvals_all") is True  # as the user left it
        yield HudHeader()
        yield Static(id="approvals-title")
        yield FilterField(placeholder="filter: mission, request, tool, step, risk, summary")
        yield QueueTable()
        yield DetailLine(id="row-detail")
        yield Static(id="approvals-empty")
        yield HudFooter()

    @property
    def table(self) -> QueueTable:
        return self.query_one(QueueTable)

    def on_mount(self) -> None:
        self.set_interval(COUNTDOWN_SECONDS, self._tick)

    def _tick(self) -> None:
        if self.is_current and self.table.keys:
            self.workspace_changed(set())

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        workspace = self.hud.workspace
        if touched and not self._concerns(touched):
            return
        now = workspace.clock()
        items = approval_queue(workspace, now, everything=self.everything)
        needle = self.needle
        shown = [item for item in items if item_matches(item, needle)]
        table = self.table
        table.variables = self.app.theme_variables
        table.show(shown, now)
        pending = sum(1 for i in items if i.status.value == "pending")
        title = Text(f" {pending} pending", style="bold")
        if self.everything:
            title.append(f" of {plural(len(items), 'request')}", style="bold")
        if len(shown) < len(items):
            title.append(f", {len(shown)} shown", style="bold")
        title.append("  soonest expiry first, then highest risk · ", style="dim")
        title.append_text(
            hint(
                self,
                ("table.select", "review"),
                ("approvals.all", "pending only" if self.everything else "all"),
            )
        )
        if self.hud.read_only:
            title.append(" · read-only: you can review, not decide", style="dim")
        complete = self.hud.scanned.is_set()
        if not complete:
            title.append(f" · so far: {self.hud.still_reading()}", style="dim")
        self.query_one("#approvals-title", Static).update(title)
        empty = self.query_one("#approvals-empty", Static)
        empty.display = not shown
        if items and not shown:
            none = Text("  No request matches the filter. ", style="dim")
            none.append_text(hint(self, ("approvals.clear", "clears it")))
        else:
            none = Text("  No pending approval requests" + ("." if complete else " so far."))
            none.stylize("dim")
        empty.update(none)
        self.sub_title = plural(pending, "pending approval")
        self.show_detail()

    def show_detail(self) -> None:
        """The focused request's ids in full under the queue."""
        item = self.table.selected_item
        self.query_one(DetailLine).show(queue_detail(item) if item is not None else None)

    def on_data_table_row_highlighted(self) -> None:
        self.show_detail()

    def _concerns(self, touched: set[str]) -> bool:
        """Whether a change of these missions can change the queue."""
        missions = self.hud.workspace.missions
        if any(
            (m := missions.get(mission_id)) is not None and m.requests for mission_id in touched
        ):
            return True
        return any(key.partition("/")[0] in touched for key in self.table.keys)

    def filter_target(self) -> QueueTable:
        return self.table

    def filter_changed(self) -> None:
        self.workspace_changed(None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        mission, _, request_id = key.partition("/")
        self.hud.open_request(mission, request_id)

    def action_toggle_all(self) -> None:
        self.everything = not self.everything
        self.hud.remember(approvals_all=self.everything)
        self.workspace_changed(None)

    def action_mission(self) -> None:
        key = self.table.selected_key
        if key is not None:
            self.hud.open_mission(key.partition("/")[0])


class RequestScreen(HudScreen):
    """One request: what it would do, in full, and the decision on it."""

    DECIDES = frozenset({"approve", "reject"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="request.back"),
        Binding("y", "approve", "Approve", id="request.approve", priority=True),
        Binding("n", "reject", "Reject", id="request.reject", priority=True),
        Binding("m", "mission", "Mission", id="request.mission"),
        Binding("r", "toggle_raw", "Raw args", id="request.raw"),
    ]
    FOOTER_FIRST = ("request.approve", "request.reject", "request.back", "request.mission")
    AUTO_FOCUS = "#request-view"

    approvable: reactive[bool] = reactive(False, bindings=True)
    """Whether `y` can succeed now: the request waits for a decision (one is written
    once) and nothing blocks approving it (`Review.blockers`, listed on the screen)."""
    rejectable: reactive[bool] = reactive(False, bindings=True)
    """Whether `n` can succeed now: pending, and nothing blocks a rejection."""

    def __init__(self, mission_id: str, request_id: str) -> None:
        super().__init__()
        self.mission_id = mission_id
        self.request_id = request_id
        self.review: Review | None = None
        self.raw = False
        """The raw args shown in place of what the call will do."""
        self.preview: tuple[tuple[str | None, str], Text | None] | None = None
        """What the call shown will do (`preview_text`), for its digest and theme."""

    def compose(self) -> ComposeResult:
        yield HudHeader()
        yield RequestView()
        yield HudFooter()

    def on_mount(self) -> None:
        self.sub_title = f"{self.mission_id}/{self.request_id}"
        self.set_interval(COUNTDOWN_SECONDS, self._tick)

    def _tick(self) -> None:
        review = self.review
        if self.is_current and review is not None and review.expires_at is not None:
            self.workspace_changed(set())

    def current_review(self) -> Review | None:
        """The review of the request as the workspace holds it now (None: it is gone)."""
        hud = self.hud
        mission = hud.workspace.missions.get(self.mission_id)
        if mission is None or self.request_id not in mission.requests:
            return None
        return review(mission, self.request_id, hud.workspace.clock(), hud.approvals.seen)

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        if touched and self.mission_id not in touched:
            return
        now = self.hud.workspace.clock()
        if touched is not None and not touched and self.review is not None:
            expires = self.review.expires_at
            valid = self.review.decision.valid_until if self.review.decision else None
            due = [t for t in (expires, valid) if t is not None and t <= now]
            if not due:
                self._show(self.review)  # only the countdown moves
                return
        current = self.current_review()
        if current is None:
            self.notify(f"request {self.mission_id}/{self.request_id} is gone", severity="warning")
            self.app.pop_screen()
            return
        self.review = current
        self._show(current)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if (action == "approve" and not self.approvable) or (
            action == "reject" and not self.rejectable
        ):
            return False
        if action == "toggle_raw":  # only when there is something besides the raw args
            return self.preview is not None and self.preview[1] is not None
        return super().check_action(action, parameters)

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        if self.review is not None:
            self._show(self.review)

    def _show(self, current: Review) -> None:
        pending = current.status is RequestStatus.PENDING
        self.approvable = pending and current.can_approve
        self.rejectable = pending and not current.reject_blockers
        made_for = (current.digest, self.app.theme)
        if self.preview is None or self.preview[0] != made_for or current.digest is None:
            before = self.preview is not None and self.preview[1] is not None
            self.preview = (made_for, preview_text(current, self.app.theme_variables))
            if before != (self.preview[1] is not None):
                self.refresh_bindings()
        dark = self.app.current_theme.dark
        view = self.query_one(RequestView)
        keys = {
            name: key
            for name in ("approve", "reject", "raw")
            if (key := key_of(self, f"request.{name}")) is not None
        }
        view.show(
            current,
            self.hud.workspace.clock(),
            self.app.theme_variables,
            dark=dark,
            keys=keys,
            preview=self.preview[1],
            raw=self.raw,
        )

    # ---- deciding -----------------------------------------------------------------------

    def action_mission(self) -> None:
        self.hud.open_mission(self.mission_id)

    async def action_approve(self) -> None:
        await self._begin("approve")

    async def action_reject(self) -> None:
        await self._begin("reject")

    async def _begin(self, verdict: Verdict) -> None:
        """Decide (`hud.acts.decide`); returns once the reason dialog is up, or the act
        ended without asking."""
        from hud.acts.decide import decide
        from hud.screens.asking import Dialogs

        ask = Dialogs(self)

        async def flow() -> None:
            self._report(await decide(ask.session, ask, self._look, verdict))

        await ask.start(flow())

    def _look(self) -> Review | None:
        """The request as it is now, kept as the one shown."""
        current = self.current_review()
        if current is not None:
            self.review = current
        return current

    def _report(self, outcome: Outcome) -> None:
        """Say how a decision ended, and show the request as it is now."""
        from hud.acts.decide import decided_first

        verdict = outcome.verdict
        if outcome.status in ("refused", "changed"):
            self.notify(outcome.message, title=f"Not {verdict}d", severity="error")
            if outcome.status == "changed" and outcome.review is not None:
                self._show(outcome.review)
        elif outcome.status == "read_only":
            self.notify("read-only: nothing can be decided here", severity="error")
        elif outcome.status == "failed":
            self.notify(outcome.message, title="Not saved", severity="error")
        elif outcome.status == "taken":
            message = decided_first(outcome.decision, moment)
            self.notify(message, title="Someone decided first", severity="error")
            self.workspace_changed(None)
        elif outcome.status == "decided" and outcome.decision is not None:
            decision = outcome.decision
            done = "approved" if verdict == "approve" else "rejected"
            until = f", valid until {moment(decision.valid_until)}" if decision.valid_until else ""
            self.notify(f"{done} {self.mission_id}/{self.request_id}{until}", title="Decided")
            self.workspace_changed(None)
