"""File reads for flows that wait for them, kept off the event loop.

A flow (a coroutine on the event loop: an edit, say) hands the read to a Textual thread
worker and awaits its result; the worker returns data and touches no widget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from textual.app import App

T = TypeVar("T")


async def in_thread(app: App[Any], read: Callable[[], T]) -> T:
    """What `read()` returns, computed in a thread worker while the event loop runs on."""
    worker = app.run_worker(read, thread=True, group="read")
    result: T = await worker.wait()
    return result
