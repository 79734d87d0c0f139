"""The Claude Code hook never exits without its answer: whatever arrives on its stdin
(arbitrary bytes, arbitrary JSON with NaN and Infinity, hook-shaped JSON with weird
values), PreToolUse and unusable input get allow/deny/ask JSON and exit 0; a post event
prints nothing and exits 0 (recorded) or 1 (it says why); never a traceback."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agentside.conftest import MISSION, Ran

Agent = Callable[..., Ran]
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([math.nan, math.inf, -math.inf])  # not JSON: the hook must still answer
    | st.text(max_size=30)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
weird_text = st.text(max_size=40) | st.sampled_from(
    ["", "..", "a..b", "x" * 300, "\x1b[31m", "\u202e"]
)
hook_shaped = st.fixed_dictionaries(
    {
        "hook_event_name": st.sampled_from(["PreToolUse"] * 3 + [*EVENTS[1:], "Stop", "", "\x00"]),
        "tool_name": st.sampled_from(["Read", "Glob", "Bash", "Edit", "mcp__x__y"]) | weird_text,
        "tool_input": st.dictionaries(st.text(max_size=8), values, max_size=4) | values,
        "tool_use_id": weird_text,
    },
    optional={
        "session_id": weird_text,
        "cwd": weird_text,
        "tool_response": values,
        "error": values,
    },
)


def _check(agent: Agent, root: Path, stdin: bytes) -> None:
    ran = agent(
        "claude-hook", "--state", root, "--mission", MISSION, "--timeout", "16", "--wait", "0.05",
        stdin=stdin,
    )  # fmt: skip
    assert "Traceback" not in ran.err, ran.err
    if ran.out:
        assert ran.code == 0, ran.err
        answer = json.loads(ran.out)["hookSpecificOutput"]
        assert answer["hookEventName"] == "PreToolUse"
        assert answer["permissionDecision"] in ("allow", "deny", "ask")
        assert answer["permissionDecisionReason"].startswith("Operator HUD: ")
        return
    sent: Any = json.loads(stdin)  # only a hook input that parsed gets no answer
    assert isinstance(sent, dict) and sent["hook_event_name"] != "PreToolUse"
    assert ran.code in (0, 1) and (ran.code == 0 or ran.err.startswith("hud agent: "))


@FUZZ
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes(agent: Agent, root: Path, data: bytes) -> None:
    _check(agent, root, data)


@FUZZ
@given(value=values)
def test_arbitrary_json(agent: Agent, root: Path, value: Any) -> None:
    _check(agent, root, json.dumps(value, allow_nan=True).encode())


@FUZZ
@given(value=hook_shaped)
def test_hook_shaped_json_with_weird_values(
    agent: Agent, root: Path, value: dict[str, Any]
) -> None:
    _check(agent, root, json.dumps(value, allow_nan=True).encode())


def test_nan_in_a_passing_call_and_deep_nesting_answer(agent: Agent, root: Path) -> None:
    """The issue's case: NaN in the tool input of a call that would pass (Read)."""
    for stdin in (
        b'{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"x":NaN}}',
        b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"x":-Infinity}}',
        b"[" * 100_000,
        b'{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"x":1e999}}',
    ):
        _check(agent, root, stdin)
