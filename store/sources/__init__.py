"""Sources of overview rows: each kind of durable agent state behind `Source` (base.py).

`sources_for` makes the sources of one state directory, in the order paths are routed:
the first that owns a path reads it; native missions come last and take the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from store.records import Settings
from store.sources.base import Captures, Source
from store.sources.loopexec import LoopexecSource
from store.sources.loopx import LoopxSource
from store.sources.native import NativeSource
from store.sources.small import SmallSource

__all__ = ["Captures", "Source", "sources_for"]


def sources_for(
    root: Path, in_project: Callable[[], bool], settings: Callable[[], Settings]
) -> list[Source]:
    """Every source of the state directory at `root`, native missions last."""
    return [
        SmallSource(root),
        LoopexecSource(root),
        LoopxSource(root, settings),
        NativeSource(root, in_project),
    ]
