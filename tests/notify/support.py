"""Running a notifier in a test: its config and sent record in the test's folder."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cli.commands.notify import prepare
from hud.notify.notifier import Notifier
from store.writers.agent import AgentWriter
from tests.factory import toml_text


def write_config(path: Path, targets: list[dict[str, Any]] | None = None, **fields: Any) -> None:
    """notify.toml with fast retries, sending at once, unless told otherwise."""
    data: dict[str, Any] = {"schema": 1, "retry_seconds": 0.2, "settle_seconds": 0.0, **fields}
    text = toml_text(data)
    for target in targets or []:
        text += "\n[[target]]\n" + toml_text(target)
    path.write_text(text, encoding="utf-8")


def args(*to: str, **fields: Any) -> argparse.Namespace:
    given: dict[str, Any] = {
        "notify_to": list(to),
        "workspace_targets": False,
        "web_url": None,
        "ssh": None,
    }
    given.update(fields)
    return argparse.Namespace(**given)


@contextlib.asynccontextmanager
async def running(root: Path, given: argparse.Namespace) -> AsyncIterator[Notifier]:
    """A notifier on `root` (as `hud notify` prepares it), until the block ends."""
    notifier = prepare(root, given, "hud notify")
    assert notifier is not None
    stop = asyncio.Event()
    task = asyncio.create_task(notifier.run(stop))
    try:
        await asyncio.wait_for(notifier.ready.wait(), 20)
        yield notifier
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


async def until(check: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Wait (without blocking the loop) until `check()` holds; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        await asyncio.sleep(0.02)
    return check()


def file_request(root: Path, mission: str, request_id: str, **fields: Any) -> None:
    """File a request as an agent does (`AgentWriter.request_approval`: written once,
    whole)."""
    writer = AgentWriter(root, mission, "agent", clock=lambda: datetime.now(UTC))
    writer.request_approval(
        request_id,
        fields.pop("step", "s1"),
        1,
        fields.pop("tool", "deploy"),
        {"target": "prod"},
        fields.pop("risk", "external_write"),
        fields.pop("summary", "ship it"),
        **fields,
    )
