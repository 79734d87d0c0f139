"""The HUD's Textual themes: dark (default), light and high contrast, and its stylesheet.

Base colours are entries of the xterm 256-colour palette, so they survive a
256-colour terminal unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.theme import Theme

STYLESHEET = Path(__file__).with_name("hud.tcss")
"""The app stylesheet, for `App.CSS_PATH`."""
DEFAULT_THEME = "hud-dark"

THEMES: dict[str, Theme] = {
    theme.name: theme
    for theme in (
        Theme(
            name="hud-dark",
            primary="#5f87d7",
            secondary="#af87d7",
            accent="#5fd7d7",
            warning="#ffd75f",
            error="#ff5f5f",
            success="#87d75f",
            foreground="#d0d0d0",
            background="#121212",
            surface="#1c1c1c",
            panel="#262626",
            dark=True,
        ),
        Theme(
            name="hud-light",
            primary="#005faf",
            secondary="#5f00af",
            accent="#005f5f",
            warning="#875f00",
            error="#af0000",
            success="#005f00",
            foreground="#1c1c1c",
            background="#eeeeee",
            surface="#e4e4e4",
            panel="#d0d0d0",
            dark=False,
        ),
        Theme(
            name="hud-high-contrast",
            primary="#00afff",
            secondary="#ff87ff",
            accent="#00ffff",
            warning="#ffff00",
            error="#ff5f5f",
            success="#00ff00",
            foreground="#ffffff",
            background="#000000",
            surface="#000000",
            panel="#262626",
            dark=True,
            text_alpha=1.0,
            variables={
                "foreground-muted": "#c6c6c6",
                "border": "#ffffff",
                "block-cursor-foreground": "#000000",
                "block-cursor-background": "#ffffff",
                "block-cursor-text-style": "bold",
                "block-cursor-blurred-foreground": "#ffffff",
                "block-cursor-blurred-background": "#585858",
                "footer-key-foreground": "#ffff00",
            },
        ),
    )
}


def register_themes(app: App[Any]) -> None:
    """Make every HUD theme available to `app` (`app.theme = "hud-light"`)."""
    for theme in THEMES.values():
        app.register_theme(theme)
