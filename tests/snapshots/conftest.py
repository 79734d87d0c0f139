"""Snapshot tests take turns on their fixed paths.

The fixtures live at fixed paths (the header shows them), so that two test runs on one
machine (two checkouts) do not pull each other's directories away, each snapshot test
holds a lock while it runs.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator

import pytest

LOCK = "/tmp/hud-snapshots.lock"


@pytest.fixture(autouse=True)
def _one_run_at_a_time() -> Iterator[None]:
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
