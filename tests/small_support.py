"""Where the SMALL Protocol fixtures are (read-only, beside the repo), and copies of them."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SMALL_FIXTURES = (REPO / "../shared/fixtures/small").resolve()
LOOPEXEC_FIXTURES = REPO / "tests" / "fixtures" / "loopexec"

LIVE = "small-protocol-live"
SPEC = "spec-v1.0.0"
STALE = "stale-handoff"

T_LOOPEXEC = 1767225600
"""2026-01-01T00:00:00Z: the loopexec fixtures' receipts start here."""
LOOPEXEC_NOW = datetime.fromtimestamp(T_LOOPEXEC + 2400, UTC)
"""100 s after r-live's heartbeat: it is fresh."""
SMALL_NOW = datetime(2026, 4, 1, 19, 30, tzinfo=UTC)
"""Shortly after the live fixture's last progress entry."""


def small_fixture(name: str) -> Path:
    """A fixture folder (holding .small/), or skip the test when the fixtures are absent."""
    folder = SMALL_FIXTURES / name
    if not (folder / ".small").is_dir():
        pytest.skip(f"SMALL fixtures not found at {SMALL_FIXTURES} (../shared/fixtures/small)")
    return folder


def copy_fixture(name: str, target: Path) -> Path:
    """A writable copy of a SMALL fixture at `target` (the fixture's name kept)."""
    source = small_fixture(name)
    destination = target / name
    shutil.copytree(source, destination)
    for path in [destination, *destination.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return destination


def copy_loopexec(name: str, target: Path) -> Path:
    destination = target / name
    shutil.copytree(LOOPEXEC_FIXTURES / name, destination)
    return destination


def spy_parse_yaml(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The relpaths the SMALL workspace parses from now on (each call to parse_yaml)."""
    from store.small import workspace as small_workspace

    parsed: list[str] = []
    real = small_workspace.parse_yaml

    def spy(relpath: str, data: bytes, **kw: int) -> object:
        parsed.append(relpath)
        return real(relpath, data, **kw)

    monkeypatch.setattr(small_workspace, "parse_yaml", spy)
    return parsed
