"""A mission's documents as they were parsed (`DocumentEntry`), kept in the pack beside the
logs' prefixes, so that a reopen parses only the documents that changed.

An entry says: the document (device, inode, path) was, when its size, mtime and ctime were
these, parsed into this value, this text and these problems. It stands for the file
only while all five are exactly as recorded (`stands_for`): anything else (a write, a
copy over it, a rename onto it, a `touch`) parses it again. A write always moves ctime,
which no process can set back; a write within the clock's granularity of the moment the
signature was taken could keep it, so a document is kept only when its mtime and ctime
are RACY_NS older than the stat that was taken before it was read (`settled`, as git
treats a "racily clean" file).

The record is not kept: it is validated again from the kept parsed value, exactly as a
fresh parse validates it (TOML through `records.validate`, JSON from its bytes), so the
cache skips reading and parsing, never the schema.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel, ValidationError

from store.cache.state import StateError, decode_state, encode_state
from store.format.confined import lstat_files
from store.format.layout import Kind
from store.format.load import Loaded, parse_json
from store.format.problems import Problem, Severity
from store.format.records import (
    ApprovalRequest,
    Constraints,
    Decision,
    Handoff,
    Intent,
    Plan,
    validate,
)

DOCUMENT_VERSION = 2
RACY_NS = 1_000_000_000
"""A document changed this recently (before its stat) is read again next time."""
MAX_KEPT_BYTES = 256 * 1024
"""A larger document is read each time (the pack stays small)."""
MODELS: dict[Kind, type[BaseModel]] = {
    Kind.INTENT: Intent,
    Kind.CONSTRAINTS: Constraints,
    Kind.HANDOFF: Handoff,
    Kind.PLAN: Plan,
    Kind.REQUEST: ApprovalRequest,
    Kind.DECISION: Decision,
}
"""The documents kept, by kind, with the model a mission loads each as."""


class KeptProblem(msgspec.Struct, frozen=True, array_like=True):
    path: str
    line: int | None
    code: str
    message: str
    hint: str
    severity: Severity


class DocumentEntry(msgspec.Struct, frozen=True, array_like=True):
    """A document as parsed, and the file it was parsed from (see the module's docstring)."""

    relpath: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    raw: bytes | None
    """The parsed value (`encode_state({"raw": ...})`), None when it did not parse or
    when `raw_from_text`."""
    text: str | None
    sha256: str | None
    problems: tuple[KeptProblem, ...]
    record: bool
    """Whether the parsed value validated (a record is validated again from it)."""
    raw_from_text: bool = False
    """A JSON document's parsed value is its text parsed again (as a fresh read parses
    it: cheaper than keeping it, and half the room)."""
    version: int = DOCUMENT_VERSION

    def stands_for(self, info: os.stat_result) -> bool:
        """Whether the file is exactly the one this was parsed from (`info`: its lstat)."""
        return (
            self.version == DOCUMENT_VERSION
            and stat.S_ISREG(info.st_mode)
            and (
                info.st_dev,
                info.st_ino,
                info.st_size,
                info.st_mtime_ns,
                info.st_ctime_ns,
            )
            == (self.device, self.inode, self.size, self.mtime_ns, self.ctime_ns)
        )

    def loaded(self, model: type[BaseModel]) -> Loaded[Any]:
        """The document as a fresh parse gives it (StateError: not what this wrote)."""
        raw = decode_state(self.raw)["raw"] if self.raw is not None else None
        if self.raw_from_text:
            raw = parse_json(self.relpath, (self.text or "").encode())
            if isinstance(raw, Problem):
                raise StateError(f"kept text that no longer parses: {raw.message}")
        record = None
        if self.record:
            if not isinstance(raw, dict):
                raise StateError("a record without a parsed value")
            try:
                if self.relpath.endswith(".toml"):
                    record = validate(model, raw)
                else:
                    record = model.model_validate_json((self.text or "").encode())
            except ValidationError as exc:
                raise StateError(f"a kept record no longer validates: {exc}") from None
        problems = [
            Problem(k.path, k.line, k.code, k.message, k.hint, k.severity) for k in self.problems
        ]
        return Loaded(self.relpath, record, raw, self.text, self.sha256, problems)


def settled(info: os.stat_result, now_ns: int) -> bool:
    """Whether a document stat'ed at `now_ns` may be kept once read (not changed within
    RACY_NS before, nor in the future of this clock)."""
    return max(info.st_mtime_ns, info.st_ctime_ns) < now_ns - RACY_NS


def entry(info: os.stat_result, loaded: Loaded[Any], raw: Any) -> DocumentEntry | None:
    """The entry of a document read after `info` was taken and parsed as `raw` (its
    `loaded.raw`, which the mission holding it may have let go since; None: not worth
    keeping, or a parsed value the codec cannot write)."""
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_KEPT_BYTES:
        return None
    from_text = loaded.relpath.endswith(".json") and loaded.text is not None
    try:
        kept = raw is not None and not from_text
        encoded = encode_state({"raw": raw}) if kept else None
    except StateError:
        return None
    return DocumentEntry(
        loaded.relpath,
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        encoded,
        loaded.text,
        loaded.sha256,
        tuple(
            KeptProblem(p.path, p.line, p.code, p.message, p.hint, p.severity)
            for p in loaded.problems
        ),
        loaded.record is not None,
        from_text and raw is not None,
    )


def stats(root: Path, relpaths: list[str]) -> dict[str, os.stat_result]:
    """The lstat of each path that is a regular file now (`confined.lstat_files`)."""
    return lstat_files(root, sorted(relpaths))
