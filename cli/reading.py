"""What the mission subcommands share: the checks before reading one, and JSON values."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from hud.output import say
from store.format.layout import unsafe_id

T = TypeVar("T")


def mission_arguments(parser: argparse.ArgumentParser, doc: str | None, summary: str) -> None:
    """A command on one mission: described by its module's `doc` (past its first
    paragraph, else `summary`), given the state directory, the mission id and `--json`."""
    parser.description = doc.split("\n\n", 1)[1] if doc else summary
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("mission", help="the mission id")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def open_mission(
    command: str, root: Path, mission_id: str, read: Callable[[], T | None]
) -> T | None:
    """What `read()` makes of the mission, or None having said why there is nothing:
    `hud <command>` cannot read that mission of `root`, or it is not there."""
    if cannot_read(command, root, mission_id):
        return None
    found = read()
    if found is None:
        say(f"hud {command}: no mission {mission_id} in {root}", err=True)
    return found


def cannot_read(command: str, root: Path, mission_id: str) -> bool:
    """True (having said why) when `hud <command>` cannot read that mission of `root`."""
    why = f"{root}: no such directory" if not root.is_dir() else unsafe_id(mission_id)
    if why is not None:
        say(f"hud {command}: {why}", err=True)
    return why is not None


def plain(value: Any) -> Any:
    """Dataclasses and named tuples as objects, tuples as lists, times as RFC 3339."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {name: plain(item) for name, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    return value
