"""Plain-terminal output for subcommands: agent text made safe to print."""

from __future__ import annotations

import unicodedata


def printable(text: str) -> str:
    """Show control, format (bidi, zero-width) and C1 characters as `\\uXXXX` escapes."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or (ch == " ") else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    if unicodedata.category(ch) in {"Zs"}:
        return ch
    return f"\\u{ord(ch):04x}"
