"""Edit a mission's intent or constraints, and the edit loop every human document shares.

The human edits the raw text (`EditAsk.edit_text`: an editor of the front's choosing).
The text is saved as written by `HumanWriter.replace`, which validates it (an error
names line and column, and the human edits again with the text kept), refuses it when
the file changed on disk since it was loaded (the human sees theirs against theirs and
edits again on top of theirs), and keeps the previous revision in `history/`.
Unchanged or abandoned text writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from hud.acts.session import AlreadyExists, Conflict, HumanWriteError, Invalid, Saved, Session
from store.format.layout import Kind, doc_path
from store.format.load import Loaded, load_document
from store.format.records import Constraints, Intent

Choice = tuple[str, str]
"""(label, result) of one way out of a conflict; its key is binding `conflict.<result>`."""

EDIT_CHOICES: tuple[Choice, ...] = (
    ("re-edit theirs", "theirs"),
    ("re-edit yours, saving over theirs", "yours"),
)


class EditAsk(Protocol):
    """How the human edits a text and settles a conflict (None: they gave up)."""

    async def edit_text(
        self, relpath: str, name: str, text: str, error: Invalid | None, baseline: str
    ) -> str | None:
        """The human's edit of `text` (`error`: why the last one was refused; `baseline`:
        the text on disk; `name`: a file name for an editor's copy)."""
        ...

    async def resolve_conflict(self, conflict: Conflict, choices: Sequence[Choice]) -> str | None:
        """The result of the way out the human chose."""
        ...


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
M = TypeVar("M", bound=Intent | Constraints)
_MODELS: dict[Kind, type[Intent] | type[Constraints]] = {
    Kind.INTENT: Intent,
    Kind.CONSTRAINTS: Constraints,
}


def template(mission_id: str, kind: Kind) -> str:
    """A starting text for a document the mission does not have yet."""
    if kind is Kind.INTENT:
        return f'schema = 1\ntitle = "{mission_id}"\nobjective = ""\n'
    return "schema = 1\n\n[budget]\n# usd = 10.0\n# tokens = 100000\n"


async def load_existing(session: Session, relpath: str, model: type[M]) -> Loaded[M] | None:
    """The document at `relpath` as the editor starts from it (None: there is none),
    loaded off the event loop."""
    root = session.workspace.root

    def load() -> Loaded[M] | None:
        return load_document(root, relpath, model) if os.path.lexists(root / relpath) else None

    return await session.in_thread(load)


async def edit_document(
    session: Session, ask: EditAsk, mission_id: str, kind: Kind
) -> Saved | None:
    """Edit the mission's intent or constraints until saved, unchanged or given up."""
    writer = session.writer
    if writer is None:
        return None
    relpath = doc_path(mission_id, kind)
    loaded = await load_existing(session, relpath, _MODELS[kind])
    if loaded is not None and (loaded.text is None or loaded.sha256 is None):
        what = loaded.problems[0].message if loaded.problems else "unreadable"
        session.notify(f"cannot edit {relpath}: {what}", severity="error")
        return None
    text = loaded.text if loaded is not None and loaded.text is not None else None

    def save(edited: str, base_sha: str | None) -> Saved:
        if base_sha is None:  # the mission lacked the file: create it
            return _create_from_text(session, relpath, edited)
        return writer.replace(relpath, edited, base_sha)

    saved = await edit_until_saved(
        session,
        ask,
        relpath,
        f"{mission_id}-{kind.value}.toml",
        text if text is not None else template(mission_id, kind),
        loaded.sha256 if loaded is not None else None,
        save,
    )
    if saved is not None:
        session.announce(saved)
    return saved


async def edit_until_saved(
    session: Session,
    ask: EditAsk,
    relpath: str,
    name: str,
    original: str,
    base_sha: str | None,
    save: Callable[[str, str | None], Saved],
) -> Saved | None:
    """The edit loop every human document shares: edit, save through `save(text, sha)`.

    An invalid text goes back to the editor with the error; a conflict shows theirs
    against yours and edits again on top of theirs; unchanged or abandoned writes
    nothing. Returns what was saved, or None.
    """
    text = original
    error: Invalid | None = None
    while True:
        edited = await ask.edit_text(relpath, name, text, error, original)
        if edited is None:
            session.notify(f"{relpath}: edit abandoned; nothing written")
            return None
        if edited == original:
            session.notify(f"{relpath}: unchanged; nothing written")
            return None
        text, error = edited, None
        try:
            return save(edited, base_sha)
        except Invalid as exc:
            error = exc
        except Conflict as exc:
            if exc.theirs_sha256 is None:
                session.notify(str(exc), severity="error")
                return None
            choice = await ask.resolve_conflict(exc, EDIT_CHOICES)
            if choice is None:
                session.notify(f"{relpath}: your edit was dropped; theirs stays")
                return None
            original, base_sha = exc.theirs, exc.theirs_sha256
            text = exc.theirs if choice == "theirs" else exc.yours
        except HumanWriteError as exc:
            session.notify(str(exc), severity="error")
            return None


def _create_from_text(session: Session, relpath: str, text: str) -> Saved:
    """A document the mission lacked, created write-once from the human's parsed text.

    (tomli-w writes it, as for every record the HUD creates; later edits keep the text.)
    """
    writer = session.writer
    if writer is None:
        raise HumanWriteError(relpath, "read-only: nothing is written")
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_AT.search(str(exc))
        line, column = (int(at.group(1)), int(at.group(2))) if at else (None, None)
        raise Invalid(relpath, f"invalid TOML: {exc}", line, column) from None
    try:
        return writer.create_document(relpath, parsed)
    except AlreadyExists as exc:
        theirs_sha = hashlib.sha256(exc.text.encode()).hexdigest()
        raise Conflict(relpath, exc.text, theirs_sha, text) from None
