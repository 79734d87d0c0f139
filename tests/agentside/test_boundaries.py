"""The agents' side stays apart from the HUD at run time too: `hud --help` and the HUD's
app never load agentside (import-linter checks the static imports; these check what a
process actually loads), and `hud agent` reaches it through the router."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def loaded_after(code: str) -> list[str]:
    """The top-level packages of ours loaded by a fresh interpreter running `code`."""
    probe = (
        "import contextlib, json, sys\n"
        f"with contextlib.suppress(SystemExit):\n    {code}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stderr.splitlines()[-1]))


def test_hud_help_does_not_load_the_agents_side() -> None:
    loaded = loaded_after("from cli.main import main; main(['--help'])")
    assert "hud" in loaded and "agentside" not in loaded and "mcp" not in loaded


def test_the_hud_app_does_not_load_the_agents_side() -> None:
    loaded = loaded_after("import hud.app")
    assert "textual" in loaded and "agentside" not in loaded


def test_hud_agent_dispatches_and_loads_the_mcp_sdk_only_for_mcp() -> None:
    loaded = loaded_after("from cli.main import main; main(['agent', 'request', '--help'])")
    assert "agentside" in loaded and "mcp" not in loaded
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "agent", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    for name in ("plan", "step", "evidence", "request", "authorize", "claude-hook", "mcp"):
        assert f"  {name} " in done.stdout
