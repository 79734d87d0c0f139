"""The replay tab's reads: one mission's `store.analysis.replay.Replay`, used in thread workers.

`ReplayFeed.read` runs in a thread (it reads what changed in the mission's folder, then
folds at most a checkpoint's worth of lines); the frame is handed to the event loop,
which shows only the newest request's answer. A log replayed before starts from the
user's cache at the end of what was verified then (`Replay`); once the first frame is
shown, the worker hashes that prefix again (`ReplayFeed.verify`) and, if it changed,
reads the log from the start and shows the frame again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from store.analysis.replay import Frame, Replay

if TYPE_CHECKING:
    from textual.dom import DOMNode

REPLAY_READ = "replay-read"
"""The worker group of replay reads (tests wait for it to be idle)."""


class ReplayFeed:
    """One mission's replay, read on demand; one read at a time (a lock)."""

    def __init__(self, root: Path, mission_id: str) -> None:
        self.root, self.mission_id = root, mission_id
        self._replay: Replay | None = None
        self._lock = threading.Lock()
        self._asked = 0

    def read(self, seq: int | None) -> tuple[Frame | None, int]:
        """(the frame of event `seq`, kept within the log, or of the newest when None;
        how many events the log has). Reads files: call it off the event loop."""
        with self._lock:
            if self._replay is None:
                self._replay = Replay(self.root, self.mission_id)
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
        self, node: DOMNode, seq: int | None, show: Callable[[Frame | None, int], None]
    ) -> None:
        """Read frame `seq` in a thread worker of `node`, then `show` it on the event loop
        unless a later `ask` came meanwhile; then hash what came from the cache on trust
        and, if it changed, read and show the frame again."""
        self._asked += 1
        ticket = self._asked

        def done(found: tuple[Frame | None, int]) -> None:
            if ticket == self._asked:
                show(*found)

        def work() -> None:
            found = self.read(seq)
            node.app.call_from_thread(done, found)
            if not self.verify():  # the cached prefix changed: read from the start
                node.app.call_from_thread(done, self.read(seq))

        node.run_worker(work, thread=True, group=REPLAY_READ)
