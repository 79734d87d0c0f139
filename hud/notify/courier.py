"""One target's deliveries: what it still has to be told, at what pace, and after a failure.

A target wants an event when its filters let it through and the sent record does not
hold its key (a follow-up, `withdrawn` or `expired`, only when the target was told the
request was pending). A token bucket paces it: `burst` at once, one more every
`refill_seconds`; when more are due than tokens left, the last token sends one digest
that names them all ("N more notifications"), so a burst is neither lost nor a flood.
A failed delivery is reported and retried after `retry_seconds`, doubling at each
failure in a row up to `retry_max_seconds`; it is never fatal. Reports name the target
only as its redacted URL, and a failure's reason is scrubbed of the URL's secrets.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from hud.notify.events import FOLLOW_UPS, Event
from hud.notify.message import Answer, Message, digest, inert, render

if TYPE_CHECKING:
    from hud.notify.config import Target
    from hud.notify.sent import SentRecord

REASON_CHARS = 200
NEEDS_YOU_PREFIX = "needs_you:"
_TYPES = {"info": "info", "warning": "warning", "critical": "failure"}
"""Severity -> Apprise's notify type."""


@dataclass(frozen=True)
class Pace:
    """A target's pace (notify.toml's `burst`, `refill_seconds`, `retry_*`)."""

    burst: int
    refill_seconds: float
    retry_seconds: float
    retry_max_seconds: float


Report = Callable[[str, bool], None]
"""Says a line of status: (text, is it a failure)."""


class Courier:
    """Sends one target what it has not been told, paced, retried after failures."""

    def __init__(
        self,
        target: Target,
        record: SentRecord,
        pace: Pace,
        answer: Answer,
        report: Report,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.target = target
        self.record = record
        self.pace = pace
        self.answer = answer
        self.report = report
        self.clock = clock
        self.tokens = float(pace.burst)
        self.refilled = clock()
        self.failures = 0
        self.retry_at = 0.0
        self.sends = 0
        """Deliveries attempted (each a message: one event or a digest)."""

    def outstanding(self, events: list[Event]) -> list[Event]:
        """The events this target wants and has not been sent."""
        target, record = self.target.id, self.record
        return [
            event
            for event in events
            if self.target.wants(event)
            and not record.has(target, event.key)
            and (event.kind not in FOLLOW_UPS or record.has(target, event.told_pending))
        ]

    def forget_cleared(self, events: list[Event]) -> None:
        """A `needs_you` reason sent that no longer holds is forgotten: if it comes back,
        it is news again (a budget raised, then overrun again)."""
        holding = {event.key for event in events}
        cleared = [
            key
            for key in self.record.targets.get(self.target.id, {})
            if key.startswith(NEEDS_YOU_PREFIX) and key not in holding
        ]
        if cleared:
            try:
                self.record.forget(self.target.id, cleared)
            except OSError as error:
                self.report(f"cannot save what was sent ({error.strerror or error})", True)

    def next_chance(self) -> float:
        """When (on `clock`) a delivery could start: after a back-off, with a token."""
        self._refill()
        need = max(0.0, 1.0 - self.tokens) * self.pace.refill_seconds
        return max(self.retry_at, self.clock() + need)

    def _refill(self) -> None:
        now = self.clock()
        gained = (now - self.refilled) / self.pace.refill_seconds
        self.tokens = min(float(self.pace.burst), self.tokens + gained)
        self.refilled = now

    async def deliver(self, due: list[Event], now: datetime) -> None:
        """Send what the tokens allow of `due` (a digest for the rest), until a failure."""
        if not due or self.next_chance() > self.clock():
            return
        room = int(self.tokens)
        if len(due) <= room:
            batches = [[event] for event in due]
        else:
            batches = [[event] for event in due[: room - 1]] + [due[room - 1 :]]
        for batch in batches:
            one = len(batch) == 1
            message = render(batch[0], now, self.answer) if one else digest(batch, self.answer)
            severity = max((e.severity for e in batch), key=("info", "warning", "critical").index)
            self.tokens -= 1
            self.sends += 1
            sending = asyncio.ensure_future(asyncio.to_thread(self._send, message, severity))
            try:
                failed = await asyncio.shield(sending)
            except asyncio.CancelledError:  # stopping: what is out is still recorded, so
                self._outcome(batch, one, await sending)  # that no restart sends it again
                raise
            if not self._outcome(batch, one, failed):
                return

    def _send(self, message: Message, severity: str) -> str | None:
        """Deliver one message (in a thread); None when it went, else why not."""
        from apprise import NotifyFormat

        try:
            result = self.target.service.notify(
                body=message.body,
                title=message.title,
                notify_type=_TYPES[severity],
                body_format=NotifyFormat.TEXT,
            )
        except Exception as error:  # a plugin's bug is a failed delivery, not a crash
            return type(error).__name__
        if result:
            return None
        said = [entry.message for entry in result.logs() if entry.level in ("WARNING", "ERROR")]
        return said[-1] if said else "not delivered"

    def _outcome(self, batch: list[Event], one: bool, failed: str | None) -> bool:
        """Record how sending `batch` went; True when it was delivered."""
        if failed is not None:
            self._failed(failed)
            return False
        self.failures = 0
        self.retry_at = 0.0
        self._sent(batch, one)
        return True

    def _failed(self, why: str) -> None:
        self.failures += 1
        wait = min(self.pace.retry_max_seconds, self.pace.retry_seconds * 2 ** (self.failures - 1))
        self.retry_at = self.clock() + wait
        for secret in self.target.secrets():
            why = why.replace(secret, "****")
        self.report(
            f"delivery to {self.target.shown} failed ({inert(why, REASON_CHARS)}); "
            f"failure {self.failures} in a row, trying again in {wait:.1f}s",
            True,
        )

    def _sent(self, batch: list[Event], one: bool) -> None:
        what = batch[0].key if one else f"a digest of {len(batch)}"
        self.report(f"sent {inert(what)} to {self.target.shown}", False)
        try:
            self.record.mark(self.target.id, [event.key for event in batch], time.time())
        except OSError as error:
            self.report(f"cannot save what was sent ({error.strerror or error})", True)
