"""Every place the HUD shows text outside a widget's body, and the one way text gets there.

Widgets show agent text as `widgets.safe_text.safe()`. The other places that show text
are the sinks below; each takes text only through `plain()` (a string, for sinks that
never parse markup) or `visual()` (Content, for sinks that would parse a string as
markup). `tests/hud/test_display_sinks.py` holds the code to this list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from textual.command import DiscoveryHit, Hit
from textual.content import Content
from textual.fuzzy import Matcher

from widgets.safe_text import safe, safe_str

SINKS = {
    "notify": "HudApp.notify: every toast, from the app, a screen or a widget; plain()",
    "title": "SafeTitles: app and screen titles and sub-titles, however assigned; plain()",
    "key display": "HudApp.get_key_display: keys in the footer and help ([keys] remaps)",
    "palette": "hit(), discovery_hit(): command palette prompts and help; visual()",
    "tooltip": "Widget.tooltip, with_tooltip, border_title, border_subtitle: visual()",
    "label": "Static, Label, TabPane, .update(): Text, Content or a literal, never a built str",
    "cli": "hud.output.say() for every printed line; JSON is widgets.json_text first",
}
"""Sink -> where it is and how text reaches it."""


def plain(text: object, *, multiline: bool = False) -> str:
    """`text` with control, escape, bidi and invisible characters made visible; for
    sinks that show a string as it is (a newline is `␤` unless `multiline`)."""
    return safe_str(str(text), multiline=multiline)


def visual(text: str) -> Content:
    """`text` made safe as Content: a sink shows it as written, never as markup."""
    return Content.from_rich_text(safe(text))


def hit(matcher: Matcher, text: str, command: Callable[[], Any], help: str = "") -> Hit | None:
    """A palette hit for `text` with the query's letters highlighted; None if no match."""
    shown = visual(text)
    score, offsets = matcher.fuzzy_search.match(matcher.query, shown.plain)
    if score <= 0:
        return None
    for offset in offsets:
        if not shown.plain[offset].isspace():
            shown = shown.stylize(matcher.match_style, offset, offset + 1)
    return Hit(score, shown, command, text=shown.plain, help=_help(help))


def discovery_hit(text: str, command: Callable[[], Any], help: str = "") -> DiscoveryHit:
    """A palette entry shown before anything is typed."""
    shown = visual(text)
    return DiscoveryHit(shown, command, text=shown.plain, help=_help(help))


def _help(text: str) -> str | None:
    # The palette parses a help string as markup, and passes Content through as it is.
    return cast("str", visual(text)) if text else None


class SafeTitles:
    """Titles and sub-titles pass through `plain()` whoever assigns them (a mixin for an
    App or a Screen, whose `title` and `sub_title` reactives call these validators)."""

    def validate_title(self, title: Any) -> Any:
        return None if title is None else plain(title)

    def validate_sub_title(self, sub_title: Any) -> Any:
        return None if sub_title is None else plain(sub_title)
