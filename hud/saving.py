"""Where the HUD saves files for its user: never inside the state directory.

A read-only HUD saves nothing (no export, no screenshot). A session of `hud serve` saves
into the server's private folder (`private_folder`: made 0700 by the server, at most
MAX_SAVED files, the oldest dropped). Otherwise a handoff export, a screenshot and the
external editor's scratch copy go to the first existing folder of a list whose real
path is outside the state directory's real path.
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

from hud.pending_writes import pending_write

NOWHERE = "every folder it could go to is inside the state directory"
NOT_PRIVATE = "hud serve's folder for saved files is missing or others may use it"
MAX_SAVED = 50
"""Files kept in hud serve's private folder; saving one more drops the oldest."""


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


def serve_folder(root: Path) -> Path:
    """`hud serve`'s private folder for what its sessions save, one per state directory:
    in the user's state folder (platformdirs), never in the server's current folder."""
    import hashlib

    from platformdirs import user_state_path

    served = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:16]
    return user_state_path("operator-hud") / "serve" / served / "saved"


def make_private(folder: Path) -> None:
    """Make `folder` (and its parents) for this user only (mode 0700); OSError if it
    exists and is not that."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not _private(folder):
        raise OSError(f"{folder}: {NOT_PRIVATE} (chmod 700, owned by this user)")


def made_serve_folder(root: Path) -> Path:
    """`serve_folder(root)`, made private to this user (`make_private`: OSError if it is
    not), as `hud serve` and `hud web` need it before their first session."""
    folder = serve_folder(root)
    make_private(folder)
    return folder


def private_folder(folder: Path, root: Path) -> Path | None:
    """`folder` (hud serve's, `serve_folder`) ready for one more file: only this user's,
    outside `root`, room made (the oldest beyond MAX_SAVED - 1 removed); None if it is
    not private."""
    if not _private(folder) or outside(root, (folder,)) is None:
        return None
    saved = []
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False):
            saved.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
    for _, path in sorted(saved)[: max(0, len(saved) - MAX_SAVED + 1)]:
        os.unlink(path)
    return folder


def _private(folder: Path) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    owned = info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and owned and not info.st_mode & 0o077


def scratch_folder(root: Path) -> Path | None:
    """Where a private scratch folder may be made: a temp folder, else the home folder."""
    return outside(root, (*temp_folders(), Path.home()))


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path`, a new or replaced regular file: a symlink, FIFO or device
    of that name is refused (OSError), never followed or blocked on."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with pending_write(), os.fdopen(os.open(path, flags, 0o644), "w", encoding="utf-8") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file; not replaced")
        handle.truncate(0)
        handle.write(text)
