"""A unified diff as coloured, safe text: added, removed and hunk lines told apart by sign.

Lines keep their `+`/`-`/`@@` prefixes, so the diff reads the same without colour.
Every line goes through `safe`: a human's or agent's text never reaches the terminal raw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

from widgets.safe_text import safe
from widgets.status import theme_style


def diff_text(
    lines: Sequence[str], variables: Mapping[str, str] | None = None, *, empty: str = "no changes"
) -> Text:
    """`lines` of a unified diff (no newlines), styled by kind; `empty` when there are none."""
    if not lines:
        return Text(empty, style="dim")
    out = Text()
    for number, line in enumerate(lines):
        if number:
            out.append("\n")
        if line.startswith(("+++", "---")):
            style = theme_style("$foreground bold", variables)
        elif line.startswith("@@"):
            style = theme_style("$accent", variables)
        elif line.startswith("+"):
            style = theme_style("$success", variables)
        elif line.startswith("-"):
            style = theme_style("$error", variables)
        else:
            style = theme_style("$foreground dim", variables)
        piece = safe(line)
        piece.style = style
        out.append_text(piece)
    return out
