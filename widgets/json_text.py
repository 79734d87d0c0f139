"""Agent JSON as text that shows no hazardous character raw and still means the same JSON.

`json_text(value)` is `json.dumps(value, indent=2, ensure_ascii=False)` with one change:
every character an approver could not see, or that a terminal would act on (controls,
C1, DEL, bidi overrides, zero-width and other invisible characters; see
`store.format.text.hazardous`), is written as its JSON escape `\\uXXXX`. The text
is still valid JSON meaning exactly the same value (`json.loads` gives it back), so
what is shown is what would run, and nothing in it can reach the terminal raw. Other
non-ASCII stays readable. No Rich here: `hud check --json` and `hud approvals --json`
print it too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from store.format.text import hazardous

# json.dumps writes C0 controls inside strings as escapes (a raw newline is layout):
# only DEL and non-ASCII characters can be hazardous in its output.
_MAYBE_HAZARDOUS = re.compile(r"[^\x00-\x7e]")


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _escape_hazardous(match: re.Match[str]) -> str:
    char = match.group()
    return _escape(char) if hazardous(char) else char


def json_text(value: Any, *, ascii: bool = False) -> str:
    """Indented JSON with every hazardous character escaped (all non-ASCII with `ascii`)."""
    text = json.dumps(value, indent=2, ensure_ascii=ascii, allow_nan=False)
    return _MAYBE_HAZARDOUS.sub(_escape_hazardous, text)
