"""Agent JSON shown exactly and harmlessly: highlighted, indented, never truncated.

`json_text(value)` is `json.dumps(value, indent=2, ensure_ascii=False)` with one change:
every character an approver could not see, or that a terminal would act on (controls,
C1, DEL, bidi overrides, zero-width and other invisible characters; see
`store.approval_checks.hazardous`), is written as its JSON escape `\\uXXXX`. The text
is still valid JSON meaning exactly the same value (`json.loads` gives it back), so
what is shown is what would run, and nothing in it can reach the terminal raw.

`json_view(value)` highlights that text with Rich's Syntax (the ANSI themes, right at
256 colours and under NO_COLOR) and marks each escape of such a character, and each
`\\n` `\\t` `\\r` `\\b` `\\f`, in reverse video so it stands out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.syntax import Syntax
from rich.text import Text

from store.approval_checks import hazardous
from widgets.safe_text import CONTROL

# One escape inside a JSON string, scanned left to right so `\\` is consumed whole.
_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_MARKED = frozenset("bfnrt")


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: Any) -> str:
    """Indented JSON with every hazardous character escaped (still the same JSON)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    # json.dumps escapes C0 controls inside strings, so a raw newline is layout
    return "".join(_escape(char) if char != "\n" and hazardous(char) else char for char in text)


def json_view(value: Any, *, dark: bool = True) -> Text:
    """`json_text(value)` highlighted; escapes of hidden characters in reverse video."""
    code = json_text(value)
    text = Syntax(code, "json", theme="ansi_dark" if dark else "ansi_light").highlight(code)
    text.rstrip()
    for match in _ESCAPE.finditer(code):
        found = match.group()
        if found[1] in _MARKED or (found[1] == "u" and _is_hidden(found)):
            text.stylize(CONTROL, match.start(), match.end())
    text.no_wrap = False
    return text


def _is_hidden(escape: str) -> bool:
    code = int(escape[2:], 16)
    return 0xD800 <= code <= 0xDFFF or hazardous(chr(code))
