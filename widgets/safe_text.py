"""Agent text made safe to display: the one path every agent-written string takes.

`safe()` builds a Rich `Text` directly (markup is never parsed, so `[link=...]` or
`[/]` show literally) and makes every invisible or terminal-active character visible:

- escape sequences (CSI, OSC, DCS, SOS, PM, APC and plain ESC sequences, in their
  7-bit and C1 forms) are kept whole as literal text, ESC shown as `␛`, in `CONTROL`;
- other C0 controls and DEL become their control pictures (`␀`, `␇`, `␉`, `␍`, `␡`);
  a newline becomes `␤` unless `multiline=True` keeps it;
- C1 controls, bidi controls, zero-width, format, variation-selector, filler and
  lone-surrogate characters become `⟨U+XXXX⟩`, in `INVISIBLE`.

The result holds only printable characters, so truncating or wrapping it cannot cut
an escape sequence in half.
"""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

from widgets.invisible import INVISIBLE_CLASS, UNSEEN

CONTROL = Style(reverse=True)
"""Style of escape sequences and control pictures."""
INVISIBLE = Style(reverse=True, italic=True)
"""Style of `⟨U+XXXX⟩` markers for invisible and bidi characters."""

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


def safe(text: str, *, multiline: bool = False) -> Text:
    """Agent-written `text` as a `Text` that shows exactly what it holds and does nothing."""
    token = _TOKEN[multiline]
    if token.search(text) is None:
        return Text(text)
    result = Text()
    position = 0
    for match in token.finditer(text):
        result.append(text[position : match.start()])
        found = match.group()
        shown = "".join(_picture(char, multiline) for char in found)
        control = match.group("seq") is not None or ord(found) < 0xA0
        result.append(shown, CONTROL if control else INVISIBLE)
        position = match.end()
    result.append(text[position:])
    return result


def safe_str(text: str, *, multiline: bool = False) -> str:
    """The plain string of `safe(text)`: still markup-unsafe, so never pass it as markup."""
    return safe(text, multiline=multiline).plain
