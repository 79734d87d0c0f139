"""Revisions of a mission's intent and constraints: the current file and `history/*.toml`.

`store.writers.human` keeps the bytes a replace overwrote as `history/<kind>.r<N>.toml` (N is
their `revision`), and stamps the new text with `revision`, `edited_by` and
`edited_at`. So every revision names who made it and when: `edited_by`/`edited_at`
for an edit, `created_by`/`created_at` for the first revision of a new mission.
`revisions` lists them all, oldest first per document, and `diff_lines` says how any
two differ. Reading never fails: an unreadable revision carries its `problem`.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from store.format.confined import list_folder
from store.format.layout import Kind, classify, doc_path, mission_dir
from store.format.load import decode_utf8, parse_toml, read_bytes
from store.format.problems import Problem
from store.format.records import parse_time

DOCUMENTS = (Kind.INTENT, Kind.CONSTRAINTS)
"""The documents with revisions, in the order they are listed."""


@dataclass(frozen=True, slots=True)
class Revision:
    """One revision of intent.toml or constraints.toml."""

    kind: Kind
    number: int
    """The revision number: N of `history/<kind>.rN.toml`, or the current file's `revision`."""
    relpath: str
    current: bool
    text: str | None
    """The file's text; None when it could not be read (see `problem`)."""
    action: Literal["created", "edited", ""]
    """How this revision came to be, as far as the file says."""
    by: str
    """`edited_by` for an edit, `created_by` for a creation; empty if the file names no one."""
    at: datetime | None
    problem: Problem | None = None

    @property
    def name(self) -> str:
        """A short label: `intent r2`, `constraints r1 (current)`."""
        return f"{self.kind.value} r{self.number}" + (" (current)" if self.current else "")


def revisions(root: Path, mission: str) -> list[Revision]:
    """Every revision of the mission's intent and constraints, oldest first per document.

    History files come first in revision order, the current file last; a document
    with neither contributes nothing.
    """
    found: list[Revision] = []
    for kind in DOCUMENTS:
        kept = sorted(
            (number, relpath)
            for relpath, number in _history_files(root, mission).items()
            if relpath.rsplit("/", 1)[-1].startswith(f"{kind.value}.")
        )
        found.extend(_revision(root, relpath, kind, number, False) for number, relpath in kept)
        current = doc_path(mission, kind)
        if os.path.lexists(root / current):
            found.append(_revision(root, current, kind, None, True))
    return found


def diff_lines(old: Revision, new: Revision, context: int = 3) -> list[str]:
    """A unified diff from `old` to `new`, one string per line without newline."""
    return unified_diff(old.text or "", new.text or "", old.name, new.name, context)


def unified_diff(old: str, new: str, old_name: str, new_name: str, context: int = 3) -> list[str]:
    """A unified diff of two texts, one string per line without newline."""
    return list(
        difflib.unified_diff(
            old.splitlines(),
            new.splitlines(),
            fromfile=old_name,
            tofile=new_name,
            n=context,
            lineterm="",
        )
    )


# ---- reading -------------------------------------------------------------------------------


def _history_files(root: Path, mission: str) -> dict[str, int]:
    """history/*.toml files that the layout knows, with the revision in their name."""
    folder = f"{mission_dir(mission)}/history"
    entries = list_folder(root, folder)
    if isinstance(entries, Problem):
        return {}
    names = [entry.name for entry in entries]
    found: dict[str, int] = {}
    for name in names:
        located = classify(f"{folder}/{name}")
        if located is not None and located.kind is Kind.HISTORY:
            found[located.relpath] = int(located.parts["revision"])
    return found


def _revision(root: Path, relpath: str, kind: Kind, number: int | None, current: bool) -> Revision:
    data = read_bytes(root, relpath)
    if isinstance(data, Problem):
        return Revision(kind, number or 1, relpath, current, None, "", "", None, data)
    text = decode_utf8(relpath, data)
    if isinstance(text, Problem):
        return Revision(kind, number or 1, relpath, current, None, "", "", None, text)
    parsed = parse_toml(relpath, text)
    fields: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
    problem = parsed if isinstance(parsed, Problem) else None
    if number is None:
        stated = fields.get("revision", 1)
        number = stated if isinstance(stated, int) and stated >= 1 else 1
    edited_by, created_by = fields.get("edited_by"), fields.get("created_by")
    if isinstance(edited_by, str) and edited_by:
        action: Literal["created", "edited", ""] = "edited"
        by, at = edited_by, _when(fields.get("edited_at"))
    elif isinstance(created_by, str) and created_by:
        action, by, at = "created", created_by, _when(fields.get("created_at"))
    else:
        action, by, at = "", "", _when(fields.get("edited_at") or fields.get("created_at"))
    return Revision(kind, number, relpath, current, text, action, by, at, problem)


def _when(value: object) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValidationError:
        return None
