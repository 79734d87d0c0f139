"""The HUD's quota and handoff readiness of a loopx goal agree with `loopx status`.

The expected figures are literals copied from what the real CLI printed for each
fixture (`loopx status`, in tests/fixtures/loopx/<fixture>/status.md: the attention
queue's `quota:` and `handoff_readiness:` lines; loopx 0.5.1 from PyPI for v0.5.1 and
v0.5.1-ready, loopx 2.1.1 for v2.1.1; made by tests/fixtures/loopx/make.sh).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store.index.workspace import Workspace
from store.sources.loopx.policy import policy
from tests.loopx_support import LOOPX_FIXTURES, LOOPX_NOW, place_loopx

# fixture: (compute, state, "spent/allowed", ready, codex_ready), as loopx status printed
LOOPX_STATUS = {
    # quota: compute=1.0 state=operator_gate slots=0/1440
    # handoff_readiness: ready=False codex_ready=False ... quota_state=operator_gate
    "v0.5.1": (1.0, "operator_gate", "0/1440", False, False),
    "v2.1.1": (1.0, "operator_gate", "0/1440", False, False),
    # quota: compute=0.5 state=eligible slots=0/360
    # handoff_readiness: ready=True codex_ready=True ... quota_state=eligible
    "v0.5.1-ready": (0.5, "eligible", "0/360", True, True),
}


@pytest.mark.parametrize("fixture", sorted(LOOPX_STATUS))
def test_quota_and_readiness_agree_with_loopx_status(fixture: str, tmp_path: Path) -> None:
    workspace = Workspace(place_loopx(fixture, tmp_path), clock=lambda: LOOPX_NOW)
    workspace.scan()
    goal = workspace.loopx.goal("loopx:demo-goal")
    assert goal is not None
    found = policy(goal)
    compute, state, slots, ready, codex_ready = LOOPX_STATUS[fixture]
    assert (found.compute, found.state) == (compute, state)
    assert f"{found.spent_slots}/{found.allowed_slots}" == slots
    assert found.ready is ready is codex_ready
    status = (LOOPX_FIXTURES / fixture / "status.md").read_text()
    assert f"quota: compute={compute} state={state} slots={slots}" in status
    assert f"handoff_readiness: ready={ready} codex_ready={codex_ready}" in status
    assert workspace.rows()["loopx:demo-goal"].budget_fraction == 0.0


def test_a_stopped_goal_or_zero_compute_is_paused_and_spent_slots_throttle(
    tmp_path: Path,
) -> None:
    workspace = Workspace(place_loopx("v0.5.1-ready", tmp_path), clock=lambda: LOOPX_NOW)
    workspace.scan()
    goal = workspace.loopx.goal("loopx:demo-goal")
    assert goal is not None
    quota, made = {"compute": 0.5, "window_hours": 12}, goal.entry
    for entry, state, allowed in (
        ({"quota": {**quota, "spent_slots": 360}}, "throttled", 360),
        ({"quota": {**quota, "compute": 0}}, "paused", 0),
        ({"activation_state": "stopped"}, "paused", 0),
        ({"compute_quota": "0.25", "quota": {}}, "eligible", 360),
    ):
        goal.entry = made.model_copy(update=entry)
        assert (policy(goal).state, policy(goal).allowed_slots) == (state, allowed), entry
