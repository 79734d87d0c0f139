"""The HUD themes register, apply and load the stylesheet."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.theme import Theme
from textual.widgets import DataTable, Footer, Header, Static

from themes import DEFAULT_THEME, STYLESHEET, THEMES, register_themes
from widgets.status import status_text


class ThemedApp(App[None]):
    CSS_PATH = STYLESHEET

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable()
        yield Static("x", classes="problem")
        yield Footer()

    def on_mount(self) -> None:
        register_themes(self)
        self.theme = DEFAULT_THEME
        self.query_one(DataTable).add_columns("status")
        self.query_one(DataTable).add_row(status_text("running", self.theme_variables))


def luminance(colour: str) -> float:
    """WCAG relative luminance."""
    linear = [c / 255 for c in Color.parse(colour).rgb]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in linear]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    """WCAG contrast ratio."""
    darker, lighter = sorted((luminance(first), luminance(second)))
    return (lighter + 0.05) / (darker + 0.05)


def close(first: str, second: str) -> bool:
    """Equal colours up to the colour system's rounding."""
    pairs = zip(Color.parse(first).rgb, Color.parse(second).rgb, strict=True)
    return all(abs(a - b) <= 2 for a, b in pairs)


def test_three_themes_with_a_dark_default() -> None:
    assert set(THEMES) == {"hud-dark", "hud-light", "hud-high-contrast"}
    assert THEMES[DEFAULT_THEME].dark
    assert not THEMES["hud-light"].dark


def test_high_contrast_is_white_on_black() -> None:
    theme = THEMES["hud-high-contrast"]
    assert (theme.background, theme.foreground) == ("#000000", "#ffffff")
    colours = [theme.primary, theme.accent, theme.warning, theme.error, theme.success]
    assert all(colours)
    assert len(set(colours)) == len(colours)
    assert all(contrast(colour or "", "#000000") >= 7 for colour in colours)


@pytest.mark.parametrize("theme", THEMES.values(), ids=THEMES.keys())
def test_text_colours_are_readable_on_the_background(theme: Theme) -> None:
    names = ("primary", "secondary", "accent", "warning", "error", "success", "foreground")
    low = {name: contrast(getattr(theme, name) or "", theme.background or "") for name in names}
    assert min(low.values()) >= 4.5, low


async def test_every_theme_applies_with_the_stylesheet() -> None:
    app = ThemedApp()
    async with app.run_test(size=(80, 24)) as pilot:
        for name, theme in THEMES.items():
            app.theme = name
            await pilot.pause()
            assert close(app.theme_variables["error"], theme.error or "")
            styles = app.query_one(Static).styles
            assert close(styles.color.hex, theme.error or "")
            assert styles.text_style.bold
