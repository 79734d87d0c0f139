"""Command palette (ctrl+p): go to any mission or screen, switch theme."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import Hits, Provider

from hud.display import discovery_hit, hit

if TYPE_CHECKING:
    from hud.host import Hud


class HudCommands(Provider):
    """Missions by id and title, the HUD's screens, and its themes."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app = cast("Hud", self.app)
        commands: list[tuple[str, Callable[[], object], str]] = [
            ("Show problems", app.action_problems, "every problem in the workspace"),
            ("Show approvals", app.action_approvals, "pending approval requests"),
            ("Show metrics", app.action_metrics, "coordination metrics over a window"),
            ("Show help", app.action_help, "every key on this screen"),
            ("Next theme", app.action_next_theme, "dark, light, high contrast"),
        ]
        for name in sorted(self.app.available_themes):
            if name.startswith("hud-"):
                commands.append((f"Theme: {name}", partial(app.choose_theme, name), "switch theme"))
        for summary in sorted(app.summaries.values(), key=lambda s: s.sort_key()):
            commands.append(
                (
                    f"Mission: {summary.id} {summary.title}",
                    partial(app.open_mission, summary.id),
                    summary.status.value,
                )
            )
        return commands

    async def discover(self) -> Hits:
        for name, action, help_text in self._commands():
            yield discovery_hit(name, action, help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text in self._commands():
            found = hit(matcher, name, action, help_text)
            if found is not None:
                yield found
