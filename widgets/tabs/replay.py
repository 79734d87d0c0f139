"""Replay: the mission as it was at one event of its log, stepped through by key.

The widget keeps which event is wanted (`seq`, or the newest while `live`, and an `aim`
from it: the next or previous landmark, the first event a problem cites) and posts
`Reselected` when that changes; the mission screen reads the frame off the event loop
and hands it to `show`, with where it sits among the log's landmarks. Nothing here
reads a file.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static

from store.analysis.landmarks import Aim, Bearings
from store.analysis.replay import Frame
from widgets.hanging import Document
from widgets.tabs.common import (
    DocumentScroll,
    FocusOnShow,
    Reselected,
    ThemeAware,
    problems_block,
)
from widgets.tabs.replay_jump import JumpDialog
from widgets.tabs.replay_text import frame_text, landmark_text, timeline_text

PLAY_SECONDS = 0.5
"""How long `p` shows each event before it steps to the next."""


class ReplayView(ThemeAware, FocusOnShow, DocumentScroll):
    """A timeline bar over the frame of the wanted event, changes marked."""

    DEFAULT_CSS = """
    ReplayView { padding: 0 1; scrollbar-gutter: stable; }
    ReplayView > #replay-head { dock: top; height: 2; }
    ReplayView #replay-bar { height: 1; background: $panel; }
    ReplayView #replay-marks { height: 1; }
    ReplayView > #replay-doc { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left_square_bracket", "step(-1)", "Event back", id="replay.back"),
        Binding("right_square_bracket", "step(1)", "Event forward", id="replay.forward"),
        Binding("home", "first", "First event", show=False, id="replay.first"),
        Binding("end,l", "live", "Live", id="replay.live"),
        Binding("p", "play", "Play/pause", id="replay.play"),
        Binding("colon", "jump", "Jump to seq", id="replay.jump"),
        Binding("n", "landmark(1)", "Next landmark", id="replay.next_landmark"),
        Binding("N", "landmark(-1)", "Prev landmark", id="replay.prev_landmark"),
        Binding("f", "first_problem", "First problem", id="replay.first_problem"),
    ]

    def __init__(self, *, id: str | None = "replay-view") -> None:
        super().__init__(id=id)
        self.seq = 0
        """The event wanted (the newest while `live`)."""
        self.last_seq = 0
        self.live = True
        """Following the newest event: the LIVE pin."""
        self.frame: Frame | None = None
        self.read = False
        """A frame (or the news that there is none) has come."""
        self.aim: Aim | None = None
        """Where to go from `seq`, until a frame answers it."""
        self.bearings: Bearings | None = None
        self._player: Timer | None = None
        self._shown: tuple[Text, ...] = ()
        self._doc = Text("Reading the events log…", style="dim")
        """The frame's text, made on `show` and on a theme change (the bar alone follows
        steps, play and width)."""
        self.bar = Static(id="replay-bar")
        self.landmarks = Static(id="replay-marks")
        self.doc = Document(id="replay-doc")

    def compose(self) -> ComposeResult:
        with Vertical(id="replay-head"):
            yield self.bar
            yield self.landmarks
        yield self.doc

    def on_resize(self) -> None:
        self._render_bar()  # the timeline fits the width (the gutter is kept: it never moves)

    @property
    def wanted(self) -> int | None:
        """The event to read: None for the newest."""
        return None if self.live else self.seq

    @property
    def playing(self) -> bool:
        return self._player is not None

    def show(self, frame: Frame | None, last_seq: int, bearings: Bearings | None = None) -> None:
        """The frame of the wanted event (None: the log has no event yet) and where it
        sits among the landmarks; a frame that answers the aim is where the view goes."""
        if self.aim is not None and bearings is not None and bearings.aim != self.aim:
            return  # an answer to an earlier wish: the aimed one is on its way
        answered = self.aim is not None  # (or the log has no event to aim at)
        self.frame, self.last_seq, self.read, self.bearings = frame, last_seq, True, bearings
        if frame is not None and (self.live or self.seq > last_seq or answered):
            self.seq = frame.moment.seq
        self.aim = None
        self.rerender()

    def rerender(self) -> None:
        if self.frame is not None:
            self._doc = frame_text(self.frame, self.variables)
        elif self.read and self.bearings is not None and self.bearings.problem is not None:
            self._doc = Text("\n").join(
                (
                    Text("The events log is not read: nothing to replay.", style="bold"),
                    problems_block([self.bearings.problem], self.variables),
                )
            )
        elif self.read:
            self._doc = Text("No events yet: nothing to replay.", style="dim")
        else:
            self._doc = Text("Reading the events log…", style="dim")
        self._render_bar()

    def _render_bar(self) -> None:
        """Show the bar for the wanted event, play state and width over the frame's text."""
        width = max(20, (self.scrollable_content_region.width or 78) - 1)
        bar = timeline_text(
            self.seq,
            self.last_seq,
            live=self.live,
            playing=self.playing,
            width=width,
            variables=self.variables,
            ticks=self.bearings.ticks if self.bearings is not None else (),
        )
        marks = self._marks_line(width)
        doc = self._doc
        if (bar, marks, doc) == self._shown:
            return
        self._shown = (bar, marks, doc)
        self.bar.update(bar)
        self.landmarks.update(marks)
        self.doc.update(doc)

    def _marks_line(self, width: int) -> Text:
        if self.read and self.frame is None:
            return Text()
        bearings = self.bearings
        if bearings is None or self.frame is None or self.frame.moment.seq != self.seq:
            return Text("landmarks: …", style="dim")  # until the frame wanted comes
        return landmark_text(self.seq, bearings, self.last_seq, width, self.variables)

    @property
    def shown_text(self) -> str:
        """The bar, the landmark line and the frame as plain text (for tests)."""
        return "\n".join(text.plain for text in self._shown)

    # ---- keys -----------------------------------------------------------------------------

    def _go(self, seq: int, *, live: bool = False) -> None:
        self.seq = max(1, min(seq, self.last_seq)) if self.last_seq else 0
        self.live, self.aim = live, None
        self._render_bar()
        self.post_message(Reselected())

    def _aim(self, kind: str, hops: int) -> None:
        """Go where `kind` points from the event shown (the reading finds where)."""
        self._stop()
        pending = self.aim if self.aim is not None and self.aim[0] == kind == "landmark" else None
        self.aim = (kind, hops + (pending[1] if pending else 0), self.seq)
        self.live = False
        self._render_bar()
        self.post_message(Reselected())

    def action_landmark(self, hops: int) -> None:
        """The next (or previous) landmark: an approval asked or decided, a handoff, a
        plan version, a failure, a budget threshold crossed."""
        self._aim("landmark", hops)

    def action_first_problem(self) -> None:
        """The first event a problem of `hud check` cites."""
        self._aim("problem", 0)

    def action_jump(self) -> None:
        """Ask for a seq, then show that event."""
        if not self.last_seq:
            self.notify("No events yet: nothing to jump to.", severity="warning")
            return

        def jump(seq: int | None) -> None:
            if seq is not None:
                self._stop()
                self._go(seq)

        self.app.push_screen(JumpDialog(self.last_seq), jump)

    def action_step(self, step: int) -> None:
        self._go(self.seq + step)

    def action_first(self) -> None:
        self._go(1)

    def action_live(self) -> None:
        """Snap to the newest event and follow it."""
        self._stop()
        self._go(self.last_seq, live=True)

    def action_play(self) -> None:
        """Step forward every PLAY_SECONDS (from the first event when at the newest);
        again: pause."""
        if self._stop():
            self._render_bar()
            return
        if self.live or self.seq >= self.last_seq:
            self._go(1)
        self._player = self.set_interval(PLAY_SECONDS, self._tick)
        self._render_bar()

    def _tick(self) -> None:
        if self.seq >= self.last_seq:
            self.action_live()
        else:
            self.action_step(1)

    def _stop(self) -> bool:
        """Stop playing; False when it was not."""
        if self._player is None:
            return False
        self._player.stop()
        self._player = None
        return True
