"""The notifier's loop: the state directory watched and folded as the HUD does it
(`hud.live.Live` around `store.index.workspace.Workspace`), events derived after each
change and each second, and each target's courier given what it has not been told.

An event is offered once it has held for `settle` seconds (an agent may write a
decision or a newer plan just after a request, as the HUD's toasts wait too). The
first scan is not "old news": what is pending when the notifier starts and was never
sent is sent (the sent record stops a restart from sending it twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from hud.live import Live
from hud.notify.events import Lead, derive_events
from store.format.text import safe_str
from store.index.workspace import Workspace

if TYPE_CHECKING:
    from hud.notify.courier import Courier, Report
    from store.format.problems import Problem

TICK = 1.0
"""Events are derived again at least this often, and the leases of waiters are tested
(as the HUD's tick does: a waiter's death changes no file)."""
STOP_SECONDS = 2.0
"""How long stopping waits for the tasks to end: a message on its way is waited for so that
it is recorded as sent (`Courier.deliver`); one that hangs longer is left, unrecorded."""
WATCH_START = 5.0
"""The longest the catch-up waits for the watcher to be armed (`Live.armed`)."""


class Notifier:
    """Watches one state directory and feeds its couriers."""

    def __init__(
        self,
        root: Path,
        couriers: list[Courier],
        lead: Lead,
        report: Report,
        settle: float,
    ) -> None:
        self.root = root
        self.couriers = couriers
        self.lead = lead
        self.report = report
        self.settle = settle
        """Seconds an event must hold before it is sent."""
        self.workspace = Workspace(root)
        self.live = Live(root, self._folded, self._notice, self._health_changed)
        self._wake = asyncio.Event()
        self._first_seen: dict[str, float] = {}
        self._leases_tested = 0.0
        self._sending: dict[Courier, asyncio.Task[None]] = {}
        self.ready = asyncio.Event()
        """Set once the directory is watched and read (a change after it is heard)."""

    def answer_by(self, ssh: str) -> None:
        """Tell people to answer with `ssh` (`hud serve --notify`, once it listens),
        unless they were told how already (notify.toml's `ssh`, `--ssh`)."""
        for courier in self.couriers:
            if courier.answer.ssh is None:
                courier.answer = replace(courier.answer, ssh=ssh)

    async def run(self, stop: asyncio.Event) -> None:
        """Notify until `stop` is set; a task that fails (a bug) ends the run with its
        exception rather than leaving a notifier that no longer notifies."""
        tasks = [asyncio.create_task(self.live.watch()), asyncio.create_task(stop.wait())]
        try:
            await asyncio.to_thread(self.workspace.scan)
            self.live.follow(self.workspace.watch_paths())
            tasks.append(asyncio.create_task(self.live.fold(self.workspace)))
            tasks.append(asyncio.create_task(self._loop(stop)))
            tasks.append(asyncio.create_task(self._catch_up()))
            waiting = set(tasks)
            while not stop.is_set():
                done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if (failed := task.exception()) is not None:
                        raise failed
        finally:
            running = [*tasks, *self._sending.values()]
            for task in running:
                task.cancel()
            await asyncio.wait(running, timeout=STOP_SECONDS)  # a delivery's thread may hang

    async def _catch_up(self) -> None:
        """Read again what the scan read, once the watcher watches: a file written
        between the scan and the watcher's start has no event of its own."""
        with contextlib.suppress(TimeoutError):  # (a watcher that never arms: read anyway)
            async with asyncio.timeout(WATCH_START):
                await self.live.armed.wait()
        paths = await asyncio.to_thread(lambda: list(self.workspace.walk()))
        await self.live.reread(paths)
        self.ready.set()

    def _folded(self, _touched: set[str] | None, _paths: set[str]) -> None:
        self._wake.set()

    def _notice(self, notice: Problem) -> None:
        self.report(f"{notice.where}: {safe_str(notice.message)}", True)

    def _health_changed(self) -> None:
        health = self.live.health
        if health is None:
            self.report(f"watching {self.root}", False)
        elif health != "starting":
            self.report(f"watching: {health}", True)

    async def _loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self._wake.clear()
            wait = self.step()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):  # not wait_for: it can swallow a cancel
                    await self._wake.wait()

    def step(self) -> float:
        """Derive the events and start the deliveries due; returns how long to wait
        before the next step (unless a change comes first)."""
        clock = time.monotonic()
        if clock - self._leases_tested >= TICK:  # a waiter that dies changes no file
            self._leases_tested = clock
            self.live.queue(self.workspace.held_leases())
        now = self.workspace.clock()
        events = derive_events(self.workspace, now, self.lead)
        seen = {event.key: self._first_seen.get(event.key, clock) for event in events}
        self._first_seen = seen
        settled = [event for event in events if clock - seen[event.key] >= self.settle]
        wake = [at + self.settle for at in seen.values() if clock - at < self.settle]
        for courier in self.couriers:
            if courier in self._sending:
                continue
            courier.forget_cleared(events)
            due = courier.outstanding(settled)
            if not due:
                continue
            chance = courier.next_chance()
            if chance > courier.clock():
                wake.append(clock + chance - courier.clock())
                continue
            task = asyncio.create_task(courier.deliver(due, now))
            self._sending[courier] = task
            task.add_done_callback(partial(self._delivered, courier))
        turns = [
            (turn - now).total_seconds()
            for e in events
            for turn in e.turns(self.lead)
            if turn > now
        ]
        return min([TICK, *(max(0.01, at - clock) for at in wake), *(t + 0.01 for t in turns)])

    def _delivered(self, courier: Courier, _task: asyncio.Task[None]) -> None:
        task = self._sending.pop(courier)
        if not task.cancelled() and task.exception() is not None:
            self.report(f"delivery to {courier.target.shown} stopped: {task.exception()!r}", True)
        self._wake.set()
