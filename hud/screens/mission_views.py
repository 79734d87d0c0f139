"""The mission screen's tabs: for each, a widget and how to feed it from a MissionState.

Views here do the reading (they may call the store); widgets only render what they are
given. A view runs for the active tab on every change to its mission and when the tab
is shown, so each one does work in proportion to what changed: logs are read from where
the view left off (`LogFeed`), artifacts are hashed again only when their file changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar
from weakref import WeakKeyDictionary

from textual.widget import Widget

from hud.replaying import ReplayFeed
from hud.screens.base import RowScreen
from store.analysis.review import review
from store.derivation.derive import budget_use
from store.derivation.mission import MissionState
from store.format.load import LogReader, Window
from store.format.problems import Problem
from widgets.tabs.budget import BudgetView
from widgets.tabs.evidence import WINDOW as EVIDENCE_WINDOW
from widgets.tabs.evidence import EvidenceView
from widgets.tabs.execution import WINDOW as EVENTS_WINDOW
from widgets.tabs.execution import ExecutionView
from widgets.tabs.handoff import HandoffView
from widgets.tabs.intent import IntentView
from widgets.tabs.plan import PlanVersion, PlanView
from widgets.tabs.replay import ReplayView
from widgets.tabs.review import ReviewView

W = TypeVar("W", bound=Widget)


@dataclass(frozen=True)
class Tab:
    id: str
    title: str
    widget: Callable[[], Widget]
    update: Callable[[RowScreen[Any], MissionState], None]


# ---- reading logs incrementally ------------------------------------------------------------


@dataclass
class LogFeed:
    """Where a view left off in one log: only lines appended since are read again.

    A new reader, another inode, a log that shrank or whose last-read line moved, or
    more new lines than the widget keeps, all mean: start over from the last `window`
    lines (`reset`).
    """

    reader: LogReader | None = None
    inode: int | None = None
    read: int = 0
    last_start: int | None = None

    def poll(self, reader: LogReader | None, window: int) -> tuple[Window | None, bool]:
        """(where the new lines are, to read off the event loop; whether the widget must
        reset)."""
        if reader is None:
            reset = self.reader is not None or self.read > 0
            self.reader, self.inode, self.read, self.last_start = None, None, 0, None
            return None, reset
        starts = reader.line_starts
        total = len(starts)
        reset = (
            reader is not self.reader
            or reader.inode != self.inode
            or total < self.read
            or (self.read > 0 and starts[self.read - 1] != self.last_start)
            or total - self.read > window
        )
        first = max(0, total - window) if reset else self.read
        span = reader.window(first, total - first)
        self.reader, self.inode, self.read = reader, reader.inode, total
        self.last_start = starts[total - 1] if total else None
        return span, reset


@dataclass
class ViewState:
    """What a view remembers between updates of one widget."""

    feed: LogFeed = field(default_factory=LogFeed)
    reading: bool = False
    """A read of new lines is under way in a thread: the next update waits for it."""
    again: bool = False
    """The log changed while it was being read: update once more when it is done."""


LINES_READ = "log-lines"
"""The worker group of log reads (tests wait for it to be idle)."""


def follow(
    screen: RowScreen[Any],
    view: Widget,
    reader: LogReader | None,
    window: int,
    show: Callable[[list[tuple[int, Any]], bool], None],
    again: Callable[[], None],
) -> None:
    """Read the log's new lines in a thread worker, then `show` them on the event loop,
    in order: an update while a read is under way runs `again` once it is done."""
    state = state_of(view)
    if state.reading:
        state.again = True
        return
    span, reset = state.feed.poll(reader, window)
    if span is None:
        show([], reset)
        return
    state.reading = True

    def done(lines: list[tuple[int, Any]]) -> None:
        state.reading = False
        show(lines, reset)
        if state.again:
            state.again = False
            again()

    def read() -> None:
        lines = span.read()
        screen.app.call_from_thread(done, lines)

    screen.run_worker(read, thread=True, group=LINES_READ)


_STATES: WeakKeyDictionary[Widget, ViewState] = WeakKeyDictionary()


def state_of(widget: Widget) -> ViewState:
    state = _STATES.get(widget)
    if state is None:
        state = _STATES[widget] = ViewState()
    return state


def find(screen: RowScreen[Any], kind: type[W]) -> W | None:
    found = screen.query(kind)
    return found.first() if found else None


# ---- artifacts ---------------------------------------------------------------------------


def artifact_checks(mission: MissionState) -> dict[str, str]:
    """The check result of every artifact evidence cites, keyed by the path it cites
    (`ok`, `mismatch`, `missing`, `unreadable`; none yet while it is being hashed)."""
    prefix = f"{mission.base}/artifacts/"
    checks = {}
    for relpath in mission.artifact_refs:
        shown = relpath[len(prefix) :] if relpath.startswith(prefix) else relpath
        checked = mission.artifact_checks.get(relpath)
        if relpath not in mission.artifacts:
            checks[shown] = "missing"
        elif checked is not None:
            checks[shown] = checked.verdict
    return checks


# ---- the views ------------------------------------------------------------------------------


def update_intent(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, IntentView)
    if view is None:
        return
    intent, constraints = mission.intent, mission.constraints
    view.show(
        intent.record if intent else None,
        constraints.record if constraints else None,
        intent_problems=intent.problems if intent else (),
        constraints_problems=constraints.problems if constraints else (),
        intent_path=f"{mission.base}/intent.toml",
        constraints_path=f"{mission.base}/constraints.toml",
        policy=mission.effective_policy.describe(),
    )


def update_plan(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, PlanView)
    if view is None:
        return
    versions = [
        PlanVersion(version, loaded.record, tuple(loaded.problems))
        for version, loaded in mission.plans.items()
    ]
    view.show(versions, mission.step_latest)


class LogFacts(TypedDict):
    """What a log tab shows of its reader besides the lines (`LogView.show`)."""

    total: int
    chain_broken_at: int | None
    seq_broken_at: int | None
    unverified_from: int | None
    file_problems: tuple[Problem, ...]


def log_facts(reader: LogReader | None) -> LogFacts:
    """The reader's line count, breaks and the problems of the file itself (no line: not
    a regular file, a symlink, unreadable), which no line of the table can show."""
    if reader is None:
        return LogFacts(
            total=0,
            chain_broken_at=None,
            seq_broken_at=None,
            unverified_from=None,
            file_problems=(),
        )
    return LogFacts(
        total=len(reader.line_starts),
        chain_broken_at=reader.chain_broken_at,
        seq_broken_at=reader.seq_broken_at,
        unverified_from=reader.unverified_from,
        file_problems=reader.file_problems,
    )


def update_execution(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, ExecutionView)
    if view is None:
        return

    def show(lines: list[tuple[int, Any]], reset: bool) -> None:
        view.show(lines, reset=reset, **log_facts(mission.events))

    again = lambda: update_execution(screen, mission)  # noqa: E731
    follow(screen, view, mission.events, EVENTS_WINDOW, show, again)


def update_evidence(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, EvidenceView)
    if view is None:
        return

    def show(lines: list[tuple[int, Any]], reset: bool) -> None:
        view.show(
            lines, reset=reset, checks=artifact_checks(mission), **log_facts(mission.evidence)
        )

    again = lambda: update_evidence(screen, mission)  # noqa: E731
    follow(screen, view, mission.evidence, EVIDENCE_WINDOW, show, again)


def update_budget(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, BudgetView)
    if view is None:
        return
    now = screen.hud.workspace.clock()
    view.show(budget_use(mission, now), list(mission.usage), now)


def update_handoff(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, HandoffView)
    if view is None:
        return
    loaded = mission.handoff
    handoff = loaded.record if loaded else None
    step_state = None
    if handoff is not None and handoff.current_step:
        latest = mission.step_latest.get(handoff.current_step)
        step_state = latest.state if latest else None
    reader = mission.evidence
    verdicts = {  # only what the hash chain still vouches for
        seen.id: seen.verdict
        for seen in mission.recent_evidence
        if reader is None or reader.vouches_for(seen.line)
    }
    view.show(
        handoff,
        loaded.problems if loaded else (),
        path=f"{mission.base}/handoff.json",
        step_state=step_state,
        verdicts=verdicts,
    )


def update_replay(screen: RowScreen[Any], mission: MissionState) -> None:
    """The frame of the event the view wants (or aims at), with its landmarks, read in a
    thread (`hud.replaying`); the log's new lines are then read for landmarks, and the
    view asked again once they are."""
    view = find(screen, ReplayView)
    if view is not None:
        feed = _REPLAYS.get(view)
        if feed is None:  # made when first wanted, for the life of the view
            hud = screen.hud
            feed = _REPLAYS[view] = ReplayFeed(hud.root, screen.mission_id, hud.keeps_cache)
        again = lambda: update_replay(screen, mission)  # noqa: E731
        feed.ask(screen, view.wanted, view.show, aim=view.aim, again=again)


_REPLAYS: WeakKeyDictionary[ReplayView, ReplayFeed] = WeakKeyDictionary()
"""The replay tab's reads of its mission, per view."""


def update_review(screen: RowScreen[Any], mission: MissionState) -> None:
    view = find(screen, ReviewView)
    if view is None:
        return
    wanted = view.selected if view.selected in mission.plans else None
    view.show(review(mission, wanted), list(mission.plans))


TABS: list[Tab] = [
    Tab("intent", "Intent", IntentView, update_intent),
    Tab("plan", "Plan", PlanView, update_plan),
    Tab("execution", "Execution", ExecutionView, update_execution),
    Tab("evidence", "Evidence", EvidenceView, update_evidence),
    Tab("budget", "Budget", BudgetView, update_budget),
    Tab("handoff", "Handoff", HandoffView, update_handoff),
    Tab("replay", "Replay", ReplayView, update_replay),
    Tab("review", "Review", ReviewView, update_review),
]
