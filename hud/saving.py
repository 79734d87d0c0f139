"""Where the HUD saves files for its user, in every mode: never inside the state directory.

A handoff export, a screenshot and the external editor's scratch copy go to the first
existing folder of a list whose real path is outside the state directory's real path.
The home folder, the download folder or even $TMPDIR may be inside it (HOME=STATE_DIR
on a reviewer's account): those are skipped, and if every one is, nothing is saved.
`tempfile.gettempdir()` is never called: it writes a probe file into the first folder
it tries, which may be inside the state directory.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

NOWHERE = "every folder it could go to is inside the state directory"


def outside(root: Path, folders: Iterable[Path]) -> Path | None:
    """The first existing folder of `folders` whose real path is not inside `root`'s."""
    real_root = os.path.realpath(root)
    for folder in folders:
        try:
            real = os.path.realpath(folder)  # the current folder may be gone
        except OSError:
            continue
        if os.path.isdir(real) and os.path.commonpath((real, real_root)) != real_root:
            return Path(real)
    return None


TEMP_FALLBACKS = (Path("/tmp"), Path("/var/tmp"))


def temp_folders() -> list[Path]:
    """The folders `tempfile` would try, in its order, without its probe (which writes a
    file to try a folder): `tempfile.tempdir` if set, $TMPDIR, $TEMP, $TMP, then
    TEMP_FALLBACKS."""
    named = [tempfile.tempdir, *(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP"))]
    return [Path(name) for name in named if name] + list(TEMP_FALLBACKS)


def export_folder(root: Path) -> Path | None:
    """Where exports go: the current folder, else the download folder, else a temp folder."""
    from platformdirs import user_downloads_path

    return outside(root, (Path(os.curdir), user_downloads_path(), *temp_folders()))


def scratch_folder(root: Path) -> Path | None:
    """Where a private scratch folder may be made: a temp folder, else the home folder."""
    return outside(root, (*temp_folders(), Path.home()))


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path`, a new or replaced regular file: a symlink, FIFO or device
    of that name is refused (OSError), never followed or blocked on."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file; not replaced")
        handle.truncate(0)
        handle.write(text)
