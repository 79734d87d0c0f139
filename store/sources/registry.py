"""The registry of sources: the one explicit table of every kind of source.

`KINDS` names the four sources, typed, in the order paths are routed: the first that
owns a path reads it; native missions come last and take the rest. `sources_for` makes
the sources of one state directory from it; `holds_state` and `state_folders` tell a
source's state by its name and folders. Nothing else in the store names a concrete
source: the workspace reaches them through this table (checked by import-linter).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from store.format.records import Settings
from store.sources.base import Source
from store.sources.loopexec.runs import LoopexecDir
from store.sources.loopexec.source import LoopexecSource
from store.sources.loopx.source import LoopxSource
from store.sources.native.source import NativeSource
from store.sources.small.source import SmallSource
from store.sources.small.workspace import SmallWorkspace

__all__ = [
    "KINDS",
    "Kinds",
    "LoopexecDir",
    "LoopexecSource",
    "LoopxSource",
    "NativeSource",
    "SmallSource",
    "SmallWorkspace",
    "holds_state",
    "sources_for",
    "state_folders",
]


class Kinds(NamedTuple):
    """Every kind of source, by name, in routing order."""

    small: type[SmallSource]
    loopexec: type[LoopexecSource]
    loopx: type[LoopxSource]
    native: type[NativeSource]


KINDS = Kinds(SmallSource, LoopexecSource, LoopxSource, NativeSource)
"""The table: every kind of source, in the order `sources_for` makes them."""


def sources_for(
    root: Path, in_project: Callable[[], bool], settings: Callable[[], Settings]
) -> list[Source]:
    """Every source of the state directory at `root`, native missions last."""
    return [
        KINDS.small(root),
        KINDS.loopexec(root),
        KINDS.loopx(root, settings),
        KINDS.native(root, in_project),
    ]


def holds_state(name: str, folders: set[str]) -> bool:
    """True when a folder called `name`, holding `folders`, is some source's state."""
    return any(name in kind.root_names or folders & set(kind.folders) for kind in KINDS)


def state_folders() -> list[str]:
    """The top-level folders of every source's state (`missions`, `.small`, ...)."""
    return [folder for kind in KINDS for folder in kind.folders]
