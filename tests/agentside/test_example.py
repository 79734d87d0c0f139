"""examples/agent-loop.sh, the scripted agent of docs/agents.md, run for real through
`hud agent` (`python -m cli.main`) against a temp state directory, with a human deciding
in a thread."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.agentside.conftest import MISSION, Approver

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "agent-loop.sh"


def loop(root: Path, wait: str = "20") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HUD": f"{sys.executable} -m cli.main", "WAIT": wait}
    return subprocess.run(
        [str(SCRIPT), str(root), MISSION],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_requests_waits_authorizes_once_and_a_second_authorize_fails(
    root: Path, approver: Callable[..., Approver], valid: None
) -> None:
    decided = approver(reason="ship it")
    done = loop(root)
    decided.join()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "plan v1 of ship: deploy"
    assert lines[1].startswith("requested deploy-1: deploy (external_write)")
    assert lines[2].startswith("approved by alice at ") and lines[2].endswith(": ship it")
    assert lines[3].startswith("authorized deploy-1: attempt 1 started")
    assert "deploying 1.2.3 to prod" in lines
    assert lines[-4].startswith("not authorized deploy-1: already used by attempt 1")
    assert lines[-3] == "second authorize refused (exit 1), as it must be"
    assert lines[-2].startswith("deploy-1: already authorized for attempt 1 under ship/deploy-1")
    assert lines[-1] == "resumed authorize answered (exit 4): do not deploy again"


def test_a_rejection_stops_the_loop(root: Path, approver: Callable[..., Approver]) -> None:
    approver(verdict="reject", reason="freeze week")
    done = loop(root)
    assert done.returncode == 1
    assert "rejected by alice" in done.stdout and "freeze week" in done.stdout
    assert "no approval (exit 1): not deploying" in done.stderr
    assert "deploying" not in done.stdout


def test_no_decision_in_time_exits_3(root: Path) -> None:
    done = loop(root, wait="0.3")
    assert done.returncode == 3 and "timed out" in done.stdout
