"""Each snapshot module owns its fixed folders; one worker at a time uses them.

The fixtures live at fixed paths because the header shows them (a path per worker would
change every snapshot). Each module's folders are its own, so under pytest-xdist
(`--dist loadgroup`) all tests of one module go to one worker, while the modules run side
by side. So that two test runs on one machine (two checkouts) do not pull each other's
directories away, each snapshot test also holds its module's lock while it runs, and
the all-modules lock (older checkouts take it whole) shared.

Text cursors do not blink here: a blinking one is drawn or not depending on how long the
steps before the screenshot took, which a loaded machine stretches past half a second.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

HERE = Path(__file__).parent
ALL_MODULES = Path("/tmp/hud-snapshots.lock")


def lock_path(module: str) -> Path:
    return Path(f"/tmp/hud-snapshots-{module}.lock")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One xdist group per snapshot module (before xdist reads the groups)."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.xdist_group(f"snapshots-{item.path.stem}"))


@pytest.fixture(autouse=True)
def _one_run_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    with ALL_MODULES.open("w") as shared, lock_path(request.path.stem).open("w") as own:
        fcntl.flock(shared, fcntl.LOCK_SH)
        fcntl.flock(own, fcntl.LOCK_EX)
        yield


@pytest.fixture(autouse=True)
def _steady_cursors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every text field's cursor is shown steadily while it has the focus."""
    for field in (Input, TextArea):
        monkeypatch.setattr(field.cursor_blink, "_default", False)
