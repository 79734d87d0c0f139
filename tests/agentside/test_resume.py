"""Idempotent resume: an agent killed between `authorize` and the effect, restarted, runs
`authorize` again under the same key and is told "already authorized" (exit 4), never
authorized twice; another key stays refused (docs/agents.md, the crash-resume loop)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from agentside.output import EXIT_ALREADY, EXIT_REFUSED
from tests.agentside.conftest import MISSION, Ran

REPO = Path(__file__).resolve().parents[2]
KEY = "ship/deploy-1/run-1"
HUD = f"{sys.executable} -m cli.main"


def _attempts(root: Path) -> list[dict[str, object]]:
    lines = (root / "missions" / MISSION / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == "attempt"]


def test_a_crash_between_authorize_and_the_effect_resumes_without_a_second_run(
    root: Path,
    agent: Callable[..., Ran],
    approved: Callable[..., Ran],
    tmp_path: Path,
    valid: None,
) -> None:
    approved("deploy-1", risk="external_write")

    effect = tmp_path / "deployed"
    crashing = (
        f'{HUD} agent authorize "$1" --mission {MISSION} deploy-1 --key {KEY} '
        f'&& kill -9 $$ && touch "$2"'
    )
    run = subprocess.run(["sh", "-c", crashing, "sh", str(root), str(effect)], cwd=REPO, timeout=60)
    assert run.returncode == -signal.SIGKILL
    assert not effect.exists()
    assert len(_attempts(root)) == 1

    resumed = agent("authorize", root, "--mission", MISSION, "deploy-1", "--key", KEY, "--json")
    assert resumed.code == EXIT_ALREADY
    said = resumed.json()
    assert said["status"] == "already_authorized" and said["ok"] is False
    assert said["attempt"] == 1 and said["idempotency_key"] == KEY
    assert said["reason"].startswith(f"already authorized for attempt 1 under {KEY} at ")
    assert "do not repeat the effect" in said["reason"]
    other = agent("authorize", root, "--mission", MISSION, "deploy-1", "--key", "another")
    assert other.code == EXIT_REFUSED and "already used" in other.out
    assert len(_attempts(root)) == 1  # never a second authorization

    # the resume records the outcome it found, as docs/agents.md shows
    assert agent("step", root, "--mission", MISSION, "deploy", "outcome_unknown").code == 0
