"""Sources of overview rows: each kind of durable agent state behind `Source` (base.py).

`sources_for` makes the sources of one state directory, in the order paths are routed:
the first that owns a path reads it; native missions come last and take the rest.
`holds_state` tells a state directory by its name and folders, for any source.
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

__all__ = ["Captures", "Source", "holds_state", "sources_for"]

KINDS = (SmallSource, LoopexecSource, LoopxSource, NativeSource)
"""Every kind of source, in the order `sources_for` makes them."""


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


def holds_state(name: str, folders: set[str]) -> bool:
    """True when a folder called `name`, holding `folders`, is some source's state."""
    return any(name in kind.root_names or folders & set(kind.folders) for kind in KINDS)


def state_folders() -> list[str]:
    """The top-level folders of every source's state (`missions`, `.small`, ...)."""
    return [folder for kind in KINDS for folder in kind.folders]
