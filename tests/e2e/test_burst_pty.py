"""Keys sent in one write (a paste, `tmux send-keys`, a fast typist over ssh) reach the
real `hud` whole and in order, even across the key that opens a dialog or a filter."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.e2e.pty_screen import PtyHud
from tests.factory import mission

pytestmark = pytest.mark.e2e

CTRL_U = "\x15"


def test_reject_with_a_reason_typed_in_one_burst(tmp_path: Path) -> None:
    """`n`, ctrl+u, a reason and enter in one write: the dialog opens as `n` arrives,
    ctrl+u clears where it was typed (not after the reason), and the reason is saved."""
    root = tmp_path / "state"
    beta = mission(root, "beta", "Deploy the service")
    beta.step("s1", "waiting_for_approval")
    beta.request("r2", risk="external_write", tool="deploy", args={"target": "prod"})
    hud = PtyHud([str(root)])
    try:
        hud.wait_for("Deploy the")
        hud.press("a")
        hud.wait_for("1 pending")
        hud.press("\r")
        hud.wait_for('"target": "prod"')
        hud.press(f"n{CTRL_U}please be patient\r")
        hud.wait_for("rejected by")
        decision = root / "missions/beta/approvals/r2.toml"
        hud.holds(decision.exists)
        saved = tomllib.loads(decision.read_text())
        assert saved["decision"] == "reject"
        assert saved["reason"] == "please be patient"
    finally:
        hud.process.terminate(force=True)


def test_filter_typed_in_one_burst(tmp_path: Path) -> None:
    """`/` then words in one write: every letter lands in the filter, none runs as a key
    of the overview (`a` would open Approvals)."""
    root = tmp_path / "state"
    mission(root, "log-triage", "Triage production errors").step("s1", "running")
    mission(root, "deploy", "Deploy the service").step("s1", "running")
    hud = PtyHud([str(root)])
    try:
        hud.wait_for("deploy")
        hud.press(f"/xyz{CTRL_U}triage")
        hud.wait_for("▊  triage ")
        hud.holds(lambda: "deploy" not in hud.text())
        screen = hud.text()
        assert "log-triage" in screen and "deploy" not in screen
        assert "Approvals" not in screen.splitlines()[1]  # still on the overview
    finally:
        hud.process.terminate(force=True)


def test_editor_keys_typed_in_one_burst(tmp_path: Path) -> None:
    """In the intent editor, cursor keys then text in one write: the text replaces the
    line the keys selected, not the start of the document."""
    root = tmp_path / "state"
    mission(root, "deploy", "Deploy the service").step("s1", "running")
    intent = root / "missions/deploy/intent.toml"
    lines = intent.read_text().splitlines()
    row = next(n for n, line in enumerate(lines) if line.startswith("objective = "))
    hud = PtyHud([str(root)])
    try:
        hud.wait_for("Deploy the")
        hud.press("\r")
        hud.wait_for("1 Intent")
        hud.press("e")
        hud.wait_for("Editing missions/deploy/intent.toml")
        down, end, shift_home, ctrl_s = "\x1b[B", "\x1b[F", "\x1b[1;2H", "\x13"
        hud.press(down * row + end + shift_home + 'objective = "Ship it"' + ctrl_s)
        hud.holds(lambda: "Ship it" in intent.read_text())
        saved = intent.read_text()
        assert tomllib.loads(saved)["objective"] == "Ship it", hud.text()
        assert saved.splitlines()[0] == lines[0]  # nothing typed at the top
    finally:
        hud.process.terminate(force=True)


def test_new_mission_fields_typed_in_one_burst(tmp_path: Path) -> None:
    """`n`, a title, tab, an objective, ctrl+s in one write: each text lands in its own
    field (tab moves on before the objective is typed) and the mission is created."""
    root = tmp_path / "state"
    root.mkdir()
    hud = PtyHud([str(root)])
    try:
        hud.wait_for("No missions yet")
        hud.press("nDeploy 1.2.3\tprod runs 1.2.3\x13")
        written = root / "missions/deploy-1-2-3/intent.toml"
        hud.holds(written.exists)
        assert written.exists(), hud.text()
        intent = tomllib.loads(written.read_text())
        assert (intent["title"], intent["objective"]) == ("Deploy 1.2.3", "prod runs 1.2.3")
    finally:
        hud.process.terminate(force=True)
