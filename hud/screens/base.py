"""What every HUD screen shares: the header bar, kept current from the workspace."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar, cast

from textual.dom import DOMNode
from textual.screen import Screen

from hud.display import SafeTitles
from hud.host import Indexed, Starting
from store.format.row import MissionStatus
from widgets.header import HudHeader

if TYPE_CHECKING:
    from hud.host import Hud


RowT = TypeVar("RowT")
W = TypeVar("W", bound=DOMNode)


def mounted_child(node: DOMNode, selector: str, kind: type[W]) -> W | None:
    """The child of `node` that `selector` names, None once it is gone: Textual may handle
    a screen's Mount after its children were removed (the app exiting as it opened)."""
    return next(node.query(selector).results(kind), None)


def home_relative(path: Path) -> str:
    """`path` with the home directory shown as `~`."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


class HudScreen(SafeTitles, Screen[None]):
    """A screen that follows workspace changes through the app's `changed` signal.

    Every write action is hidden centrally: `check_action` refuses the actions a screen
    declares in `WRITES` when the app holds no writer (a reviewer or an approver), those
    in `DECIDES` when it may not decide and in `SAVES` when it is read-only (a reviewer).
    Its titles are made safe however they are set (`hud.display.SafeTitles`).
    """

    WRITES: ClassVar[frozenset[str]] = frozenset()
    """This screen's actions that write (through the app's HumanWriter)."""
    DECIDES: ClassVar[frozenset[str]] = frozenset()
    """This screen's actions that decide a request (through the app's decider)."""
    SAVES: ClassVar[frozenset[str]] = frozenset()
    """This screen's actions that save a file for the user (an export)."""

    FOOTER_FIRST: ClassVar[tuple[str, ...]] = ()
    """Binding ids the footer keeps first when it cannot show every key, most wanted
    first (`widgets.footer`: `?` and `q` come before all)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # an act the role does not allow is hidden (footer, help) and never runs
        if action in self.WRITES:
            return self.hud.writer is not None
        if action in self.DECIDES:
            return self.hud.can_decide
        if action in self.SAVES:
            return not self.hud.read_only
        return True

    @property
    def hud(self) -> Hud:
        return cast("Hud", self.app)

    def on_mount(self) -> None:
        """Follow the app's changes. Textual calls the `on_mount` of every class of a
        screen, this one included: a subclass's must not call it again (it would
        subscribe twice, and every change would be shown twice)."""
        self.hud.changed.subscribe(self, self._on_changed)
        self.app.theme_changed_signal.subscribe(self, lambda _: self._on_changed(None))
        if isinstance(self.hud.index, Indexed) or self.hud.summaries:  # what is read so far
            self.call_after_refresh(self.workspace_changed, None)

    def _on_changed(self, touched: set[str] | None) -> None:
        if self.is_current:
            self.workspace_changed(touched)
        else:
            self._missed = True

    def on_screen_resume(self) -> None:
        if getattr(self, "_missed", False):
            self._missed = False
            self.workspace_changed(None)

    def workspace_changed(self, touched: set[str] | None) -> None:
        """Refresh what this screen shows; `touched` is None when anything may differ."""
        self.update_header()

    def update_header(self) -> None:
        headers = self.query(HudHeader)
        if not headers:
            return
        summaries = self.hud.summaries.values()
        found = Counter(s.status for s in summaries)
        scanning = not self.hud.scanned.is_set()
        followed: tuple[str, ...] = ()
        match self.hud.index:
            case Starting():
                loose = 0
            case Indexed(workspace=workspace):
                loose = len(workspace.loose_problems())
                followed = tuple(home_relative(p) for p in workspace.watch_paths().values())
        headers.first().show(
            directory=home_relative(self.hud.root),
            followed=followed,
            counts=Counter({status.value: found[status] for status in MissionStatus}),
            problems=sum(s.problems for s in summaries) + loose,
            pending=sum(s.pending for s in summaries),
            watch=self.hud.watch_health,
            unverified=0 if scanning else self.hud.unverified_logs,  # not shown: no count
            read_only=self.hud.read_only,
            scanning=scanning,
            variables=self.app.theme_variables,
        )


class RowScreen(HudScreen, Generic[RowT]):
    """The screen of one overview row (`mission_id`): it follows the changes that touch
    the row, and says so and closes when the row is gone.

    A subclass finds its row (`find_row`, None when gone), words its goodbye (`GONE`,
    formatted with the id) and shows the row (`row_changed`).
    """

    GONE: ClassVar[str] = "{} is gone"

    def __init__(self, mission_id: str) -> None:
        super().__init__()
        self.mission_id = mission_id

    def find_row(self) -> RowT | None:
        """The row's current state; None when it is gone."""
        raise NotImplementedError

    def row_changed(self, row: RowT) -> None:
        """Show the row's current state."""

    def workspace_changed(self, touched: set[str] | None) -> None:
        super().workspace_changed(touched)
        if touched is not None and self.mission_id not in touched:
            return
        self.sub_title = self.mission_id
        row = self.find_row()
        if row is None:
            self.notify(self.GONE.format(self.mission_id), severity="warning")
            self.app.pop_screen()
            return
        self.row_changed(row)
