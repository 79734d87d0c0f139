"""The characters agent text never shows raw, as regex classes; imports neither Rich nor Textual.

`safe_text` draws them visibly; the CLI looks for them in what it prints before it loads
`safe_text` (and Rich with it), so `hud check --json` stays quick to start.
"""

from __future__ import annotations

import re

# Characters shown as ⟨U+XXXX⟩: C1 controls, every format (Cf) character of Unicode 15
# (bidi, zero-width, soft hyphen, BOM, tags), line/paragraph separators, surrogates,
# and invisible non-format characters: variation selectors, combining grapheme joiner,
# Mongolian free variation selectors, Khmer inherent vowels and Hangul fillers.
INVISIBLE_CLASS = (
    "\x80-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ud800-\udfff\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
UNSEEN = {
    multiline: re.compile(f"[{controls}\x7f{INVISIBLE_CLASS}]")
    for multiline, controls in ((False, "\x00-\x1f"), (True, "\x00-\x09\x0b-\x1f"))
}
"""Keyed by `multiline` (a newline is kept): the characters `safe_text` replaces, each
escape sequence starting with one. Text without any shows as it is."""
