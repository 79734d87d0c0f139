"""Status presentation: every status is a symbol, a word and a style, never colour alone.

One table covers mission status, request status, step state and risk class. A name
shared between them (running, failed, blocked, stale) means the same thing and looks
the same. A style is Textual's: a theme variable and emphasis (`$error bold`), the one
source of status styles; Textual resolves it against the app's `theme_variables`.
Emphasis (bold, reverse, dim) keeps the urgent ones apart under NO_COLOR.

Cells are Rich `Text`, not `Content`: a DataTable renders its cells through Rich, where
a `$` variable in a `Content` style would be dropped, so `theme_style` resolves it first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from rich.style import Style
from rich.text import Text
from textual.markup import parse_style

from widgets.safe_text import safe


@dataclass(frozen=True, slots=True)
class Look:
    """How one status reads: a one-cell symbol, a word and a Textual style."""

    symbol: str
    word: str
    style: str


_NEEDS_HUMAN = "$warning bold reverse"

LOOKS: dict[str, Look] = {
    # mission status, by urgency
    "needs_you": Look("!", "needs you", _NEEDS_HUMAN),
    "failed": Look("✗", "failed", "$error bold"),
    "blocked": Look("■", "blocked", "$warning bold"),
    "stale": Look("…", "stale", "$warning"),
    "running": Look("▶", "running", "$accent"),
    "idle": Look("·", "idle", "$foreground dim"),
    "done": Look("✓", "done", "$success"),
    # request status (also stale)
    "pending": Look("?", "pending", _NEEDS_HUMAN),
    "approved": Look("✓", "approved", "$success"),
    "rejected": Look("✗", "rejected", "$error bold"),
    "expired": Look("⊘", "expired", "$foreground dim"),
    # step state (also running, blocked, failed)
    "ready": Look("○", "ready", "$foreground"),
    "waiting_for_approval": Look("?", "waiting for approval", _NEEDS_HUMAN),
    "verifying": Look("◎", "verifying", "$accent"),
    "succeeded": Look("✓", "succeeded", "$success"),
    "outcome_unknown": Look("!", "outcome unknown", _NEEDS_HUMAN),
    # risk class
    "read_only": Look("◇", "read only", "$success"),
    "reversible_write": Look("↺", "reversible write", "$accent"),
    "external_write": Look("↗", "external write", "$warning bold"),
    "irreversible": Look("▲", "irreversible", "$error bold reverse"),
}


NO_THEME = {
    "error": "ansi_red",
    "warning": "ansi_yellow",
    "success": "ansi_green",
    "accent": "ansi_cyan",
    "primary": "ansi_blue",
    "secondary": "ansi_magenta",
    "foreground": "ansi_default",
}
"""The theme variables of text drawn with none given: the terminal's own colours."""


def theme_style(style: str, variables: Mapping[str, str] | None = None) -> Style:
    """A Rich style for a Textual style (`$error bold`), its variables from `variables`
    (the app's `theme_variables`; empty or None: `NO_THEME`)."""
    values = variables or NO_THEME
    used = tuple((word[1:], values[word[1:]]) for word in style.split() if word[0] == "$")
    return _parsed(style, used)


@lru_cache(maxsize=1024)
def _parsed(style: str, used: tuple[tuple[str, str], ...]) -> Style:
    """Textual's parse of `style` with these variables (cached: a parse takes 16 us)."""
    return parse_style(style, dict(used)).rich_style


def status_text(
    status: str,
    variables: Mapping[str, str] | None = None,
    *,
    word: bool = True,
    like: str | None = None,
) -> Text:
    """`status` as symbol and word (`✗ failed`), or the symbol alone with `word=False`.

    With `like`, `status` shows as itself in the look of the status `like` names (SMALL's
    `completed` as `✓ completed`). An unknown status shows as `- <status>` (made safe)
    with no colour; empty as `-`.
    """
    look = LOOKS.get(status if like is None else like)
    if look is None:
        text = Text("-")
        return text.append(" ").append_text(safe(status)) if word and status else text
    label = f"{look.symbol} {look.word if like is None else status}" if word else look.symbol
    return Text(label, style=theme_style(look.style, variables))
