"""The HUD application: owns the workspace, the watcher and the screens."""

from __future__ import annotations

import asyncio
import gc
import threading
import tomllib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual._files import generate_datetime_filename
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.signal import Signal

from hud import saving, view_settings
from hud.batches import batches
from hud.display import SafeTitles, plain
from hud.driver import held_back
from hud.host import Index, Indexed, Starting
from hud.live import Live
from hud.screens.overview import OverviewScreen
from hud.terminal import end_with_terminal
from themes import DEFAULT_THEME, STYLESHEET, register_themes

if TYPE_CHECKING:
    from textual.command import Provider
    from textual.screen import Screen

    from hud.acts.session import Decider, HumanWriter, Session
    from hud.approvals import ApprovalFeed
    from hud.host import Hud
    from hud.opening import Target
    from hud.roles import Identity, Role
    from store.cache.rows import Began
    from store.format.problems import Problem
    from store.format.records import Settings
    from store.format.row import MissionSummary
    from store.index.workspace import Workspace
    from store.sources.base import ReadAhead
    from store.trust.sshsig import Signer

TICK_SECONDS = 1.0
TICK_ROUND = 15
"""Time alone changes a mission (stale, an expiry, "5m ago"): each tick re-derives every
15th mission, so each is fresh within 15 s and no tick stalls the screen for all of them."""
SETTLE_AFTER = 0.1
"""Seconds between the scan's end being handled and the full collection (`_settle`)."""
SCAN_CHUNK = 200
FIRST_CHUNK = 20
"""The scan's first chunk is about a screenful (a 24-line terminal shows 19 rows): the
first rows show sooner (a cold open's first row at 1,000 missions: 4 % fewer
instructions than with 50)."""
LARGEST_CHUNK = 400
"""Chunks grow from SCAN_CHUNK to this (`hud.batches`): at 10,000 missions each chunk's
own cost (the table's order, the header's counts) is paid 26 times, not 50."""
NARROW_BELOW = 120
"""Below this many columns the screen has the class `-narrow` (else `-wide`) and toasts are
one line (`notify`, themes/hud.tcss)."""
DRAWN_WITHIN = 1.0
"""The most the rest of the kept rows waits for the frame that shows their first chunk."""
THEME_HINT_BYTES = 64 * 1024
"""hud.toml is read early only for its theme; a larger one waits for the scan."""


def hud_commands() -> type[Provider]:
    """The HUD's palette commands (`hud.palette`), loaded when the palette first opens."""
    from hud.palette import HudCommands

    return HudCommands


class HudApp(SafeTitles, App[None]):
    """Operator HUD over one state directory.

    The store (and pydantic with it) is imported by the scan worker, not before the
    first paint: the overview shows at once, with the rows the last HUD kept where they
    still stand (`store.cache.rows`), and fills in as the directory is read.
    The app holds its index from construction (`index`, `hud.host.Index`): `Starting`
    until the scan worker hands over its workspace, then `Indexed`. Until then there is
    no writer, so every write action stays hidden, and what needs the index says so.
    """

    CSS_PATH = STYLESHEET
    TITLE = "Operator HUD"
    ENABLE_COMMAND_PALETTE = True
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]  # noqa: RUF012 (Textual's type)
    COMMANDS: ClassVar = App.COMMANDS | {hud_commands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("exclamation_mark", "problems", "Problems", id="problems"),
        Binding("a", "approvals", "Approvals", id="approvals"),
        Binding("M", "metrics", "Metrics", show=False, id="metrics"),
        Binding("ctrl+t", "next_theme", "Theme", show=False, id="next_theme"),
    ]

    def __init__(
        self,
        root: Path,
        *,
        read_only: bool = False,
        theme: str | None = None,
        live: bool = True,
        clock: Callable[[], datetime] | None = None,
        prefetch: ReadAhead | None = None,
        identity: Identity = (None, None),
        signer: Signer | None = None,
        role: Role = "operator",
        saves: Path | None = None,
        opening: Target | None = None,
    ) -> None:
        super().__init__(driver_class=held_back())
        self.opening = opening
        """The request to open once the first scan is done (`hud DIR --open`)."""
        self.signer = signer
        """Signs every decision made in this HUD (`--sign-key`); None: unsigned."""
        self.root = root.resolve()
        self.clock = clock
        self.prefetch = prefetch
        """A source's state being read in a child process since `hud` started."""
        self.index: Index = Starting()
        """The index of the state directory: `Starting` (no index; the rows shown are the
        last HUD's kept rows or SMALL's preview row, if any), then
        `Indexed` with the workspace the scan fills (`hud.host`)."""
        self._open_when_indexed: tuple[str, str] | None = None
        """A mission opened from a kept or preview row before the scan indexed it: (id, tab)."""
        self._settings_applied: Settings | None = None
        """hud.toml's settings as last applied (`_apply_settings`)."""
        self.role: Role = "reviewer" if read_only else role
        """What this HUD may do (`hud.roles.Role`); `read_only` makes it a reviewer."""
        self.writer: HumanWriter | None = None
        """The only writer the HUD holds (an operator's); None for a reviewer and an
        approver, so nothing but a decision can be written."""
        self.decider: Decider | None = None
        """An approver's only write: a decision; None otherwise (an operator decides
        through its writer)."""
        self.read_only = self.role == "reviewer"
        self.saves = saves
        """`hud serve`'s private folder for exports and screenshots; None: the local rule
        (`hud.saving.export_folder`)."""
        self.identity = identity
        """Who decides and from where (`hud serve`); None: the local user, ssh client or tty."""
        self.live = live
        self.view = view_settings.load()
        """The user's view settings (`hud.view_settings`), kept current by `remember`."""
        self.remembers = (
            not read_only
            and identity == (None, None)
            and not view_settings.path().absolute().is_relative_to(self.root)
        )
        """Whether view changes are saved: never in read-only or served sessions, nor
        into the state directory (a HOME inside it)."""
        remembered = self.view.get("theme")
        self.requested_theme = theme or (remembered if isinstance(remembered, str) else None)
        register_themes(self)  # and pick the theme before mount: the first frame styles once
        self.theme = self._theme_name(self.requested_theme or DEFAULT_THEME)
        if self.requested_theme:
            self.requested_theme = self.theme  # said once if unknown; hud.toml can't undo it
        self.scanned = asyncio.Event()
        self.changed: Signal[set[str] | None] = Signal(self, "changed")
        """Published after the workspace changed: the missions touched, or None for all."""
        self.feed = Live(
            self.root,
            fold_step=self._folded,
            notice=self._notice,
            health_changed=self._health_changed,
        )
        """Changes on disk (and the HUD's own writes) on their way into the workspace."""
        self._ticks = 0
        self.ticking = False
        """True while a tick publishes: only time passed, no file changed."""
        self.summaries: dict[str, MissionSummary] = {}
        """The overview row of every mission, kept current for the touched ones."""
        self.scan_began: Began | None = None
        """When the first scan began (what the rows kept for the next start are judged by)."""

    # ---- start-up ---------------------------------------------------------------------

    def on_mount(self) -> None:
        if not self.is_headless:
            end_with_terminal(self)
        if self.requested_theme is None:
            self.theme_hint()
        self.last_rows()  # the rows kept last time, if they still stand, then the scan
        self.push_screen(OverviewScreen())
        self.set_interval(TICK_SECONDS, self._tick)
        if self.opening is not None:
            from hud.landing import open_when_scanned

            self.run_worker(open_when_scanned(self, self.opening))

    @work(thread=True, exclusive=True, group="rows")
    def last_rows(self) -> None:
        """The overview rows the last HUD kept whose missions are as they were
        (`store.cache.rows`), most urgent first, a chunk at a time, shown while the scan
        runs; the scan starts once the first chunk is drawn (or at once when there is
        none), so the first frame with rows waits for neither the store's import, nor
        the watcher, nor the rest of a large directory's kept rows."""
        from store.cache.rows import load_rows

        drawn = threading.Event()
        first = True
        try:
            for rows in load_rows(self.root):
                if rows or first:
                    self.call_from_thread(self._show_last_rows, rows, drawn if first else None)
                    if first:  # the rest waits for the first frame (it would slow it down)
                        drawn.wait(DRAWN_WITHIN)
                    first = False
        except OSError:
            pass
        if first:
            self.call_from_thread(self._show_last_rows, [], drawn)

    def _show_last_rows(self, rows: list[MissionSummary], drawn: threading.Event | None) -> None:
        """Show kept rows; `drawn` (the first chunk's) is set once they are drawn, and the
        scan starts then."""
        fresh = {row.id: row for row in rows if row.id not in self.summaries}
        if fresh and not self.scanned.is_set():  # the scan's own rows stand, as they come
            self.summaries.update(fresh)
            self.changed.publish(set(fresh))
        if drawn is not None:
            self.call_after_refresh(drawn.set)
            self.call_after_refresh(self._start)  # paint first, then read the directory

    def _start(self) -> None:
        if self.prefetch is not None:
            self.preview()
        if self.live:
            self.watch_state()
            self.scrub_logs()
        self.fold_changes()
        self.scan()

    def now(self) -> datetime:
        """The HUD's clock (injectable for tests)."""
        return self.clock() if self.clock is not None else datetime.now(UTC)

    @work(thread=True, exclusive=True, group="theme")
    def theme_hint(self) -> None:
        """The theme hud.toml asks for, read before the store loads so that the first
        frames are styled as the scan will style them (its settings decide)."""
        wanted = configured_theme(self.root)
        if wanted is not None:
            self.call_from_thread(self._hinted_theme, wanted)

    def _hinted_theme(self, wanted: str) -> None:
        known = self._known_theme(wanted)
        if known is not None and isinstance(self.index, Starting):  # else settings decide
            self.theme = known

    @work(thread=True, exclusive=True, group="preview")
    def preview(self) -> None:
        """The row the prefetch child derived, shown before the store is even imported
        here; the scan replaces it with its own."""
        row = self.prefetch.row() if self.prefetch is not None else None
        if row is not None:
            self.call_from_thread(self._show_preview, row)

    def _show_preview(self, row: MissionSummary) -> None:
        if not self.scanned.is_set() and row.id not in self.summaries:
            self.summaries[row.id] = row
            self.changed.publish({row.id})

    @property
    def workspace(self) -> Workspace:
        """The index's workspace, for what runs only once `Indexed`: the scan's hand-overs,
        the live view's workers, and the screens the actions and `open_mission` open."""
        return self._indexed_now().workspace

    @property
    def approvals(self) -> ApprovalFeed:
        """New requests (a toast, the bell) and request versions seen while decided."""
        return self._indexed_now().approvals

    def _indexed_now(self) -> Indexed:
        match self.index:
            case Indexed() as indexed:
                return indexed
            case Starting():
                raise LookupError(f"{self.root.name} is not indexed yet")

    def _apply_settings(self) -> None:
        """hud.toml's theme and keys, when they differ from those last applied (a file
        folded again unchanged, e.g. by the watcher's catch-up, undoes no theme chosen
        since)."""
        settings = self.workspace.settings
        if settings == self._settings_applied:
            return
        self._settings_applied = settings
        self.theme = self._theme_name(self.requested_theme or settings.theme)
        if settings.keys:
            self.set_keymap(settings.keys)

    def _known_theme(self, wanted: str) -> str | None:
        """The registered theme `wanted` names ("light" means hud-light), if any."""
        return next(
            (name for name in (wanted, f"hud-{wanted}") if name in self.available_themes), None
        )

    def _theme_name(self, wanted: str) -> str:
        """A registered theme for `wanted`; else the default, and says so."""
        known = self._known_theme(wanted)
        if known is None:
            self.notify(f"unknown theme {wanted!r}; using {DEFAULT_THEME}", severity="warning")
        return known or DEFAULT_THEME

    @work(thread=True, exclusive=True, group="scan")
    def scan(self) -> None:
        """Index the directory off the event loop, SCAN_CHUNK missions at a time (the
        first chunk FIRST_CHUNK), each chunk as soon as the walk has found its missions
        (`hud.batches`); other sources' files last, together.

        Each chunk is built in a Workspace of its own and handed to the event loop,
        which absorbs it: rows appear while a large directory is still being read,
        and no thread ever touches the app's workspace or widgets.
        """
        from hud.acts.session import Decider, writer_for
        from hud.approvals import ApprovalFeed
        from store.cache.rows import Began
        from store.index.workspace import Workspace, utc_now

        self.scan_began = Began.now()  # before anything is read
        since = self.scan_began.wall_ns
        workspace = Workspace.cached(self.root, self.clock or utc_now, self.keeps_cache)
        workspace.load_settings()
        writer = writer_for(workspace.root, self.read_only, *self.identity)
        decider = None
        if writer is not None and self.role == "approver":
            decider, writer = Decider(writer), None
        feed = ApprovalFeed(self, workspace, self.scanned)
        self.call_from_thread(self._adopt, workspace, writer, decider, feed)
        external: list[str] = []
        walked: set[str] = set()  # what the watcher's catch-up compares (and `since`)
        for batch in batches(workspace.walk(), FIRST_CHUNK, SCAN_CHUNK, LARGEST_CHUNK):
            walked.update(batch.paths, batch.other)
            external += [path for path in batch.other if workspace.is_external(path)]
            part = workspace.part()  # loose files, signers/: first
            part.apply([path for path in batch.other if not workspace.is_external(path)])
            part.apply(batch.paths)
            self.call_from_thread(self._absorb, part)
        if external:  # other sources' files, each source's all in one part
            part = workspace.part()
            if self.prefetch is not None:
                part.use_prefetched(self.prefetch.result())
            part.apply(external)
            self.call_from_thread(self._absorb, part)
        self.call_from_thread(self._scan_done, walked, since)

    def _adopt(
        self,
        workspace: Workspace,
        writer: HumanWriter | None,
        decider: Decider | None,
        feed: ApprovalFeed,
    ) -> None:
        """Take the workspace the scan worker made (settings loaded, nothing indexed yet)."""
        self.index = Indexed(workspace, feed)
        self.writer = writer
        self.decider = decider
        self.read_only = not self.can_decide
        self._apply_settings()

    @property
    def keeps_cache(self) -> bool:
        """Whether what this HUD verifies goes into the user's cache: never in a read-only
        or served session (as the view settings)."""
        return not self.read_only and self.identity == (None, None)

    def _absorb(self, part: Workspace) -> None:
        self._publish(self.workspace.absorb(part))

    def _scan_done(self, walked: set[str], since_ns: int) -> None:
        self.scanned.set()
        if self.live:
            self.catch_up(walked, since_ns)
        self._publish(None, derived=True)
        self.screen.refresh_bindings()  # the writer's keys: once, after the rows (a recompose)
        # the live frame first: once the scan's messages are handled, the screen's update
        # is due before this timer (at idle alone it may not be drawn yet)
        self.call_after_refresh(self.set_timer, SETTLE_AFTER, self._settle)

    def _settle(self) -> None:
        """After the scan's last frame: what the scan built lives as long as the HUD, so
        it is kept out of the cyclic collector's full passes, which otherwise stall the
        screen for 100+ ms (`hud` starts with the collector off: imports and the scan
        run without it); the logs verified are written into the cache."""
        gc.collect()
        gc.freeze()
        gc.enable()
        self.feed.keep(self.workspace, prune=True)
        self._keep_rows()

    def _keep_rows(self) -> None:
        """Keep the native missions' rows for the next start (`store.cache.rows`), in a
        daemon thread as the logs' cache (never in a read-only or served HUD)."""
        from store.cache.rows import save_rows

        if self.keeps_cache and self.scan_began is not None:
            missions = self.workspace.missions
            rows = [row for row_id, row in self.summaries.items() if row_id in missions]
            threading.Thread(
                target=save_rows, args=(self.root, rows, self.scan_began), daemon=True
            ).start()

    def _publish(self, touched: set[str] | None, *, derived: bool = False) -> None:
        """Re-summarize the touched missions (None: all), then tell the screens.
        `derived`: the rows summarized already stay as they are (the scan's, each made
        when its chunk came; the tick keeps them fresh), only new ones are made."""
        from store.format.row import MissionStatus

        workspace = self.workspace
        ids = workspace.row_ids() if touched is None else touched
        for mission_id in ids:
            if derived and mission_id in self.summaries:
                continue
            summary = workspace.row(mission_id)
            if summary is None:
                self.summaries.pop(mission_id, None)
                continue
            before = self.summaries.get(mission_id)
            self.summaries[mission_id] = summary
            needs_you = MissionStatus.NEEDS_YOU
            if before is not None and summary.status is needs_you is not before.status:
                self._needs_you(summary)
        if touched is None:
            for gone in set(self.summaries) - ids:
                del self.summaries[gone]
        self.approvals.update(touched)
        self.feed.follow(workspace.watch_paths())
        self.changed.publish(touched)
        self._open_if_indexed()

    @property
    def can_decide(self) -> bool:
        """Whether this HUD may decide requests (an approver or an operator)."""
        return self.writer is not None or self.decider is not None

    @property
    def watch_health(self) -> str | None:
        """None while the HUD watches the directory live; else why not, in words."""
        return self.feed.health if self.live else "not watching"

    @property
    def unverified_logs(self) -> int:
        """Logs whose prefix came from the cache and the scrub has not hashed yet (0
        while scanning: the header says "scanning" then, and counting every log at each
        chunk would cost the scan's length squared)."""
        if not self.scanned.is_set():
            return 0
        match self.index:
            case Indexed(workspace=workspace):
                return workspace.trusting()
        return 0

    @work(exclusive=True, group="watch")
    async def watch_state(self) -> None:
        """Queue each batch of file changes (hud.live: the watcher, its health), from the
        scan's end on (arming it while the scan runs would slow the scan)."""
        await self.scanned.wait()
        await self.feed.watch()

    @work(exclusive=True, group="catch-up")
    async def catch_up(self, walked: set[str], since_ns: int) -> None:
        """Queue what changed between the scan's walk and the watcher's start (hud.live)."""
        await self.feed.catch_up(self.workspace, walked, since_ns)

    @work(exclusive=True, group="fold")
    async def fold_changes(self) -> None:
        """Fold queued changes into the workspace once the scan is done (hud.live)."""
        await self.scanned.wait()
        await self.feed.fold(self.workspace)

    @work(exclusive=True, group="scrub")
    async def scrub_logs(self) -> None:
        """Re-verify changed logs in the background (hud.live, store.index.scrub)."""
        await self.scanned.wait()
        await self.feed.scrub(self.workspace)

    def _folded(self, touched: set[str] | None, paths: set[str]) -> None:
        """One step of changes is in the workspace: re-summarize, refresh the screens."""
        if not self.screen_stack:  # the app is closing
            return
        if touched is None or "hud.toml" in paths:
            self._apply_settings()
            touched = None
        self._publish(touched)

    def _notice(self, notice: Problem) -> None:
        self.notify(f"{notice.path}: {notice.message}", title=notice.code, severity="warning")

    def _health_changed(self) -> None:
        self.changed.publish(set())  # the header says whether the HUD is live

    def wrote(self, relpaths: Iterable[str]) -> None:
        """Files the HUD itself just wrote: folded at once, without waiting for the watcher."""
        self.feed.queue(relpaths)

    def session_for(self, screen: Screen[Any]) -> Session:
        """The session of a human act (`hud.acts`) started on `screen`, whose bindings name
        the keys its messages mention."""
        from hud.acts.session import Session
        from hud.offload import in_thread
        from widgets.keys import key_of

        return Session(
            self.workspace,
            self.writer,
            self.wrote,
            self.notify,
            partial(in_thread, self),
            self.feed.reread,
            key=partial(key_of, screen),
            signer=self.signer,
            decider=self.decider,
        )

    def _needs_you(self, summary: MissionSummary) -> None:
        """A toast when a mission starts needing a human, if it still does once the
        changes around it settle (`hud.approvals.SETTLE`: a request stale at once is no news)."""
        from hud.approvals import SETTLE

        self.set_timer(SETTLE, partial(self._still_needs_you, summary.id))

    def _still_needs_you(self, mission_id: str) -> None:
        from store.format.row import MissionStatus

        summary = self.summaries.get(mission_id)
        if summary is not None and summary.status is MissionStatus.NEEDS_YOU:
            message = f"{summary.id} needs you: {summary.title}"
            self.notify(message, title="needs you", severity="warning")

    def _tick(self) -> None:
        """Time passes: stale missions and expired requests change without a file change,
        and a waiter's lease drops when its process dies: the held ones are tested again."""
        if self.scanned.is_set():
            if self.live:
                self.feed.queue(self.workspace.held_leases())
            self._ticks += 1
            due = sorted(self.summaries)[self._ticks % TICK_ROUND :: TICK_ROUND]
            if due:
                self.ticking = True
                try:
                    self._publish(set(due))
                finally:
                    self.ticking = False

    # ---- what the app shows and saves for every screen (hud.display, hud.saving) -------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every toast of the HUD, from anywhere: shown as plain, visible text; `markup`
        is ignored (a toast never renders markup).

        Below `NARROW_BELOW` columns a toast is one line (`title: message`, cut at the
        screen's edge) on the line above the footer, one at a time: the stylesheet puts
        it in the screen's layout there, so it never covers the table."""
        text, heading = plain(message, multiline=True), plain(title)
        if self.size.width < NARROW_BELOW:
            text = " · ".join(filter(None, (heading, *map(str.strip, text.splitlines()))))
            heading = ""
        super().notify(
            text,
            title=heading,
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def get_key_display(self, binding: Binding) -> str:
        """A key as the footer and help show it (hud.toml's [keys] may name anything)."""
        return plain(super().get_key_display(binding))

    def save_folder(self) -> Path | str:
        """Where an export or a screenshot goes, or why nowhere (read-only mode saves
        nothing; `hud serve`'s sessions save into its private folder); looks at folders:
        call it off the event loop."""
        if self.read_only:
            return "read-only: nothing is saved"
        if self.saves is not None:
            try:
                private = saving.private_folder(self.saves, self.root)
            except OSError as exc:
                return f"nothing saved: {exc}"
            return private if private is not None else f"nothing saved: {saving.NOT_PRIVATE}"
        folder = saving.export_folder(self.root)
        return folder if folder is not None else f"nothing saved: {saving.NOWHERE}"

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's palette commands, without Screenshot in read-only mode."""
        for command in super().get_system_commands(screen):
            if not (self.read_only and command.title == "Screenshot"):
                yield command

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Save a screenshot (the palette's Screenshot) where exports go (`save_folder`;
        `path` is not used: it could be inside the state directory), and say where in
        plain words; the file is written in a thread, so there is no delivery key."""
        if self.read_only:
            self.notify("read-only: nothing is saved", severity="warning")
            return None
        name = Path(filename or generate_datetime_filename(self.title, ".svg", time_format))
        self._save_screenshot(name.name, self.export_screenshot())
        return None

    @work(thread=True, exclusive=True, group="screenshot")
    def _save_screenshot(self, name: str, svg: str) -> None:
        folder = self.save_folder()
        if isinstance(folder, str):
            self.notify(folder, severity="error")
            return
        target = folder / name
        try:
            saving.write_text(target, svg)
        except OSError as exc:
            self.notify(f"screenshot not saved: {exc}", severity="error")
            return
        self.notify(f"screenshot saved to {target}")

    # ---- actions ----------------------------------------------------------------------

    def action_help(self) -> None:
        from hud.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def action_problems(self) -> None:
        from hud.screens.problems import ProblemsScreen

        if self._indexed() is not None and not isinstance(self.screen, ProblemsScreen):
            self.push_screen(ProblemsScreen())

    def action_next_theme(self) -> None:
        from themes import THEMES

        names = list(THEMES)
        current = names.index(self.theme) if self.theme in names else -1
        self.choose_theme(names[(current + 1) % len(names)])
        self.notify(f"theme: {self.theme}", timeout=2)

    def choose_theme(self, name: str) -> None:
        """The user picks a theme: shown now, remembered for the next start."""
        self.theme = name
        self.remember(theme=self.theme)

    def remember(self, **changes: str | bool) -> None:
        """A view setting the user changed: kept for this session, and saved in the
        user's file (`hud.view_settings`, off the event loop) unless read-only or served."""
        self.view.update(changes)
        if self.remembers:
            view = dict(self.view)
            self.run_worker(partial(view_settings.save, view), thread=True, group="view")

    def action_metrics(self) -> None:
        from hud.screens.metrics import MetricsScreen

        if self._indexed() is not None and not isinstance(self.screen, MetricsScreen):
            self.push_screen(MetricsScreen())

    def action_approvals(self) -> None:
        from hud.screens.approvals import ApprovalsScreen

        if self._indexed() is not None and not isinstance(self.screen, ApprovalsScreen):
            self.push_screen(ApprovalsScreen())

    def open_request(self, mission_id: str, request_id: str) -> None:
        from hud.screens.approvals import RequestScreen

        indexed = self._indexed()
        mission = indexed.workspace.missions.get(mission_id) if indexed is not None else None
        if mission is not None and request_id in mission.requests:
            self.push_screen(RequestScreen(mission_id, request_id))
        elif mission is None:  # another source's request (`Source.asks`): its row
            self.open_mission(mission_id)

    def open_mission(self, mission_id: str, tab: str = "") -> None:
        """Open a row's detail screen by id (a native mission's on `tab`); unknown ids do
        nothing.

        A row shown before its files are indexed (the prefetch preview) opens as soon as
        the scan has them.
        """
        screen = self._mission_screen(mission_id, tab)
        if screen is not None:
            self.push_screen(screen)
        elif not self.scanned.is_set():
            self._open_when_indexed = (mission_id, tab)

    def _mission_screen(self, mission_id: str, tab: str) -> Screen[None] | None:
        from hud.screens.details import detail_screen

        match self.index:
            case Starting():
                return None
            case Indexed(workspace=workspace):
                kind = workspace.detail_of(mission_id)
                return detail_screen(kind, mission_id, tab) if kind is not None else None

    def _open_if_indexed(self) -> None:
        """Open the mission asked for during the scan, once it is indexed (or give up)."""
        if self._open_when_indexed is None:
            return
        screen = self._mission_screen(*self._open_when_indexed)
        if screen is not None or self.scanned.is_set():
            self._open_when_indexed = None
        if screen is not None:
            self.push_screen(screen)

    def _indexed(self) -> Indexed | None:
        """The index once the scan has handed over its workspace; None before, and says so."""
        match self.index:
            case Indexed() as indexed:
                return indexed
            case Starting():
                self.notify(self.still_reading(), timeout=2)
                return None

    def still_reading(self) -> str:
        """What the HUD says while its scan runs."""
        return f"still reading {self.root.name}…"


if TYPE_CHECKING:

    def _a_hud(app: HudApp) -> Hud:
        """The app is what its screens take it for (`hud.host.Hud`), checked by mypy."""
        return app


def configured_theme(root: Path) -> str | None:
    """The theme hud.toml asks for (None if unsaid or unreadable); it never blocks and
    follows no symlink. The store validates the whole file later: this only keeps the
    first frames from flashing the default theme."""
    from store.format.confined import read_file

    data = read_file(root, "hud.toml", THEME_HINT_BYTES)
    if not isinstance(data, bytes):
        return None
    try:
        theme = tomllib.loads(data.decode("utf-8")).get("theme")
    except ValueError:
        return None
    return theme if isinstance(theme, str) else None
