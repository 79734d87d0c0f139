"""The app's watch on approval requests: a toast (and the bell) when one arrives.

A request is announced only while the queue shows it: a new one waits `SETTLE` seconds
(an agent may write a newer plan or a decision just after it, and a change may be folded
in steps) and is announced then only if still queued (`store.index.approval_checks.queued`).

`ApprovalFeed.update(touched)` runs on every workspace change, for the missions
touched only. It also remembers each decided request while its decision is current
(`SeenRequests`), so a request that changes after its decision can be shown as a
field-level diff even when the decision keeps no copy of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.index.approval_checks import PendingIndex, SeenRequests, queued
from widgets.keys import key_of

if TYPE_CHECKING:
    import asyncio
    from typing import Any

    from textual.app import App

    from store.index.workspace import Workspace

MAX_TOASTS = 3
SETTLE = 0.5
"""Seconds a new request waits before it is announced, if the queue still shows it."""


class ApprovalFeed:
    """Notices new pending requests and keeps request versions seen this session."""

    def __init__(self, app: App[Any], workspace: Workspace, scanned: asyncio.Event) -> None:
        self.app = app
        self.workspace = workspace
        self.scanned = scanned
        self.pending = PendingIndex()
        self.seen = SeenRequests()
        self.heard: list[tuple[str, str]] = []
        """New requests waiting for `SETTLE` before they are announced."""

    def update(self, touched: set[str] | None) -> None:
        workspace = self.workspace
        ids = workspace.missions if touched is None else touched
        for mission_id in ids:
            mission = workspace.missions.get(mission_id)
            if mission is not None and mission.decisions:
                self.seen.observe(mission)
        new = self.pending.update(workspace, touched, workspace.clock())
        if new and self.scanned.is_set():  # what the first scan finds is not news
            if not self.heard:
                self.app.set_timer(SETTLE, self.settled)
            self.heard.extend(pair for pair in new if pair not in self.heard)

    def settled(self) -> None:
        """Announce what is still in the queue of the requests heard of."""
        heard, self.heard = self.heard, []
        workspace = self.workspace
        now = workspace.clock()
        new = [
            (mission_id, request_id)
            for mission_id, request_id in heard
            if (mission := workspace.missions.get(mission_id)) is not None
            and request_id in mission.requests
            and queued(mission, request_id, now)
        ]
        if new:
            self.announce(new)

    def announce(self, new: list[tuple[str, str]]) -> None:
        app = self.app
        key = key_of(app.screen, "approvals")
        where = f" ({key}: approvals)" if key else ""
        if len(new) > MAX_TOASTS:
            app.notify(f"{len(new)} new approval requests{where}", title="Approvals", timeout=8)
        else:
            for mission_id, request_id in new:
                mission = self.workspace.missions[mission_id]
                record = mission.requests[request_id].record
                what = f"{record.tool} · {record.risk}" if record else "invalid request"
                app.notify(
                    f"{mission_id}/{request_id}: {what}{where}",
                    title="New approval request",
                    timeout=8,
                )
        if self.workspace.settings.bell:
            app.bell()
