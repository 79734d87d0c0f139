"""Before there is a mission to show: what a state directory is, and how to get one.

`place_of` tells a state directory (it holds `missions/` or another source's folder, or
is a source's own folder: `store.sources.registry.holds_state`) from an empty folder and from a
folder that is something else.
It reads the folder, so it runs off the event loop, and imports the store only then
(the overview paints before the store is imported). `guidance` is what the overview
says instead of an empty table; `make_state_dir` creates `missions/` once the user has
confirmed it, through the app's writer (never in read-only mode).
"""

from __future__ import annotations

import shlex
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from widgets.safe_text import safe

if TYPE_CHECKING:
    from hud.acts.session import HumanWriter

QUIET = frozenset({"hud.toml"})
"""What an empty state directory may hold already."""


class Place(StrEnum):
    STATE = "state"
    """A state directory (perhaps with no mission yet)."""
    EMPTY = "empty"
    """An empty folder: a state directory once something writes `missions/` in it."""
    OTHER = "other"
    """A folder holding other things: not a state directory."""


def place_of(root: Path) -> Place:
    """What `root` is; reads it (no symlink followed): call it off the event loop."""
    from store.format.confined import list_folder
    from store.sources.registry import holds_state

    listed = list_folder(root, "")
    if not isinstance(listed, list):  # unreadable: its problem is listed; not ours to judge
        return Place.STATE
    folders = {entry.name for entry in listed if entry.is_dir(follow_symlinks=False)}
    if holds_state(root.name, folders):
        return Place.STATE
    return Place.EMPTY if {entry.name for entry in listed} <= QUIET else Place.OTHER


def _other_folders() -> str:
    """The folders of the sources beside native missions: ".small/, .loopexec/ or .loopx/".
    (The store is imported by now: `place_of` ran.)"""
    from store.sources.registry import state_folders

    others = [f"{folder}/" for folder in state_folders() if folder != "missions"]
    return " or ".join(filter(None, (", ".join(others[:-1]), others[-1])))


def make_state_dir(writer: HumanWriter) -> None:
    """Create `missions/` under the writer's root, confined as every human write is (no
    symlink followed); raises `store.format.confined.Refused` when something is in the way."""
    from store.format.confined import folder

    with folder(writer.root, "missions", create=True):
        pass


def guidance(
    place: Place, shown: str, root: Path, new_key: str | None, make_key: str | None
) -> Text:
    """What the overview says when it has no row: where the HUD looks (`shown`), what a
    state directory is, and the next step; `new_key` and `make_key` are the keys of the
    new-mission and make-state-directory actions, None when they are hidden."""
    command = f"hud simulate {shlex.quote(str(root))}"
    text = Text()
    if place is Place.OTHER:
        text.append_text(safe(shown))
        text.append(" is not a state directory.\n", style="bold")
        text.append(
            f"It holds no missions/ folder (nor {_other_folders()}): "
            "its files are not missions, and the HUD has nothing to show here.\n\n"
        )
    else:
        text.append("No missions yet", style="bold")
        if place is Place.EMPTY:
            text.append(" in ").append_text(safe(shown))
        text.append(".\n\n")
    text.append(
        "A state directory is where agents and people write down the work: each "
        "missions/<id>/ folder holds a mission's intent, plan, execution log, evidence "
        "and approval requests (the format: docs/format.md). The HUD watches it and "
        "shows every mission here as it is written.\n\n"
    )
    if place is Place.OTHER:
        text.append("Open the HUD on a state directory (hud DIR)")
        if make_key:
            text.append(", or press ")
            text.append(make_key, style="bold")
            text.append(" to make this folder one (it creates missions/ in it)")
        text.append(".\n")
        return text
    text.append("To watch simulated agents at work, run in another terminal:\n")
    text.append("    ").append_text(safe(command)).append("\n")
    if new_key:
        text.append("or press ")
        text.append(new_key, style="bold")
        text.append(" to write a new mission's intent yourself.\n")
    return text
