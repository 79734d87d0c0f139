"""Status is never carried by colour alone."""

from __future__ import annotations

from typing import get_args

import pytest
from rich.cells import cell_len
from rich.style import Style
from textual.theme import Theme

from store.derivation.derive import RequestStatus
from store.format.records import Risk, StepState
from store.format.row import MissionStatus
from themes import THEMES
from widgets.status import LOOKS, status_text, theme_style

GROUPS = {
    "mission": [str(status) for status in MissionStatus],
    "request": [str(status) for status in RequestStatus],
    "step": list(get_args(StepState)),
    "risk": list(get_args(Risk)),
}


def test_every_status_of_the_store_has_a_look() -> None:
    wanted = {status for group in GROUPS.values() for status in group}
    assert wanted == set(LOOKS)


@pytest.mark.parametrize("group", GROUPS)
def test_symbols_tell_statuses_apart_within_a_group(group: str) -> None:
    symbols = [LOOKS[status].symbol for status in GROUPS[group]]
    assert len(set(symbols)) == len(symbols)


@pytest.mark.parametrize("status", LOOKS)
def test_symbol_is_one_narrow_cell_and_word_is_readable(status: str) -> None:
    look = LOOKS[status]
    assert len(look.symbol) == 1 and cell_len(look.symbol) == 1
    assert look.word == status.replace("_", " ")


def test_status_text_is_symbol_and_word_with_style() -> None:
    text = status_text(MissionStatus.FAILED)
    assert text.plain == "✗ failed"
    assert text.style == Style.parse("bold color(1)")  # no theme given: the terminal's red
    assert status_text("needs_you", word=False).plain == "!"


def test_urgent_statuses_stand_out_without_colour() -> None:
    for status in ("needs_you", "pending", "waiting_for_approval", "outcome_unknown"):
        style = status_text(status).style
        assert isinstance(style, Style) and style.bold and style.reverse


def test_theme_variables_give_the_colour() -> None:
    text = status_text("done", {"success": "#87d75f"})
    assert text.style == Style.parse("#87d75f")
    assert theme_style("$accent bold", {}) == Style.parse("bold color(6)")


def test_unknown_status_is_shown_safely_without_colour() -> None:
    text = status_text("[bold]weird\x1b[2J")
    assert text.plain == "- [bold]weird␛[2J"
    assert text.style == ""
    assert status_text("").plain == "-"
    assert status_text("weird", word=False).plain == "-"
    assert "-" not in {look.symbol for look in LOOKS.values()}


@pytest.mark.parametrize("theme", THEMES.values(), ids=THEMES.keys())
def test_every_look_is_a_colour_of_every_theme(theme: Theme) -> None:
    variables = theme.to_color_system().generate()
    for status, look in LOOKS.items():
        names = [word[1:] for word in look.style.split() if word.startswith("$")]
        assert len(names) == 1 and names[0] in variables, status
        style = theme_style(look.style, variables)
        assert style.color is not None and style.color.triplet is not None, status
