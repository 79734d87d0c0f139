"""Minimal edits of a human's TOML text: change one key of one table, keep the rest.

Used to raise or lower one budget limit without reformatting the constraints file:
only the line that assigns the key changes (its trailing comment kept), or one line
is added to the table, or the table is appended. Every result is verified by
re-parsing: it must equal the old data with just that one value changed, else the
edit is refused (None) and the human edits the file themselves.
"""

from __future__ import annotations

import copy
import re
import tomllib
from typing import Any

import tomli_w

_HEADER = re.compile(r"\s*\[")
_BLANK_OR_COMMENT = re.compile(r"\s*(#.*)?$")


def set_table_value(text: str, table: str, key: str, value: Any) -> str | None:
    """`text` with `[table] key = value` (None removes the key); None if no safe edit."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    want = copy.deepcopy(data)
    section = want.setdefault(table, {})
    if not isinstance(section, dict):
        return None
    if value is None:
        if key not in section:
            return text
        del section[key]
    else:
        section[key] = value
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    for candidate in _candidates(lines, table, key, value, newline):
        try:
            if tomllib.loads(candidate) == want:
                return candidate
        except tomllib.TOMLDecodeError:
            continue
    return None


def _candidates(lines: list[str], table: str, key: str, value: Any, newline: str) -> list[str]:
    """Possible edits, most faithful first; the caller keeps the first that verifies."""
    assignment = "" if value is None else tomli_w.dumps({key: value}).rstrip("\n")
    header = re.compile(rf"\s*\[\s*{re.escape(table)}\s*\]\s*(#.*)?$")
    assigns = re.compile(rf"(\s*)[\"']?{re.escape(key)}[\"']?\s*=")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        if value is None:
            return []
        head = "" if not lines or lines[-1].strip() == "" else newline
        return ["".join(lines) + f"{head}[{table}]{newline}{assignment}{newline}"]
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    found: list[str] = []
    for i in range(start + 1, end):
        match = assigns.match(lines[i])
        if match is None:
            continue
        if value is None:
            found.append("".join([*lines[:i], *lines[i + 1 :]]))
            continue
        replaced = match.group(1) + assignment + _trailing_comment(lines[i]) + newline
        found.append("".join([*lines[:i], replaced, *lines[i + 1 :]]))
    if value is not None:
        at = end
        while at > start + 1 and _BLANK_OR_COMMENT.match(lines[at - 1]):
            at -= 1
        found.append("".join([*lines[:at], assignment + newline, *lines[at:]]))
    return found


def _trailing_comment(line: str) -> str:
    """The `   # ...` after a one-line assignment with the space before it, or empty.

    A `#` inside a string is not a comment: the text before a real one parses alone.
    """
    body = line.rstrip("\r\n")
    for at in [i for i, char in enumerate(body) if char == "#"]:
        try:
            tomllib.loads(body[:at])
        except tomllib.TOMLDecodeError:
            continue
        return body[len(body[:at].rstrip()) :]
    return ""
