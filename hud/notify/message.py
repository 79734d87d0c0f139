"""An event as a notification's title and body: plain text, safe in any target's format.

Agent text (ids, tool, summary, reasons) goes through `inert`: controls, bidi and
invisible characters are shown as the HUD shows them (`store.format.text.safe_str`),
then what a chat service would turn into a mention, a tag or a link is replaced by a
look-alike that is not (`@` by `＠`, `<` `>` by `‹` `›`, a Markdown link's `](` by
`] (`, `://` by `[:]//`, `www.` by `www[.]`), and each piece is cut to a bounded
length. The body is sent as Apprise's TEXT format, which Apprise itself escapes for
Markdown and HTML targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

from store.format.text import countdown, safe_str

if TYPE_CHECKING:
    from collections.abc import Sequence

    from hud.notify.events import Event

FIELD_CHARS = 200
"""A piece of agent text (a summary, a reason) is cut to this many characters."""
ID_CHARS = 80
"""An id or a tool name is cut to this many characters."""
BODY_CHARS = 1500
"""A whole body is cut to this many characters."""
DIGEST_LINES = 10
"""A digest names this many events, then counts the rest."""

_NEUTRAL = (
    ("<", "‹"),
    (">", "›"),
    ("@", "＠"),
    ("://", "[:]//"),
    ("www.", "www[.]"),
    ("WWW.", "WWW[.]"),
    ("](", "] ("),  # last: `www.(` is `www[.](` until here
)


def inert(text: str, limit: int = FIELD_CHARS) -> str:
    """Agent `text` on one line, visible and inert: no control, no mention, no link."""
    shown = safe_str(text)
    for raw, neutral in _NEUTRAL:
        shown = shown.replace(raw, neutral)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


@dataclass(frozen=True)
class Answer:
    """How a person answers: the `ssh` command of `hud serve`, the browser's address."""

    ssh: str | None = None
    web_url: str | None = None

    def link(self, event: Event) -> str | None:
        """`{web_url}/?open={mission}/{request}` (each id URL-encoded), or None."""
        if not self.web_url or event.request_id is None:
            return None
        ids = f"{quote(event.row, safe='')}/{quote(event.request_id, safe='')}"
        return f"{self.web_url.rstrip('/')}/?open={ids}"

    def lines(self, event: Event) -> list[str]:
        found = []
        if self.ssh:
            found.append(f"Answer: {self.ssh}")
        link = self.link(event)
        if link is not None:
            found.append(f"Open: {link}")
        return found


@dataclass(frozen=True)
class Message:
    title: str
    body: str


_TITLES = {
    "pending": "Approval needed",
    "expiring": "Expiring soon",
    "needs_you": "Mission needs you",
    "withdrawn": "Request withdrawn",
    "expired": "Request expired unanswered",
}


def _subject(event: Event) -> str:
    row = inert(event.row, ID_CHARS)
    if event.request_id is None:
        return row
    return f"{row}/{inert(event.request_id, ID_CHARS)}"


def render(event: Event, now: datetime, answer: Answer) -> Message:
    """The notification for one event."""
    title = f"{_TITLES[event.kind]}: {_subject(event)}"
    if event.kind == "needs_you":
        lines = [f"Mission {inert(event.row, ID_CHARS)} needs you: {inert(event.why)}"]
    else:
        plan = f", plan v{event.plan_version}" if event.plan_version is not None else ""
        risk = inert(event.risk or "?", ID_CHARS)
        lines = [f"{_subject(event)}: {inert(event.tool, ID_CHARS)} ({risk}{plan})"]
        if event.summary:
            lines.append(inert(event.summary))
        if event.why:
            lines.append(inert(event.why))
        if event.kind in ("pending", "expiring"):
            lines.append(f"Expires: {countdown(event.expires_at, now)}")
    if event.kind != "expired":
        lines += answer.lines(event)
    return Message(title, _bounded("\n".join(lines)))


def digest(events: Sequence[Event], answer: Answer) -> Message:
    """One notification for many events (a burst past a target's rate limit)."""
    counts: dict[str, int] = {}
    for event in events:
        counts[event.kind] = counts.get(event.kind, 0) + 1
    said = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items())
    lines = [f"{len(events)} more notifications: {said}"]
    for event in events[:DIGEST_LINES]:
        what = inert(event.tool, ID_CHARS) if event.request_id else inert(event.why)
        lines.append(f"- {event.kind.replace('_', ' ')}: {_subject(event)}: {what}")
    if len(events) > DIGEST_LINES:
        lines.append(f"- and {len(events) - DIGEST_LINES} more")
    if answer.ssh:
        lines.append(f"Answer: {answer.ssh}")
    if answer.web_url:
        lines.append(f"Open: {answer.web_url}")
    return Message(f"{len(events)} more notifications", _bounded("\n".join(lines)))


def _bounded(body: str) -> str:
    return body if len(body) <= BODY_CHARS else body[: BODY_CHARS - 1] + "…"
