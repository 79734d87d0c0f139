"""What `hud agent` prints and the exit codes it ends with.

Human text by default, one JSON object (ASCII, so no escape sequence reaches a terminal)
with `--json`. Text read from the state directory (a reason, a summary) is data: in
human text its control, bidi and invisible characters are written as `\\uXXXX`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from store.format.text import hazardous

EXIT_OK = 0
EXIT_REFUSED = 1
"""Rejected, or refused: a record that does not validate, a write-once file that exists,
a tool the constraints deny, an approval that is stale, used or not decided."""
EXIT_USAGE = 2
"""Cannot run: bad arguments, no such directory or mission, an unreadable input file."""
EXIT_EXPIRED = 3
"""Expired, withdrawn, or no decision before `--wait` ran out: default deny."""
EXIT_ALREADY = 4
"""`authorize` again under the key that already used the approval (a resume after a
crash between `authorize` and the effect): do not repeat the effect; record its outcome."""


def printable(text: str) -> str:
    """`text` with every character an approver could not see, or a terminal would act on,
    written as a `\\uXXXX` escape."""
    return "".join(f"\\u{ord(char):04x}" if hazardous(char) else char for char in text)


def emit(as_json: bool, data: dict[str, Any], text: str) -> None:
    """Print `data` as one JSON line with `--json`, else the human `text`."""
    print(json.dumps(data, ensure_ascii=True) if as_json else text)


def fail(code: int, message: str) -> int:
    """Say why on stderr; returns `code` for the caller to exit with."""
    print(f"hud agent: {printable(message)}", file=sys.stderr)
    return code
