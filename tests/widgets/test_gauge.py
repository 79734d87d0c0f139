"""Percent bars and relative times for table cells."""

from __future__ import annotations

import math

import pytest
from rich.style import Style

from widgets.gauge import percent_bar, relative_time


@pytest.mark.parametrize(
    ("fraction", "shown"),
    [
        (0.0, "░░░░░░░   0%"),
        (0.05, "▍░░░░░░   5%"),
        (0.58, "████░░░  58%"),
        (1.0, "███████ 100%"),
        (1.004, "██████ !100%"),
        (1.32, "██████ !132%"),
        (15.0, "█████ !1500%"),
        (math.inf, "████████ !∞%"),
        (-0.5, "░░░░░░░   0%"),
        (None, "—"),
        (math.nan, "—"),
    ],
)
def test_percent_bar(fraction: float | None, shown: str) -> None:
    assert percent_bar(fraction, 12).plain == shown


def test_percent_bar_fills_exactly_its_width() -> None:
    for width in range(6, 40):
        for step in range(0, 121):
            assert len(percent_bar(step / 100, width).plain) == width


def test_narrow_percent_bar_keeps_the_figure() -> None:
    assert percent_bar(0.58, 4).plain == " 58%"
    assert percent_bar(1.32, 3).plain == "!132%"


def test_percent_bar_warns_then_alerts() -> None:
    calm, warn, over = (percent_bar(f, 12) for f in (0.5, 0.85, 1.2))
    assert calm.spans[0].style == Style.parse("color(6)")
    assert warn.spans[0].style == Style.parse("color(3)")
    assert over.spans[0].style == Style.parse("bold color(1)")
    assert over.spans[-1].style == Style.parse("bold color(1)")
    colours = {"accent": "#00ffff", "warning": "#ffff00", "error": "#ff0000"}
    assert percent_bar(1.2, 12, colours).spans[0].style == Style.parse("bold #ff0000")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "now"),
        (0.9, "now"),
        (4.7, "4s"),
        (59.9, "59s"),
        (60, "1m"),
        (12 * 60 + 59, "12m"),
        (3 * 3600, "3h"),
        (2 * 86400 + 5, "2d"),
        (400 * 86400, "1y"),
        (-180, "in 3m"),
        (math.nan, "—"),
    ],
)
def test_relative_time(seconds: float, shown: str) -> None:
    assert relative_time(seconds) == shown
