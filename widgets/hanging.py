"""Hanging indents that survive soft wrapping: a `name: value` line whose value is longer
than the widget wraps under the value's start, not under the name.

A line's prefix is marked with `HANG` (a style that draws nothing); `Document` wraps each
marked line itself at the width it is given, and leaves every other line to Textual.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.text import Span, Text
from textual import events
from textual.visual import VisualType
from textual.widgets import Static

HANG = Style(meta={"hud-hang": True})
# Below this many cells beside the prefix, a hanging indent would leave a ribbon of text:
# the line wraps from the left edge instead.
NARROWEST_BODY = 16


def hang_after(head: Text) -> Text:
    """`head` marked as the prefix its line's wrapped lines hang under."""
    head.stylize(HANG)
    return head


def _is_hang(span: Span) -> bool:
    return span.style is HANG or span.style == HANG


def _hang_end(line: Text) -> int:
    """Where the marked prefix of `line` ends (a character offset), or 0: none is marked."""
    return max((span.end for span in line.spans if _is_hang(span)), default=0)


def _fits(body: str, room: int) -> bool:
    """Whether `body` can hang in `room` cells: wide enough, and no word longer (a digest
    breaks better whole on a line of its own)."""
    return room >= NARROWEST_BODY and all(cell_len(word) <= room for word in body.split())


def hang_wrap(text: Text, width: int, console: Console) -> Text:
    """`text` with each marked line wrapped to `width`, its later lines under its body, and
    the marks taken out (what is drawn is the same as the text without them)."""
    bare = text.copy()
    bare.style = ""  # the whole text's style stays the whole text's, not each line's
    lines: list[Text] = []
    for line in bare.split("\n", allow_blank=True):
        end = _hang_end(line)
        line.spans[:] = [span for span in line.spans if not _is_hang(span)]
        head = line[:end]
        room = width - head.cell_len
        if not end or line.cell_len <= width or not _fits(line.plain[end:], room):
            lines.append(line)
            continue
        pad = " " * head.cell_len
        for index, part in enumerate(line[end:].wrap(console, room, overflow="fold")):
            part.rstrip()
            lines.append(head + part if index == 0 else Text(pad) + part)
    hung = Text("\n").join(lines)
    hung.style, hung.justify, hung.overflow = text.style, text.justify, text.overflow
    return hung


class Document(Static):
    """A Static whose marked lines hang under their value's start at any width."""

    _source: Text | None = None
    _width = 0

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        self._source = content if isinstance(content, Text) else None
        super().update(self._hung(content), layout=layout)

    def on_resize(self, event: events.Resize) -> None:
        if self._source is not None and self.content_size.width != self._width:
            hung = self._hung(self._source)
            if hung != self.content:
                super().update(hung)

    def _hung(self, content: VisualType) -> VisualType:
        if not isinstance(content, Text):
            return content
        self._width = self.content_size.width
        return hang_wrap(content, self._width, self.app.console)
