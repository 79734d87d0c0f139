"""The MCP server's waits: requests its client asked for, watched without blocking it.

`request_approval` files the request and returns; the server then waits for the
decision in the background, holding the request's lease (`store.derivation.lease`) for as long as
its client shows interest: while a call about the request runs (`request_approval`,
`wait_for_decision`, `get_request`) and for `patience` seconds after the last one ended.
A client that stopped asking has gone away: the server withdraws the request (a
`waiter` event), so nobody approves a call nobody waits for. An approval seen in time is
recorded as `received`: the client's `authorize` may then use it. One task watches
every request, one `authorize` per request a poll, in a worker thread: the event loop
keeps answering other calls, however many requests wait.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio

from agentside.approval import Outcome, file_request, outcome
from store.derivation.lease import Lease
from store.writers.agent import AgentError, AgentWriter, authorize

POLL_SECONDS = 0.2


@dataclass
class Waited:
    """One request this server waits for."""

    lease: Lease
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    result: Outcome | None = None
    busy: int = 0
    """Calls about it running now."""
    last: float = field(default_factory=time.monotonic)
    """When the last call about it ended (monotonic)."""


class Waits:
    """The requests one MCP server waits for (`request_approval` filed them)."""

    def __init__(self, writer: AgentWriter, expires_in: float, patience: float) -> None:
        self.writer = writer
        self.expires_in = expires_in
        self.patience = patience
        self.waited: dict[str, Waited] = {}
        self._watcher: asyncio.Task[None] | None = None

    async def file(self, step: str, tool: str, args: dict[str, Any], **options: Any) -> str:
        """File a request holding its lease and start waiting for it; its id."""
        request, lease = await anyio.to_thread.run_sync(
            lambda: file_request(
                self.writer, step, tool, args, expires_in=self.expires_in, wait=True, **options
            )
        )
        if lease is not None:
            self.waited[request.id] = Waited(lease)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        return request.id

    async def wait(self, request_id: str, timeout: float) -> Outcome:
        """Where request `request_id` stands once decided, expired or `timeout` passed."""
        with self._asking(request_id):
            waited = self.waited.get(request_id)
            if waited is not None:
                with suppress(TimeoutError):  # a wait that runs out answers `pending`
                    await asyncio.wait_for(waited.decided.wait(), timeout)
                if waited.result is not None:
                    return waited.result
                return await self.get(request_id)
            deadline = time.monotonic() + timeout
            while True:  # a request this server does not wait for: poll it
                found = await self.get(request_id)
                left = deadline - time.monotonic()
                if found.status != "pending" or left <= 0:
                    return found
                await asyncio.sleep(min(POLL_SECONDS, left))

    async def get(self, request_id: str) -> Outcome:
        """Where request `request_id` stands now (`pending`: not decided yet)."""
        with self._asking(request_id):
            waited = self.waited.get(request_id)
            if waited is not None and waited.result is not None:
                return waited.result
            lease = waited.lease if waited is not None else None
            auth = await anyio.to_thread.run_sync(
                lambda: authorize(self.writer.root, self.writer.mission, request_id, lease=lease)
            )
            return outcome(request_id, auth, waited=False)

    def lease(self, request_id: str) -> Lease | None:
        """The lease this server holds on request `request_id`, if any (for authorize)."""
        waited = self.waited.get(request_id)
        return waited.lease if waited is not None and waited.result is None else None

    @contextmanager
    def _asking(self, request_id: str) -> Iterator[None]:
        waited = self.waited.get(request_id)
        if waited is not None:
            waited.busy += 1
        try:
            yield
        finally:
            if waited is not None:
                waited.busy -= 1
                waited.last = time.monotonic()

    async def _watch(self) -> None:
        """Poll the open requests until none is left."""
        while any(w.result is None for w in self.waited.values()):
            await asyncio.sleep(POLL_SECONDS)
            now = time.monotonic()
            open_ = {
                request_id: (w, w.busy == 0 and now - w.last > self.patience)
                for request_id, w in self.waited.items()
                if w.result is None
            }
            found = await anyio.to_thread.run_sync(self._sweep, open_)
            for request_id, result in found.items():
                waited = self.waited[request_id]
                waited.result = result
                waited.decided.set()

    def _sweep(self, open_: dict[str, tuple[Waited, bool]]) -> dict[str, Outcome]:
        """(In a worker thread.) The requests whose wait ended, and how: decided or
        expired (an approval is recorded `received`), or given up (withdrawn)."""
        ended: dict[str, Outcome] = {}
        for request_id, (waited, given_up) in open_.items():
            try:
                result = self._ended(request_id, waited.lease, given_up)
            except (AgentError, OSError):
                continue  # the log cannot take the record now: try again next poll
            if result is not None:
                waited.lease.release()
                ended[request_id] = result
        return ended

    def _ended(self, request_id: str, lease: Lease, given_up: bool) -> Outcome | None:
        """How the wait for request `request_id` ended, None while it goes on."""
        auth = authorize(self.writer.root, self.writer.mission, request_id, lease=lease)
        result = outcome(request_id, auth, waited=False)
        if result.status == "approved":
            self.writer.waiter(request_id, "received", "the MCP server saw the approval")
        elif result.status == "pending" and given_up:
            reason = f"the MCP client stopped asking for {self.patience:g} s"
            self.writer.waiter(request_id, "withdrawn", reason)
            return Outcome(request_id, "withdrawn", reason)
        return None if result.status == "pending" else result

    def close(self) -> None:
        """The session ends: withdraw every request still undecided, release the leases."""
        if self._watcher is not None:
            self._watcher.cancel()
        for request_id, waited in self.waited.items():
            if waited.result is None and waited.lease.held:
                auth = authorize(self.writer.root, self.writer.mission, request_id)
                if auth.reason == "not decided":
                    self.writer.waiter(request_id, "withdrawn", "the MCP session ended")
            waited.lease.release()
