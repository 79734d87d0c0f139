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
        followed: tuple[str, ...] = (),
        problems: int,
        pending: int,
        watch: str | None,
        read_only: bool,
        scanning: bool = False,
        unverified: int = 0,
        variables: Mapping[str, str] | None = None,
    ) -> None:
        """Update the bar; does nothing when the text would not change.

        What needs attention comes first; the directory last, cut from the left
        (`…/state`) to fit the width.
        """
        self._last = {
            "directory": directory,
            "counts": counts,
            "followed": followed,
            "problems": problems,
            "pending": pending,
            "watch": watch,
            "read_only": read_only,
            "scanning": scanning,
            "unverified": unverified,
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
            if unverified:
                text.append(f"  ◌ {plural(unverified, 'log')} cached, not verified", style="dim")
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
            text.append("  ")
            text.append_text(places(directory, followed, room))
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


def places(directory: str, followed: tuple[str, ...], room: int) -> Text:
    """`directory + followed…` in `room` cells, each cut from the left (`…/state`) to an
    equal share when they do not fit."""
    parts = [safe(directory), *(safe(folder) for folder in followed)]
    joint = " + "
    free = room - len(joint) * (len(parts) - 1)
    if sum(part.cell_len for part in parts) > free:
        share = max(4, free // len(parts))
        parts = [
            Text("…") + part[part.cell_len - share + 1 :] if part.cell_len > share else part
            for part in parts
        ]
    shown = parts[0]
    for part in parts[1:]:
        shown = shown + Text(joint, style="dim") + part
    return shown
