"""Who signed in to `hud web`: sessions named by a random id (the cookie), each ending
at a fixed time however active it is. At most `limit` at once: a new one ends the one
closest to its end."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from hud.web.tokens import Holder

LIMIT = 256
"""Signed-in sessions kept at once."""


@dataclass(frozen=True)
class Session:
    id: str
    holder: Holder
    ends: float
    """When it ends (the server's monotonic clock)."""


class Sessions:
    def __init__(self, lifetime: float, limit: int = LIMIT) -> None:
        self.lifetime = lifetime
        self.limit = limit
        self._by_id: dict[str, Session] = {}

    def start(self, holder: Holder, now: float) -> Session:
        """A new session for `holder`, ending `lifetime` seconds from `now`."""
        self._forget_ended(now)
        if len(self._by_id) >= self.limit:
            del self._by_id[min(self._by_id.values(), key=lambda old: old.ends).id]
        session = Session(secrets.token_urlsafe(32), holder, now + self.lifetime)
        self._by_id[session.id] = session
        return session

    def get(self, session_id: str | None, now: float) -> Session | None:
        """The live session `session_id` names; None if none (or it has ended)."""
        session = self._by_id.get(session_id or "")
        if session is not None and session.ends <= now:
            del self._by_id[session.id]
            return None
        return session

    def end(self, session_id: str) -> None:
        self._by_id.pop(session_id, None)

    def _forget_ended(self, now: float) -> None:
        for session in [old for old in self._by_id.values() if old.ends <= now]:
            del self._by_id[session.id]
