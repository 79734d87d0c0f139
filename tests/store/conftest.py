"""Helpers shared by the store tests."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any


def stat_saying(size: int, stat: Callable[..., os.stat_result]) -> Callable[..., os.stat_result]:
    """`stat` (or fstat), with every file `size` bytes long: as if it grew right after."""

    def smaller(*args: Any, **kwargs: Any) -> os.stat_result:
        info = stat(*args, **kwargs)
        return os.stat_result((*info[:6], size, *info[7:]))

    return smaller


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail with TimeoutError instead of hanging (a FIFO opened for reading blocks)."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
