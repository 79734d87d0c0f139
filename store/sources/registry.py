"""The registry of sources: the one explicit table of every kind of source.

`KINDS` names the four kinds, typed, in the order paths are routed: the first that owns
a path reads it; native missions come last and take the rest. Each `SourceKind` says where
its state lives (folders, the names of a folder that is its own) without loading its
source: a source's module is imported only when a state directory holds that kind
(`SourceKind.make`), so SMALL's YAML and loopx's records never load where there is none.
`holds_state` and `state_folders` tell a source's state by its name and folders.
Nothing else in the store names a concrete source: the workspace reaches them through
this table (checked by import-linter).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from store.format.records import Settings
from store.sources import loopexec, loopx
from store.sources.base import Source
from store.sources.small.layout import SMALL_DIR

if TYPE_CHECKING:
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
    "SourceKind",
    "holds_state",
    "sources_for",
    "state_folders",
]

S = TypeVar("S", bound=Source)


class Context(NamedTuple):
    """What a source is made with: the state directory, whether it is a project's own
    folder (for the native missions) and its settings (for loopx)."""

    root: Path
    in_project: Callable[[], bool]
    settings: Callable[[], Settings]


@dataclass(frozen=True)
class SourceKind(Generic[S]):
    """One kind of source, known by where its state lives; its module loads on `make`."""

    name: str
    """The source's `kind` (the key of the HUD's detail screens)."""
    module: str
    """The module that defines its source class, `source`."""
    source: str
    folders: tuple[str, ...]
    """The top-level folders of the state directory it reads (the walk enters them)."""
    root_names: tuple[str, ...] = ()
    """Names a state directory may have for it to be this source's own folder (`.small`)."""
    project: bool = True
    """True when its folder sits in a project's own folder: other files there are the
    project's, not unknown files of the state directory."""

    def claims(self, rel: str) -> bool:
        """True for a path under its folders: where a source not made yet starts."""
        return any(rel == folder or rel.startswith(f"{folder}/") for folder in self.folders)

    def make(self, context: Context) -> S:
        """A new source of this kind (its module imported now, if not before)."""
        made: Callable[..., S] = getattr(import_module(self.module), self.source)
        match self.name:
            case "mission":
                return made(context.root, context.in_project)
            case "loopx":
                return made(context.root, context.settings)
            case _:
                return made(context.root)


class Kinds(NamedTuple):
    """Every kind of source, by name, in routing order."""

    small: SourceKind[SmallSource]
    loopexec: SourceKind[LoopexecSource]
    loopx: SourceKind[LoopxSource]
    native: SourceKind[NativeSource]


KINDS = Kinds(
    SourceKind("small", "store.sources.small.source", "SmallSource", (SMALL_DIR,), (SMALL_DIR,)),
    SourceKind("loopexec", "store.sources.loopexec.source", "LoopexecSource", (loopexec.FOLDER,)),
    SourceKind("loopx", "store.sources.loopx.source", "LoopxSource", (loopx.FOLDER,)),
    SourceKind(
        "mission", "store.sources.native.source", "NativeSource", ("missions",), project=False
    ),
)
"""The table: every kind of source, in the order paths are routed to them."""

STATE_FOLDERS = frozenset(folder for kind in KINDS for folder in kind.folders)


def sources_for(context: Context) -> list[Source]:
    """The sources a state directory starts with, in routing order: the native missions,
    and a source whose own folder the directory is (`.small`). Any other is made when
    a path of its folders is applied (`SourceKind.claims`)."""
    held: list[SourceKind[Any]] = [kind for kind in KINDS if context.root.name in kind.root_names]
    return [kind.make(context) for kind in [*held, KINDS.native]]


def holds_state(name: str, folders: set[str]) -> bool:
    """True when a folder called `name`, holding `folders`, is some source's state."""
    return any(name in kind.root_names or folders & set(kind.folders) for kind in KINDS)


def state_folders() -> list[str]:
    """The top-level folders of every source's state (`missions`, `.small`, ...)."""
    return [folder for kind in KINDS for folder in kind.folders]
