"""Writing a human-owned SMALL file: validated, `small_version` quoted, comments kept, atomic.

Only `store.writers.human.HumanWriter.replace_small` calls this (the HUD imports no other
writer; import-linter forbids `hud` and `widgets` to import this module). It writes
intent.small.yml and constraints.small.yml, nothing else.

* The text is saved as the human wrote it (comments, quotes, order, layout kept),
  after it parses and passes the v1.0.0 schema and lint for its kind. One thing is
  fixed rather than refused: an unquoted `small_version: 1.0.0` is written quoted,
  by rewriting that one line (or, if it is not on a line of its own, by a ruamel.yaml
  round trip that keeps comments and the other scalars' quotes).
* `round_trip_update` changes values programmatically the same way: ruamel.yaml's
  round-trip loader and dumper, quotes preserved, `small_version` double-quoted.
* Saving is optimistic and atomic, inside the folder the caller opened through
  `store.format.confined` (no symlink followed): under an advisory lock on it, the bytes on
  disk must still hash to the sha256 the caller loaded (else `store.format.durable.Changed`);
  the new bytes go to a fsynced temp file beside the target (a name
  `store.format.layout.is_transient` ignores), are renamed over it, and the folder is fsynced.
  SMALL keeps no history folder (S4 allows only the six files): git is its history.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from store.format import durable
from store.sources.small import lint
from store.sources.small.yaml import parse_yaml

_VERSION_LINE = re.compile(
    r"^(?P<key>small_version[ \t]*:[ \t]*)(?P<value>1\.0\.0)(?P<rest>[ \t]*(#.*)?)$", re.M
)
_SEQ_ITEM = re.compile(r"^(?P<indent> *)- ")
_KEY_LINE = re.compile(r"^(?P<indent> *)[^\s#-][^:#]*:")


class SmallWriteError(Exception):
    """Base of the refusals below."""


class SmallInvalid(SmallWriteError):
    """The text does not parse, or fails the schema or lint of its kind."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True, slots=True)
class Written:
    changed: bool
    text: str
    sha256: str


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def prepare(kind: str, relpath: str, text: str) -> str:
    """The text to save for a human-owned `kind`: validated, small_version quoted."""
    doc = parse_yaml(relpath, text.encode("utf-8"))
    if doc.problems:
        first = doc.problems[0]
        raise SmallInvalid(first.message, first.line)
    if ("small_version",) in doc.plain_strings and doc.data.get("small_version") == "1.0.0":
        text = quote_version(text)
        doc = parse_yaml(relpath, text.encode("utf-8"))
    errors = [p for p in lint.file_problems(kind, relpath, doc) if p.severity == "error"]
    if errors:
        raise SmallInvalid(errors[0].message + f" (fix: {errors[0].hint})", errors[0].line)
    return text


def quote_version(text: str) -> str:
    """`text` with `small_version: 1.0.0` written as `small_version: "1.0.0"`."""
    fixed, count = _VERSION_LINE.subn(r'\g<key>"\g<value>"\g<rest>', text, count=1)
    if count:
        return fixed
    return round_trip_update(text, lambda data: None)


def _indents(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation as ruamel.yaml takes it, guessed from text."""
    mapping, sequence, offset = 2, 2, 0
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for previous, line in itertools.pairwise(lines):
        parent = len(previous) - len(previous.lstrip(" "))
        if not previous.rstrip().endswith(":"):
            continue
        item = _SEQ_ITEM.match(line)
        if item:
            offset = len(item["indent"]) - parent
            sequence = offset + 2
            break
    for previous, line in itertools.pairwise(lines):
        key = _KEY_LINE.match(line)
        if previous.rstrip().endswith(":") and not _SEQ_ITEM.match(previous) and key:
            step = len(key["indent"]) - (len(previous) - len(previous.lstrip(" ")))
            if step > 0:
                mapping = step
                break
    return mapping, max(sequence, offset + 2), offset


def round_trip_update(text: str, mutate: Callable[[Any], None]) -> str:
    """Load `text` round-trip, let `mutate` change the mapping, dump it back.

    Comments, key order and the quoting of every scalar are kept; `small_version`
    is always written as "1.0.0" in double quotes.
    """
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    mapping, sequence, offset = _indents(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    data = yaml.load(text)
    mutate(data)
    if isinstance(data, dict) and "small_version" in data:
        data["small_version"] = DoubleQuotedScalarString("1.0.0")
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def replace(root: Path, folder_fd: int, relpath: str, text: str, loaded_sha256: str) -> Written:
    """Save `text` over `relpath` (its folder open as `folder_fd`) if its bytes still hash
    to `loaded_sha256`; `store.format.durable.Changed` if not."""
    new = text.encode("utf-8")
    current = durable.check_unchanged(root, folder_fd, relpath, loaded_sha256)
    if new == current:
        return Written(False, text, loaded_sha256)
    durable.replace(folder_fd, relpath.rpartition("/")[2], new)
    return Written(True, text, sha256_of(new))
