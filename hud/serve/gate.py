"""Who may start a login: connections not yet authenticated, kept apart from sessions.

Keyless clients must not lock keyed users out. A connection that has not logged in
takes a place in a small pool of its own (`Gate.limit`), never one of the sessions.
Each address starts connections at a bounded rate (a token bucket; a connection that
logs in gives its token back) and holds at most `per_address` places: its next
connection takes the place of its own oldest. When the pool is full, a newcomer takes
the place of the oldest connection of the address that holds the most, so an address
holding none always gets in. The login grace (`hud.serve.server`) frees every place
within seconds anyway.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

LIMIT = 8
"""Connections not yet logged in, at once."""
PER_ADDRESS = 4
"""Of those, from one address."""
BURST, PER_SECOND = 10, 1.0
"""Connections an address may start at once, and how fast that allowance comes back."""
MAX_BUCKETS = 4096
"""Addresses remembered; past it, those whose allowance is back whole are forgotten."""

Verdict = Literal["admitted", "rate"]


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class Gate(Generic[T]):
    """The pool of connections not yet logged in, by address, oldest first."""

    limit: int = LIMIT
    per_address: int = PER_ADDRESS
    burst: int = BURST
    per_second: float = PER_SECOND
    _waiting: dict[str, deque[T]] = field(default_factory=dict)
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def admit(self, address: str, who: T, now: float) -> tuple[Verdict, T | None]:
        """Whether `who` from `address` may start a login ("rate": too many starts from
        there; it takes no place), and the connection it displaces (to be closed)."""
        if not self._spend(address, now):
            return "rate", None
        evicted = None
        mine = self._waiting.get(address)
        if mine is not None and len(mine) >= self.per_address:
            evicted = mine.popleft()
        elif self.waiting() >= self.limit:
            crowded = max(self._waiting, key=lambda name: len(self._waiting[name]))
            evicted = self._waiting[crowded].popleft()
            self._forget_empty(crowded)
        self._waiting.setdefault(address, deque()).append(who)
        return "admitted", evicted

    def leave(self, address: str, who: T, *, logged_in: bool) -> None:
        """`who` logged in or went away: its place is free; a login gives its token back."""
        mine = self._waiting.get(address)
        if mine is None or who not in mine:
            return
        mine.remove(who)
        self._forget_empty(address)
        bucket = self._buckets.get(address)
        if logged_in and bucket is not None:
            bucket.tokens = min(bucket.tokens + 1, self.burst)

    def waiting(self) -> int:
        return sum(len(mine) for mine in self._waiting.values())

    def everyone(self) -> list[T]:
        """Every connection waiting, oldest of each address first."""
        return [who for mine in self._waiting.values() for who in mine]

    def _forget_empty(self, address: str) -> None:
        if not self._waiting.get(address, True):
            del self._waiting[address]

    def _spend(self, address: str, now: float) -> bool:
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._prune(now)
            bucket = self._buckets[address] = _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.per_second)
        bucket.at = now
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def _prune(self, now: float) -> None:
        full = self.burst / self.per_second
        for address, bucket in list(self._buckets.items()):
            if now - bucket.at >= full or len(self._buckets) >= MAX_BUCKETS:
                del self._buckets[address]
