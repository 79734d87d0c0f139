"""Agent text made safe to display: the one path every agent-written string takes.

`safe()` builds a Rich `Text` directly (markup is never parsed, so `[link=...]` or
`[/]` show literally) from `store.format.text.parts`, which makes every invisible or
terminal-active character visible: escape sequences and control pictures in
`CONTROL`, `⟨U+XXXX⟩` stand-ins in `INVISIBLE`. (`safe_str`, the same as a plain
string, is `store.format.text`'s: the CLI uses it without loading Rich.)

The result holds only printable characters, so truncating or wrapping it cannot cut
an escape sequence in half.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from store.format.text import UNSEEN, parts
from store.format.text import safe_str as safe_str

CONTROL = Style(reverse=True)
"""Style of escape sequences and control pictures."""
INVISIBLE = Style(reverse=True, italic=True)
"""Style of `⟨U+XXXX⟩` markers for invisible and bidi characters."""
_STYLES = {"text": None, "control": CONTROL, "invisible": INVISIBLE}


def safe(text: str, *, multiline: bool = False) -> Text:
    """Agent-written `text` as a `Text` that shows exactly what it holds and does nothing."""
    if UNSEEN[multiline].search(text) is None:
        return Text(text)
    result = Text()
    for shown, part in parts(text, multiline=multiline):
        result.append(shown, _STYLES[part])
    return result
