"""What the CLI prints: every line goes through `say` (JSON is `widgets.json_text` first).

Agent text is data on a terminal too: `say` makes control, escape, bidi and invisible
characters visible (`widgets.safe_text`), so a title or a file name cannot drive the
terminal or reorder what is read. Rich loads only when some text needs it: `hud check
--json` stays quick to start.
"""

from __future__ import annotations

import sys

from widgets.invisible import UNSEEN


def printable(text: str, *, multiline: bool = False) -> str:
    """Agent text made visible and inert for the terminal (a newline is `␤` unless
    `multiline`)."""
    if UNSEEN[multiline].search(text) is None:
        return text
    from widgets.safe_text import safe_str

    return safe_str(text, multiline=multiline)


def say(text: str, *, err: bool = False) -> None:
    """Print `text` (lines of it) to stdout, or stderr with `err`, made printable."""
    print(printable(text, multiline=True), file=sys.stderr if err else sys.stdout)
