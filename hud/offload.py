"""File reads for flows that wait for them, kept off the event loop.

A flow (a coroutine on the event loop: an edit, say) hands the read to a Textual thread
worker and awaits its result; the worker returns data and touches no widget.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from textual.app import App

    from store.problems import Problem

T = TypeVar("T")


async def in_thread(app: App[Any], read: Callable[[], T]) -> T:
    """What `read()` returns, computed in a thread worker while the event loop runs on."""
    worker = app.run_worker(read, thread=True, group="read")
    result: T = await worker.wait()
    return result


async def read_document(app: App[Any], root: Path, relpath: str) -> bytes | Problem:
    """A document's bytes (store.confined: no symlink, only a regular file, capped), or
    the Problem that stops it; read in a thread worker."""
    from store.confined import read_file
    from store.load import MAX_DOCUMENT_BYTES

    return await in_thread(app, lambda: read_file(root, relpath, MAX_DOCUMENT_BYTES))
