"""Helpers shared by the store tests."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any


def stat_saying(size: int, stat: Callable[..., os.stat_result]) -> Callable[..., os.stat_result]:
    """`stat` (or fstat), with every file `size` bytes long: as if it grew right after."""

    def smaller(*args: Any, **kwargs: Any) -> os.stat_result:
        info = stat(*args, **kwargs)
        return os.stat_result((*info[:6], size, *info[7:]))

    return smaller
