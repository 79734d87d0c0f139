"""Status presentation: every status is a symbol, a word and a style, never colour alone.

One table covers mission status, request status, step state and risk class. A name
shared between them (running, failed, blocked, stale) means the same thing and looks
the same. Colours name a theme variable (`error`, `warning`, ...); `status_text`
resolves it from the app's `theme_variables` when given, else to the ANSI colour
Textual maps through the current light or dark palette. Emphasis (bold, reverse, dim)
keeps the urgent ones apart under NO_COLOR.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from widgets.safe_text import safe


@dataclass(frozen=True, slots=True)
class Look:
    """How one status reads: a one-cell symbol, a word, a theme colour and emphasis."""

    symbol: str
    word: str
    colour: str
    emphasis: str = ""


_ANSI = {
    "error": "red",
    "warning": "yellow",
    "success": "green",
    "accent": "cyan",
    "primary": "blue",
    "secondary": "magenta",
    "foreground": "default",
}

_NEEDS_HUMAN = ("warning", "bold reverse")

LOOKS: dict[str, Look] = {
    # mission status, by urgency
    "needs_you": Look("!", "needs you", *_NEEDS_HUMAN),
    "failed": Look("✗", "failed", "error", "bold"),
    "blocked": Look("■", "blocked", "warning", "bold"),
    "stale": Look("…", "stale", "warning"),
    "running": Look("▶", "running", "accent"),
    "idle": Look("·", "idle", "foreground", "dim"),
    "done": Look("✓", "done", "success"),
    # request status (also stale)
    "pending": Look("?", "pending", *_NEEDS_HUMAN),
    "approved": Look("✓", "approved", "success"),
    "rejected": Look("✗", "rejected", "error", "bold"),
    "expired": Look("⊘", "expired", "foreground", "dim"),
    # step state (also running, blocked, failed)
    "ready": Look("○", "ready", "foreground"),
    "waiting_for_approval": Look("?", "waiting for approval", *_NEEDS_HUMAN),
    "verifying": Look("◎", "verifying", "accent"),
    "succeeded": Look("✓", "succeeded", "success"),
    "outcome_unknown": Look("!", "outcome unknown", *_NEEDS_HUMAN),
    # risk class
    "read_only": Look("◇", "read only", "success"),
    "reversible_write": Look("↺", "reversible write", "accent"),
    "external_write": Look("↗", "external write", "warning", "bold"),
    "irreversible": Look("▲", "irreversible", "error", "bold reverse"),
}


def theme_style(
    colour: str, emphasis: str = "", variables: Mapping[str, str] | None = None
) -> Style:
    """A Rich style for a theme colour name, from `variables` if given, else ANSI."""
    value = variables.get(colour) if variables else None
    return Style.parse(f"{emphasis} {value or _ANSI.get(colour, 'default')}")


def status_text(
    status: str, variables: Mapping[str, str] | None = None, *, word: bool = True
) -> Text:
    """`status` as symbol and word (`✗ failed`), or the symbol alone with `word=False`.

    An unknown status shows as `- <status>` (made safe) with no colour; empty as `-`.
    """
    look = LOOKS.get(status)
    if look is None:
        text = Text("-")
        return text.append(" ").append_text(safe(status)) if word and status else text
    label = f"{look.symbol} {look.word}" if word else look.symbol
    return Text(label, style=theme_style(look.colour, look.emphasis, variables))
