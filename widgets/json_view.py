"""Agent JSON shown exactly and harmlessly: highlighted, indented, never truncated.

`json_view(value)` highlights `widgets.json_text.json_text(value)` (every hazardous
character a `\\uXXXX` escape, the same JSON) with Rich's Syntax (the ANSI themes,
right at 256 colours and under NO_COLOR) and marks each escape of such a character,
and each `\\n` `\\t` `\\r` `\\b` `\\f`, in reverse video so it stands out.
"""

from __future__ import annotations

import re
from typing import Any

from rich.syntax import Syntax
from rich.text import Text

from store.format.text import hazardous
from widgets.json_text import json_text
from widgets.safe_text import CONTROL

# One escape inside a JSON string, scanned left to right so `\\` is consumed whole.
_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_MARKED = frozenset("bfnrt")


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
