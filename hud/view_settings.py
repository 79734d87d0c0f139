"""The HUD's own view settings, per user: the theme and the approvals queue's "all"
toggle, kept in the user's config folder (platformdirs: `~/.config/operator-hud/view.toml`
on Linux), outside every state directory, and restored at start.

This is the user's file, not a record of any state directory. Read once before the app
runs, written off the event loop when the user changes a view; a read-only or a served
session (`hud serve`) reads it but never writes it. A file that does not load (or holds
a value of the wrong type) counts as empty, so a bad file can never stop the HUD.
"""

from __future__ import annotations

import os
import stat
import tempfile
import tomllib
from pathlib import Path

import platformdirs
import tomli_w

from hud.pending_writes import pending_write

MAX_BYTES = 4096
"""The file is a few lines; more is not ours, and is ignored."""
KNOWN: dict[str, type] = {"theme": str, "approvals_all": bool}
"""Each setting the file may hold, with its type."""

View = dict[str, str | bool]


def path() -> Path:
    return Path(platformdirs.user_config_dir("operator-hud")) / "view.toml"


def load() -> View:
    """The settings the file holds (only the known ones, of their types); {} without one."""
    try:  # non-blocking, a regular file only: a FIFO put there cannot stall the start
        descriptor = os.open(path(), os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return {}
            data = tomllib.loads(handle.read(MAX_BYTES + 1).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return {
        name: value
        for name, value in data.items()
        if isinstance(value, str | bool) and type(value) is KNOWN.get(name) and len(str(value)) < 99
    }


def save(view: View) -> bool:
    """Write `view` as the file, atomically (a temporary file renamed over it); False
    when it cannot be written (the view still changed; only the memory of it fails)."""
    target = path()
    text = tomli_w.dumps(dict(sorted(view.items())))
    with pending_write():
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".view-")
        except OSError:
            return False
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, target)
        except OSError:
            Path(temporary).unlink(missing_ok=True)
            return False
    return True
