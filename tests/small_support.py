"""The project's SMALL Protocol fixtures (tests/fixtures/small), copies of them, and an
outside corpus of real workspaces, tested in addition where one is named."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SMALL_FIXTURES = REPO / "tests" / "fixtures" / "small"
SMALL_CORPUS = "HUD_SMALL_CORPUS"
"""The variable naming a folder of real SMALL workspaces (read-only), tested in addition
to SMALL_FIXTURES (.ci/run names one where the machine has it); unset, those tests are
deselected."""
LOOPEXEC_FIXTURES = REPO / "tests" / "fixtures" / "loopexec"

VALID = "valid"
NO_WORKSPACE = "no-workspace-file"
DRIFTED = "drifted"
EMPTY_CURRENT_TASK = "empty-current-task"
UNREADABLE = "unreadable"

T_LOOPEXEC = 1767225600
"""2026-01-01T00:00:00Z: the loopexec fixtures' receipts start here."""
LOOPEXEC_NOW = datetime.fromtimestamp(T_LOOPEXEC + 2400, UTC)
"""100 s after r-live's heartbeat: it is fresh."""
SMALL_NOW = datetime(2026, 4, 1, 19, 30, tzinfo=UTC)
"""Shortly after the valid fixture's last progress entry."""


def small_fixture(name: str) -> Path:
    """A fixture folder (holding .small/), to read only."""
    return SMALL_FIXTURES / name


def copy_fixture(name: str, target: Path) -> Path:
    """A writable copy of a SMALL fixture at `target` (the fixture's name kept)."""
    return Path(shutil.copytree(small_fixture(name), target / name))


def small_corpus() -> Path | None:
    """The outside corpus named by SMALL_CORPUS, if any."""
    named = os.environ.get(SMALL_CORPUS)
    return Path(named).resolve() if named else None


def corpus_workspaces() -> list[Path]:
    """The workspaces of the outside corpus (folders holding .small/; none without one)."""
    corpus = small_corpus()
    return [] if corpus is None else sorted(p.parent for p in corpus.glob("*/.small") if p.is_dir())


def check_verdicts(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`hud check DIR`'s exit code and SMALL verdicts ("schema valid, lint ..."), after
    checking that `--json` gives the same."""
    from cli.main import main

    code = main(["check", str(root)])
    out = capsys.readouterr().out
    verdict = out.split("SMALL v1.0.0: ", 1)[1].splitlines()[0]
    assert main(["check", "--json", str(root)]) == code
    mission = json.loads(capsys.readouterr().out)["missions"][f"small:{root.name}"]
    assert ", ".join(f"{k} {v}" for k, v in mission["verdicts"].items()) == verdict
    return code, verdict


def copy_loopexec(name: str, target: Path) -> Path:
    destination = target / name
    shutil.copytree(LOOPEXEC_FIXTURES / name, destination)
    return destination


def spy_parse_yaml(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The relpaths the SMALL workspace parses from now on (each call to parse_yaml)."""
    from store.sources.small import workspace as small_workspace

    parsed: list[str] = []
    real = small_workspace.parse_yaml

    def spy(relpath: str, data: bytes, **kw: int) -> object:
        parsed.append(relpath)
        return real(relpath, data, **kw)

    monkeypatch.setattr(small_workspace, "parse_yaml", spy)
    return parsed
