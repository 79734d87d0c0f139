"""Small renderers for table cells: a percent bar, a relative time."""

from __future__ import annotations

import math
from collections.abc import Mapping

from rich.text import Text

from widgets.status import theme_style

_EIGHTHS = " ▏▎▍▌▋▊▉█"
_UNITS = (("y", 31_536_000), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))
WARN_AT = 0.8
"""The fraction from which a bar shows in the warning colour."""


def percent_bar(
    fraction: float | None, width: int, variables: Mapping[str, str] | None = None
) -> Text:
    """A bar and its figure in `width` cells: `███▌░░  58%`; over 100%: `██████ !132%`.

    None or NaN (nothing known) shows `—`; infinity (a zero limit) shows `!∞%`. The
    figure is never dropped: when `width` is too small for a bar, only it is shown.
    """
    if fraction is None or math.isnan(fraction):
        return Text("—")
    value = max(fraction, 0.0)
    over = value > 1.0
    percent = "∞" if math.isinf(value) else str(round(value * 100))
    figure = f"!{percent}%" if over else f"{percent:>3}%"
    if over:
        alert = theme_style("$error bold", variables)
    elif value >= WARN_AT:
        alert = theme_style("$warning", variables)
    else:
        alert = None
    cells = width - len(figure) - 1
    if cells < 1:
        return Text(figure.rjust(width), style=alert or "")
    bar = blocks(min(value, 1.0), cells)
    text = Text()
    text.append(bar, style=alert or theme_style("$accent", variables))
    text.append("░" * (cells - len(bar)), style="dim")
    text.append(" ")
    text.append(figure, style=alert or "")
    return text


def blocks(fraction: float, cells: int, least: int = 0) -> str:
    """`fraction` (0 to 1) of `cells` as full blocks and an eighth, at least `least`
    eighths long."""
    full, part = divmod(max(least, round(fraction * cells * 8)), 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def relative_time(seconds: float) -> str:
    """An age in one unit, floored: `now`, `4s`, `12m`, `3h`, `2d`, `1y`; future as `in 3m`."""
    if not math.isfinite(seconds):
        return "—"
    size = abs(seconds)
    if size < 1:
        return "now"
    unit, length = next(unit for unit in _UNITS if size >= unit[1])
    amount = f"{int(size // length)}{unit}"
    return f"in {amount}" if seconds < 0 else amount
