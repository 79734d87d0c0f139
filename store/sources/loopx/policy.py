"""What loopx's own policy makes of a goal, derived as loopx does from the files the HUD
reads: who it waits on, its quota (compute, slots allowed and spent, state) and handoff
readiness, as `loopx status` reports them.

Mirrors loopx 0.5.1 and 2.1.1 (the same code in both): `quota.goal_quota_config` and
`quota.quota_status`, `control_plane/todos/todo_summary.active_state_todo_attention_item`
(who a goal waits on) and `control_plane/work_items/project_asset
.project_asset_handoff_check_projection` (readiness). docs/loopx.md sets them side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.sources.loopx.goal import Goal

COMPUTE = 1.0
WINDOW_HOURS = 24
SLOT_MINUTES = 1
"""loopx's defaults (control_plane/quota/policy_constants.py): 24 h of 1-minute slots."""


@dataclass(frozen=True, slots=True)
class Policy:
    waiting_on: str
    """"controller" (an open user gate or user todo), "codex" (an open agent todo), else ""."""
    compute: float
    allowed_slots: int
    spent_slots: int
    state: str
    """The quota state: paused, operator_gate, eligible, throttled or waiting."""

    @property
    def ready(self) -> bool:
        """loopx's handoff readiness: an agent may take the goal's next todo now."""
        return self.waiting_on == "codex" and self.state == "eligible"


def policy(goal: Goal) -> Policy:
    """The goal as loopx's policy sees it. Slots spent (and allowed, when it records
    them) come from the latest quota run, else the registry's quota, else none."""
    raw = goal.entry.quota if isinstance(goal.entry.quota, dict) else {}
    if goal.entry.compute_quota is not None and "compute" not in raw:
        raw = {**raw, "compute": goal.entry.compute_quota}
    compute = round(min(1.0, max(0.0, _number(raw.get("compute"), COMPUTE))), 2)
    window = max(1, int(_number(raw.get("window_hours"), WINDOW_HOURS)))
    slot = max(1, int(_number(raw.get("slot_minutes"), SLOT_MINUTES)))
    allowed = max(0, int(_number(raw.get("allowed_slots"), round(window * 60 / slot * compute))))
    spent = max(0, int(_number(raw.get("spent_slots"), 0)))
    run = goal.quota()
    if run is not None:
        allowed = int(run.allowed_slots) if run.allowed_slots is not None else allowed
        spent = int(run.spent_slots) if run.spent_slots is not None else spent
    waiting = waiting_on(goal)
    if _stopped(goal):
        compute, allowed, state = 0.0, 0, "paused"
    elif compute <= 0:
        state = "paused"
    elif waiting == "controller":
        state = "operator_gate"
    elif waiting == "codex":
        state = "throttled" if spent >= allowed else "eligible"
    else:
        state = "waiting"
    return Policy(waiting, compute, allowed, spent, state)


def waiting_on(goal: Goal) -> str:
    """A human (an open user gate, or an open user todo unless all are `user_action`),
    else an agent (an open agent todo), else no one."""
    users = [t for t in goal.state.todos if t.role == "user" and t.is_open]
    if goal.gates() or (users and not all(t.task_class == "user_action" for t in users)):
        return "controller"
    if any(t.role == "agent" and t.is_open for t in goal.state.todos):
        return "codex"
    return ""


def _stopped(goal: Goal) -> bool:
    """Stopped by its owner (`activation_state`, or `activation.state`: loopx 2.x)."""
    activation = goal.entry.activation if isinstance(goal.entry.activation, dict) else {}
    state = goal.entry.activation_state or activation.get("state")
    return str(state or "").strip().lower() == "stopped"


def _number(value: Any, default: float) -> float:
    """A number as loopx reads one (an int, a float or a numeric string), else `default`."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip()) if isinstance(value, str) else default
    except ValueError:
        return default
