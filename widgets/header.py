"""The top bar: where the HUD looks, how many missions are in each status, live or not
(and when not, why: `watch` says what is wrong with watching)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.widgets import Static

from widgets.safe_text import safe
from widgets.status import status_text
from widgets.words import plural


class HudHeader(Static):
    """One line: directory, status counts, problems, approvals, LIVE and READ-ONLY."""

    DEFAULT_CSS = """
    HudHeader { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__(id="hud-header")
        self._shown: Text | None = None
        self._last: dict[str, Any] | None = None

    def on_resize(self) -> None:
        if self._last is not None:
            self.show(**self._last)

    def show(
        self,
        *,
        directory: str,
        counts: Counter[str],
        problems: int,
        pending: int,
        watch: str | None,
        read_only: bool,
        scanning: bool = False,
        variables: Mapping[str, str] | None = None,
    ) -> None:
        """Update the bar; does nothing when the text would not change.

        What needs attention comes first; the directory last, cut from the left
        (`…/state`) to fit the width.
        """
        self._last = {
            "directory": directory,
            "counts": counts,
            "problems": problems,
            "pending": pending,
            "watch": watch,
            "read_only": read_only,
            "scanning": scanning,
            "variables": variables,
        }
        text = Text()
        if read_only:
            text.append(" READ-ONLY ", style="bold reverse")
            text.append(" ")
        if scanning:
            text.append("◌ scanning", style="bold")
        else:
            text.append_text(watch_text(watch))
        for status, count in counts.items():
            if count:
                text.append("  ")
                text.append_text(status_text(status, variables, word=False))
                text.append(f" {count}")
        if pending:
            text.append("  ")
            text.append(f" ? {plural(pending, 'approval')} ", style="bold reverse")
        if problems:
            text.append(f"  ⚠ {plural(problems, 'problem')}", style="bold")
        room = max(0, (self.size.width or 80) - 2 - text.cell_len - 2)
        if room >= 8:
            place = safe(directory)
            if place.cell_len > room:
                place = Text("…") + place[place.cell_len - room + 1 :]
            text.append("  ")
            text.append_text(place)
        if text != self._shown:
            self._shown = text
            self.update(text)


def watch_text(watch: str | None) -> Text:
    """`● live`, or `○` and why the HUD is not watching (its words may name a folder)."""
    if watch is None:
        return Text("● live", style="bold")
    shown = safe(f"○ {watch}")
    shown.stylize("dim")
    return shown
