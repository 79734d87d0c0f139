"""The user's files a HUD is writing off the event loop (view settings, a screenshot, an
export): a quitting HUD lets these finish, briefly, and never waits for a read."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_changed = threading.Condition()
_writing = 0


@contextmanager
def pending_write() -> Iterator[None]:
    """Mark a write in progress until the block ends."""
    global _writing
    with _changed:
        _writing += 1
    try:
        yield
    finally:
        with _changed:
            _writing -= 1
            _changed.notify_all()


def wait_for_writes(timeout: float) -> bool:
    """Wait until no write is in progress, at most `timeout` seconds; True if none is."""
    with _changed:
        return _changed.wait_for(lambda: _writing == 0, timeout)
