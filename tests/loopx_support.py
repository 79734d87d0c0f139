"""The loopx fixtures (tests/fixtures/loopx/, made by the real CLI: see its README.md),
placed under a test's folder with their placeholders made real paths."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

LOOPX_FIXTURES = Path(__file__).parent / "fixtures" / "loopx"
LOOPX_NOW = datetime(2026, 12, 1, 16, 0, tzinfo=UTC)
"""Minutes after the fixtures were made: goals are fresh, not stale."""


def place_loopx(version: str, tmp_path: Path) -> Path:
    """Copy fixture `version` (a folder of LOOPX_FIXTURES) to tmp_path; returns its project."""
    target = tmp_path / version
    shutil.copytree(LOOPX_FIXTURES / version, target)
    for path in target.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md"):
            text = path.read_text()
            if "@" in text:
                text = text.replace("@PROJECT@", str(target / "project"))
                path.write_text(text.replace("@RUNTIME@", str(target / "runtime")))
    return target / "project"
