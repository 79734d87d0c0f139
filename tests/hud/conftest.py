"""Fixtures for Pilot tests: a HUD app over the shared small state directory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot

from hud.app import HudApp


@pytest.fixture
def make_app(now: datetime) -> Callable[..., HudApp]:
    def build(root: Path, **options: object) -> HudApp:
        return HudApp(root, clock=lambda: now, **options)  # type: ignore[arg-type]

    return build


async def until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)
