"""What the CLI prints: every line goes through `say` (JSON is `widgets.json_text` first),
and exact bytes for a pipe or a file through `emit_exact`.

Agent text is data on a terminal too: `say` makes control, escape, bidi and invisible
characters visible (`store.format.text`, as `widgets.safe_text` does), so a title or a file
name cannot drive the terminal or reorder what is read. Rich is not loaded: `hud check
--json` stays quick to start.
"""

from __future__ import annotations

import sys

from store.format.text import safe_str


def printable(text: str, *, multiline: bool = False) -> str:
    """Agent text made visible and inert for the terminal (a newline is `␤` unless
    `multiline`)."""
    return safe_str(text, multiline=multiline)


def say(text: str, *, err: bool = False) -> None:
    """Print `text` (lines of it) to stdout, or stderr with `err`, made printable."""
    print(printable(text, multiline=True), file=sys.stderr if err else sys.stdout)


def emit_exact(data: bytes) -> bool:
    """Write `data` to stdout byte for byte (a payload to verify), unless stdout is a
    terminal, where hidden characters would not show: then nothing (False)."""
    if sys.stdout.isatty():
        return False
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return True
