"""Shared fixtures: a small valid state directory and a fixed clock."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from store.index.workspace import Workspace
from tests.factory import T0, Mission, resume, three_missions
from tests.small_support import SMALL_CORPUS, corpus_workspaces, small_corpus


def _runs_here() -> dict[str, bool]:
    """Marker -> whether its tests run in this run: the long fuzz only under `make fuzz`,
    the outside SMALL corpus only where it is (it runs in addition to the project's own
    fixtures)."""
    return {
        "fuzz": os.environ.get("HYPOTHESIS_PROFILE") == "fuzz",
        "corpus": bool(corpus_workspaces()),
    }


WORKERS_PER_CORE = 2
"""`-n auto` starts this many xdist workers per core: the suite waits more than it
computes (Pilot's idle waits, real processes, timers), so one worker per core leaves the
cores idle half the time (lone clone, 2 cores: 456 s with 2 workers, 263 s with 4, 292 s
with 6)."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return WORKERS_PER_CORE * len(os.sched_getaffinity(0))


def pytest_report_header(config: pytest.Config) -> str:
    found = len(corpus_workspaces())
    corpus = f"{found} workspaces" if found else "none: its tests deselected"
    return f"outside SMALL corpus (${SMALL_CORPUS}={small_corpus() or ''}): {corpus}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests whose marker does not run here are deselected, not skipped (a skip in
    `make test` names a reason of the machine, never one of the suite); `slow` tests
    run first."""
    off = {marker for marker, runs in _runs_here().items() if not runs}
    dropped = [item for item in items if any(item.get_closest_marker(m) for m in off)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
    # The long tests first: xdist hands out tests in this order, so the workers finish
    # together instead of one starting a long test near the end.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# Shortly after the fixture's last event: nothing is stale yet.
NOW = T0 + timedelta(minutes=1)


@pytest.fixture(autouse=True)
def _deterministic(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Same colours and time zone everywhere: no NO_COLOR, no TEXTUAL_THEME, TZ pinned;
    the user's config folder (the HUD's remembered view) a fresh one, never the real; no
    verified-prefix cache (store.cache) unless a test gives it a folder of its own."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("HUD_CACHE_DIR", "off")


@pytest.fixture
def now() -> datetime:
    return NOW


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """Three valid missions: `alpha` running, `beta` waiting on a request, `gamma` done."""
    root = tmp_path / "state"
    root.mkdir()
    (root / "hud.toml").write_text("schema = 1\nstale_after_seconds = 600\n")
    three_missions(root)
    return root


@pytest.fixture
def open_workspace(now: datetime) -> Callable[[Path], Workspace]:
    """Scan a state directory with the clock fixed at `now`."""

    def build(root: Path) -> Workspace:
        workspace = Workspace(root, clock=lambda: now)
        workspace.scan()
        return workspace

    return build


@pytest.fixture
def workspace(state_dir: Path, open_workspace: Callable[[Path], Workspace]) -> Workspace:
    return open_workspace(state_dir)


@pytest.fixture
def alpha(state_dir: Path) -> Mission:
    """A writer continuing mission `alpha` of `state_dir` (its seq and chain)."""
    return resume(state_dir, "alpha")
