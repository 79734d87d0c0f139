"""The external editor: `$VISUAL` / `$EDITOR`, run with the app suspended on a copy of
the text in a private temp folder outside the state directory (`hud.saving`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hud import saving
from store.format.problems import Problem

if TYPE_CHECKING:
    from textual.app import App

    from hud.acts.session import Session


class EditorFailed(Exception):
    """The editor could not be started, or its output could not be read."""


def editor_command(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """`$VISUAL`, else `$EDITOR`, split like a shell would; None when neither is set."""
    env = os.environ if environ is None else environ
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError:
                continue
            if words:
                return words
    return None


def run_external(app: App[Any], command: list[str], path: Path) -> bool:
    """Run `command path` with the app suspended; True if the editor exited with 0.

    Raises SuspendNotSupported when the terminal cannot be handed over (headless, web).
    """
    with app.suspend():
        try:
            completed = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:
            raise EditorFailed(f"cannot run {shlex.join(command)}: {exc}") from None
    return completed.returncode == 0


async def edit_externally(
    app: App[Any], session: Session, command: list[str], text: str, name: str
) -> str | None:
    """The text after the operator edited `text` in `command`; None if they gave up.

    The copy is in a private temp folder outside the state directory, read back off
    the event loop."""
    parent = saving.scratch_folder(session.workspace.root)
    if parent is None:
        raise EditorFailed(f"no folder for the editor's copy: {saving.NOWHERE}")
    folder = Path(tempfile.mkdtemp(prefix="hud-edit-", dir=parent))
    try:
        (folder / name).write_bytes(text.encode("utf-8"))
        if not run_external(app, command, folder / name):
            return None
        data = await session.read_document(folder, name)
        try:
            if isinstance(data, Problem):
                raise ValueError(data.message)
            return data.decode("utf-8")
        except ValueError as exc:
            raise EditorFailed(f"cannot read the edited text back: {exc}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
