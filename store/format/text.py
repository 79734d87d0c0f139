"""Agent text as plain, visible text, with neither Rich nor Textual: the one table of the
characters agent text never shows raw, and the times the CLI and the widgets both print.

- `UNSEEN` / `hazardous`: C0 and C1 controls, DEL, every format (Cf) character of
  Unicode 15 (bidi, zero-width, soft hyphen, BOM, tags), line/paragraph separators,
  surrogates, and invisible non-format characters (variation selectors, combining
  grapheme joiner, Mongolian free variation selectors, Khmer inherent vowels, Hangul
  fillers). The approval checks refuse a request holding one; `widgets.safe_text`
  and the CLI show each visibly.
- `parts` splits text into what is shown as it is and stand-ins: escape sequences
  (CSI, OSC, DCS, SOS, PM, APC and plain ESC, 7-bit and C1) whole as literal text with
  ESC as `␛`; other C0 controls and DEL as control pictures (`␀`, `␇`, `␡`); a newline
  as `␤` unless `multiline`; the other characters of the table as `⟨U+XXXX⟩`.
- `duration`, `countdown`: how long, and how long until a request expires.
- `amount`, `rate`: a budget figure and a burn rate in the limit's unit (`$1.50`,
  `12,000`, `1h 05m`), the same in the CLI, the HUD and the handoff export.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Literal

INVISIBLE_CLASS = (
    "\x80-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ud800-\udfff\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
"""As a regex class: the characters shown as ⟨U+XXXX⟩."""
UNSEEN = {
    multiline: re.compile(f"[{controls}\x7f{INVISIBLE_CLASS}]")
    for multiline, controls in ((False, "\x00-\x1f"), (True, "\x00-\x09\x0b-\x1f"))
}
"""Keyed by `multiline` (a newline is kept): the characters never shown raw, each
escape sequence starting with one. Text without any shows as it is."""

_INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]")
# A whole escape sequence: a control string (OSC, DCS, SOS, PM, APC) up to its
# terminator (BEL or ST) or the end of the text; a CSI; any other ESC sequence.
_SEQUENCE = (
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
_TOKEN = {
    multiline: re.compile(f"(?P<seq>{_SEQUENCE})|{unseen.pattern}", re.DOTALL)
    for multiline, unseen in UNSEEN.items()
}

Part = Literal["text", "control", "invisible"]


def hazardous(char: str) -> bool:
    """A character an approver cannot see or that a terminal acts on."""
    return UNSEEN[False].match(char) is not None


def _picture(char: str, multiline: bool) -> str:
    """The visible stand-in for one character (itself when it is harmless)."""
    code = ord(char)
    if char == "\n":
        return "\n" if multiline else "␤"
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "␡"
    if _INVISIBLE.match(char):
        return f"⟨U+{code:04X}⟩"
    return char


def parts(text: str, *, multiline: bool = False) -> Iterator[tuple[str, Part]]:
    """`text` as it is shown, in pieces: as written, or a control's or an invisible
    character's stand-in. Only printable characters come out."""
    position = 0
    for match in _TOKEN[multiline].finditer(text):
        if match.start() > position:
            yield text[position : match.start()], "text"
        found = match.group()
        shown = "".join(_picture(char, multiline) for char in found)
        control = match.group("seq") is not None or ord(found) < 0xA0
        yield shown, "control" if control else "invisible"
        position = match.end()
    if position < len(text):
        yield text[position:], "text"


def safe_str(text: str, *, multiline: bool = False) -> str:
    """Agent `text` made visible and inert as a plain string: still markup-unsafe, so
    never pass it as markup."""
    if UNSEEN[multiline].search(text) is None:
        return text
    return "".join(shown for shown, _ in parts(text, multiline=multiline))


def duration(seconds: float) -> str:
    """`45s`, `12m`, `1h 20m`, `3d 4h`; `—` when unknown."""
    if not math.isfinite(seconds):
        return "—"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)}s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"


def amount(name: str, value: float) -> str:
    """A budget figure in its limit's unit: `$1.50` (usd), `3s`, `1h 05m` (time), else a
    count such as `12,000` (tokens, steps)."""
    if name == "usd":
        return f"${value:,.2f}"
    if name == "time":
        return duration(value)
    return f"{value:,.0f}"


def rate(name: str, per_hour: float) -> str:
    """A burn rate per hour in the limit's unit: `$2.00/h`, `20,000/h`."""
    if name == "usd":
        return f"${per_hour:,.2f}/h"
    return f"{per_hour:,.0f}/h"


def countdown(expires_at: datetime | None, now: datetime) -> str:
    """`in 4m 05s` under ten minutes, else `in 29m`, `in 1h 20m`; `expired 3m ago`; `never`.

    Seconds show only in the last ten minutes, so an idle screen changes once a minute.
    """
    if expires_at is None:
        return "never"
    left = (expires_at - now).total_seconds()
    if left <= 0:
        return f"expired {duration(-left)} ago"
    if left < 600:
        minutes, seconds = divmod(int(left), 60)
        return f"in {minutes}m {seconds:02d}s" if minutes else f"in {seconds}s"
    return f"in {duration(left)}"
