"""Edit a SMALL workspace's intent or constraints (`HumanWriter.replace_small`).

The HUD writes no progress entry: the note after a save gives the `small accept`
commands that record one, as SMALL's own accept flow does (docs/small.md).
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Collection
from pathlib import PurePosixPath

from hud.acts.documents import EditAsk, edit_until_saved
from hud.acts.session import Saved, Session
from store.format.problems import Problem
from store.sources.small.layout import FILES
from store.sources.small.workspace import SmallWorkspace


def accept_commands(workspace: SmallWorkspace, documents: Collection[str]) -> list[str]:
    """The commands that record edits of `documents` (the workspace's human-writable
    files, `Source.documents`) the way SMALL's accept flow does (a progress entry)."""
    base = workspace.folder.parent if not workspace.prefix else workspace.root
    folder = shlex.quote(str(base))
    small = workspace.prefix.rstrip("/") or "."
    commands = []
    for kind, file in workspace.files.items():
        if file.relpath not in documents:
            continue
        draft = f"{small}/drafts/{FILES[kind]}"
        commands.append(
            f"cd {folder} && small draft {kind} --from {small}/{FILES[kind]} "
            f"&& small accept {kind} && rm {draft} && rmdir {small}/drafts"
        )
    return commands


async def edit_small(session: Session, ask: EditAsk, small: SmallWorkspace, document: str) -> bool:
    """Edit `document`, one of the workspace's human-writable files (`Source.documents`:
    intent.small.yml, constraints.small.yml), until saved, unchanged or given up."""
    writer = session.writer
    if writer is None:
        return False
    base = await session.read_document(session.workspace.root, document)
    if isinstance(base, Problem):
        session.notify(f"cannot edit {document}: {base.message}", severity="error")
        return False

    def save(edited: str, base_sha: str | None) -> Saved:
        assert base_sha is not None  # the file was read above
        return writer.replace_small(document, edited, base_sha)

    saved = await edit_until_saved(
        session,
        ask,
        document,
        PurePosixPath(document).name,
        base.decode("utf-8", errors="replace"),
        hashlib.sha256(base).hexdigest(),
        save,
    )
    if saved is None:
        return False
    session.wrote([saved.relpath])
    command = accept_commands(small, (document,))[0]
    copy = session.key("small.copy_accept")
    session.notify(
        f"saved {saved.relpath}. The HUD wrote no progress entry; to record one as "
        f"`small accept` does, run{f' ({copy} copies it)' if copy else ''}:\n{command}",
        timeout=12,
    )
    return True
