"""The outside SMALL corpus (real workspaces, named by $HUD_SMALL_CORPUS: in CI and on the
maintainers' machines), in addition to tests/fixtures/small: every workspace found loads,
never crashes, and has the verdicts docs/small.md documents for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.sources.small.workspace import SmallWorkspace
from tests.small_support import check_verdicts, corpus_workspaces

DOCUMENTED = {
    "spec-v1.0.0": "schema valid, lint valid, strict valid, verify invalid",
    "small-protocol-live": "schema valid, lint valid, strict valid, verify valid",
    "stale-handoff": "schema invalid, lint invalid, strict valid, verify invalid",
}
"""docs/small.md's table; a workspace not in it is only checked to load."""

pytestmark = pytest.mark.corpus  # deselected where the corpus is absent (tests/conftest.py)


@pytest.mark.parametrize(
    "root", corpus_workspaces() or [Path("no-corpus")], ids=lambda root: root.name
)
def test_corpus_workspace_has_its_documented_verdicts(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = SmallWorkspace(root)
    small.apply(".small")
    verdict = ", ".join(f"{check} {v}" for check, v in small.verdicts().items())
    assert verdict == DOCUMENTED.get(root.name, verdict)
    exit_code = 0 if set(small.verdicts().values()) == {"valid"} else 1
    assert check_verdicts(root, capsys) == (exit_code, verdict)
