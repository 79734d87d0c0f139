"""The replay tab's reads: one mission's `store.analysis.replay.Replay`, used in thread workers.

`ReplayFeed.read` runs in a thread (it reads what changed in the mission's folder, then
folds at most a checkpoint's worth of lines); the frame is handed to the event loop,
which shows only the newest request's answer. `ReplayFeed.aimed` does the same for an
`Aim` (the next or previous landmark, the first event a problem cites) with the
`Bearings` of the frame. The replay's fold feeds the events log's
`store.analysis.landmarks.Landmarks` as it reads the log from its first line (`Replay`'s
`marking`: no second read of each line); `ReplayFeed.scan` feeds those it did not (the
lines after the landmarks the cache kept, when the log resumed from the cache; lines
that do not load, at the end), a chunk at a time, after the frame is shown, and keeps
them in the user's cache once they hold every line (`store.analysis.landmarks_cache`):
opened again, the tab reads only the lines after them.
A log replayed before starts from the user's cache at the end of what was verified then
(`Replay`); once the first frame is shown, the worker hashes that prefix again
(`ReplayFeed.verify`) and, if it changed, reads the log from the start and shows the
frame again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from store.analysis import landmarks_cache
from store.analysis.landmarks import Aim, Bearings, Landmarks, first_cited
from store.analysis.replay import Frame, Replay
from store.format.load import LogReader, Window
from store.format.problems import Problem

if TYPE_CHECKING:
    from textual.dom import DOMNode

REPLAY_READ = "replay-read"
"""The worker group of replay reads (tests wait for it to be idle)."""
SCAN_LINES = 2048
"""Lines of the events log read at a time for landmarks (a jump waits for one chunk's
fold at most)."""
TICKS = 256
"""Stretches of the log the position bar's landmark ticks are found for."""


class ReplayFeed:
    """One mission's replay, read on demand; one read at a time (a lock)."""

    def __init__(self, root: Path, mission_id: str, keep: bool = True) -> None:
        self.root, self.mission_id, self.keep = root, mission_id, keep
        """`keep`: whether what is verified goes into the user's cache (never in a
        read-only or served session)."""
        self._replay: Replay | None = None
        self._lock = threading.Lock()
        self._asked = 0
        self.landmarks = Landmarks()
        self._scanned: tuple[LogReader, int] | None = None
        """The reader and generation the landmarks were fed from."""
        self._scanning = False
        self._saved_at = 0
        """How many lines the landmarks held when last kept in (or loaded from) the cache."""

    def _open(self) -> Replay:
        return Replay(self.root, self.mission_id, keep=self.keep, marking=True)

    def read(self, seq: int | None) -> tuple[Frame | None, int]:
        """(the frame of event `seq`, kept within the log, or of the newest when None;
        how many events the log has). Reads files: call it off the event loop."""
        with self._lock:
            if self._replay is None:
                self._replay = self._open()
            self._replay.refresh()
            last = self._replay.last_seq
            if last == 0:
                return None, 0
            target = last if seq is None else max(1, min(seq, last))
            return self._replay.frame(target), last

    def verify(self) -> bool:
        """Hash again what the replay took on trust from the cache (`Replay.verify`);
        False when it changed (the logs were read again from the start). Reads files:
        call it off the event loop."""
        with self._lock:
            return self._replay is None or self._replay.verify()

    def ask(
        self,
        node: DOMNode,
        seq: int | None,
        show: Callable[[Frame | None, int, Bearings | None], None],
        *,
        aim: Aim | None = None,
        again: Callable[[], None] = lambda: None,
    ) -> None:
        """Read frame `seq` (or where `aim` points from it: `aimed`) in a thread worker
        of `node`, then `show` it on the event loop unless a later `ask` came meanwhile;
        then hash what came from the cache on trust and, if it changed, read and show the
        frame again; then, in the same worker, `scan` the lines the read found and run
        `again` on the event loop when there were any (the landmarks changed)."""
        self._asked += 1
        ticket = self._asked

        def done(found: tuple[Frame | None, int, Bearings | None]) -> None:
            if ticket == self._asked:
                show(*found)

        from textual.worker import get_current_worker

        def work() -> None:
            found = self.aimed(seq, aim)
            node.app.call_from_thread(done, found)
            if not self.verify():  # the cached prefix changed: read from the start
                node.app.call_from_thread(done, self.aimed(seq, aim))
            worker = get_current_worker()  # cancelled when the app closes
            if self.scan(lambda: worker.is_cancelled):
                node.app.call_from_thread(again)

        node.run_worker(work, thread=True, group=REPLAY_READ)

    # ---- landmarks -------------------------------------------------------------------------

    def aimed(self, seq: int | None, aim: Aim | None) -> tuple[Frame | None, int, Bearings | None]:
        """`read` the frame of the event `aim` points to from event `seq` (the newest
        when None), with its `Bearings`. Reads files: call it off the event loop."""
        with self._lock:
            if self._replay is None:
                self._replay = self._open()
            replay = self._replay
            replay.refresh()
            last = replay.last_seq
            if last == 0:  # with the reason when the log itself is not read
                unread = replay.unread
                if unread is None:
                    return None, 0, None
                return None, 0, Bearings((), None, None, (), unread, 0, aim)
            self._catch_up(last)
            self._place(replay)
            start = last if seq is None else max(1, min(seq, last))
            problem = first_cited(self._problems(replay), replay.mission.events_path, last)
            target, note = self._target(start, aim, problem)
            marks = self.landmarks
            bearings = Bearings(
                here=tuple(marks.at(target)),
                previous=marks.before(target),
                following=marks.after(target),
                ticks=marks.ticks(last, TICKS),
                problem=problem,
                scanned=marks.lines,
                aim=aim,
                note=note,
            )
        frame, last = self.read(target)
        return frame, last, bearings

    def _catch_up(self, last: int) -> None:
        """Feed the landmarks here when one chunk is all that is left of the log (a small
        log, a few lines appended): the frame comes with them all."""
        window = self._next_window()
        if window is not None and window.first + window.count == last:
            self.landmarks.add(window.read())

    def _place(self, replay: Replay) -> None:
        mission = replay.mission
        constraints = mission.constraints.record if mission.constraints else None
        self.landmarks.place(
            plans={version: loaded.record for version, loaded in mission.plans.items()},
            requests={rid: loaded.record for rid, loaded in mission.requests.items()},
            decisions={rid: loaded.record for rid, loaded in mission.decisions.items()},
            handoff=mission.handoff.record if mission.handoff else None,
            budget=constraints.budget if constraints else None,
        )

    def _problems(self, replay: Replay) -> list[Problem]:
        """The mission's problems as `hud check` reports them."""
        return replay.workspace.problems_by_row().get(self.mission_id, [])

    def _target(self, start: int, aim: Aim | None, problem: Problem | None) -> tuple[int, str]:
        """The event `aim` points to from `start`, and why it stays there when it does."""
        kind, hops, _ = aim or ("landmark", 0, start)
        if kind == "landmark" and hops == 0:  # none asked, or as many back as forward
            return start, ""
        if kind == "problem":
            if problem is None or problem.line is None:
                return start, "no problem of hud check cites an event of this log"
            return problem.line, ""
        target = start
        for _ in range(abs(hops)):
            found = self.landmarks.after(target) if hops > 0 else self.landmarks.before(target)
            if found is None:
                break
            target = found
        if target != start:
            return target, ""
        way = "after" if hops > 0 else "before"
        read = self.landmarks.lines
        last = self._replay.last_seq if self._replay is not None else read
        unread = f" (landmarks read to seq {read} of {last})" if read < last else ""
        return start, f"no landmark {way} seq {start}{unread}"

    def scan(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """Feed the landmarks every line of the events log not fed yet, SCAN_LINES at a
        time (read outside the lock, folded under it), until `stop()` between two, then
        keeps them in the cache when they hold every line; False when there was none or
        another scan is under way. Reads and writes files: call it off the event loop."""
        with self._lock:
            if self._scanning or self._replay is None:
                return False
            self._scanning = True
        fed = False
        try:
            while True:
                with self._lock:
                    window = None if stop() else self._next_window()
                    if window is None:
                        self._scanning = False
                        if fed:  # documents land on the events read since
                            self._place(self._replay)
                        replay, marks = self._replay, self.landmarks
                        found = None if stop() else self._keepable()
                        break
                    generation = self._scanned
                lines = window.read()
                with self._lock:
                    if not lines:  # the file cannot be read now: a later read tries again
                        self._scanning = False
                        return fed
                    if generation == self._scanned and window.first == self.landmarks.lines:
                        self.landmarks.add(lines)
                        fed = True
        except BaseException:
            with self._lock:
                self._scanning = False
            raise
        if found is not None and replay.cache is not None:
            saved = landmarks_cache.save(replay.cache, replay.workspace.root, found)
            with self._lock:
                if saved and marks is self.landmarks:
                    self._saved_at = marks.lines
        return fed

    def _keepable(self) -> landmarks_cache.Kept | None:
        """The landmarks to keep in the cache, when they hold every line the replay read
        and verified itself, and were not kept at this length already (under the lock)."""
        replay = self._replay
        if replay is None or not replay.keeps or replay.cache is None:
            return None
        reader = replay.mission.events
        if reader is None or self.landmarks.lines == self._saved_at:
            return None
        return landmarks_cache.kept(reader, self.landmarks)

    def _kept(self, reader: LogReader) -> Landmarks:
        """The landmarks the cache kept for the prefix `reader` holds, else none yet (IO)."""
        replay = self._replay
        if replay is None or replay.cache is None:
            return Landmarks()
        return landmarks_cache.load(replay.cache, replay.workspace.root, reader) or Landmarks()

    def _next_window(self) -> Window | None:
        """The next lines to feed (None: none); a log read again from the top starts the
        landmarks again."""
        assert self._replay is not None
        reader = self._replay.mission.events
        if reader is None:
            if self.landmarks.lines:
                self.landmarks, self._scanned = Landmarks(), None
            return None
        seen = (reader, reader.generation)
        if seen != self._scanned or len(reader.line_starts) < self.landmarks.lines:
            folded = self._replay.mission.landmarks  # fed by the fold from the first line
            self.landmarks = self._kept(reader) if folded is None else folded
            self._scanned = seen
            self._saved_at = self.landmarks.lines if folded is None else 0
        return reader.window(self.landmarks.lines, SCAN_LINES)
