"""`hud agent claude-hook --state DIR --mission M [--step S] [--timeout SECONDS]
[--wait SECONDS] [--on-timeout deny|ask]`: a Claude Code hook command for PreToolUse,
PostToolUse and PostToolUseFailure (it tells them apart by `hook_event_name`).

Reads the hook's JSON on stdin. PreToolUse prints `{"hookSpecificOutput": {...,
"permissionDecision": "allow"|"deny"|"ask", ...}}` and exits 0, whatever the input and
also when something goes wrong (then it denies). The post events print nothing; a
failure to record exits 1 (Claude Code shows it and goes on). Give `--timeout` the
hook's `timeout` in settings.json: the wait ends MARGIN seconds before it (a hook that
Claude Code kills decides nothing). See docs/claude-code.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentside.claude_hook import HookInput, Session, answer, post_tool_use, pre_tool_use
from agentside.commands import seconds
from agentside.output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, fail

POST_EVENTS = ("PostToolUse", "PostToolUseFailure")
CLAUDE_CODE_TIMEOUT = 60.0
"""Claude Code's default hook timeout, in seconds."""
MARGIN = 15.0
"""Seconds left between the end of the wait and the hook's timeout: for recording the
outcome and answering on a busy machine (10 concurrent hooks on 2 cores)."""


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state", type=Path, required=True, metavar="DIR", help="the state directory"
    )
    parser.add_argument("--mission", required=True, help="the mission id (it must exist)")
    parser.add_argument("--step", default="session", help="the plan step (default: session)")
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=CLAUDE_CODE_TIMEOUT,
        help=f"the hook's timeout in settings.json (default {CLAUDE_CODE_TIMEOUT:g}, Claude "
        "Code's own default)",
    )
    parser.add_argument(
        "--wait",
        type=seconds,
        help=f"seconds to wait for a decision (default and at most: --timeout less "
        f"{MARGIN:g} s, so that the answer arrives before Claude Code kills the hook)",
    )
    parser.add_argument(
        "--on-timeout",
        choices=("deny", "ask"),
        default="deny",
        help="no decision in time: deny (default), or ask Claude Code's user",
    )


def run(args: argparse.Namespace) -> int:
    if args.timeout <= MARGIN:
        return fail(EXIT_USAGE, f"--timeout must be over {MARGIN:g} s (the answer's margin)")
    session = Session(
        args.state, args.mission, args.step, hook_wait(args), args.on_timeout, _started()
    )
    hook = read_hook_input(sys.stdin.buffer.read())
    if isinstance(hook, str):
        _print(answer("deny", hook))
        return EXIT_OK
    if hook.hook_event_name == "PreToolUse":
        _print(pre_tool_use(hook, session))
        return EXIT_OK
    if hook.hook_event_name not in POST_EVENTS:
        return fail(EXIT_REFUSED, f"not a tool hook event: {hook.hook_event_name!r}")
    try:
        post_tool_use(hook, session)
    except Exception as exc:
        return fail(EXIT_REFUSED, f"cannot record the outcome: {type(exc).__name__}: {exc}")
    return EXIT_OK


def hook_wait(args: argparse.Namespace) -> float:
    """How long PreToolUse waits: `--wait`, but never past `--timeout` less MARGIN."""
    return float(min(args.wait or math.inf, args.timeout - MARGIN))


def _started() -> float:
    """When this process started, on the `time.monotonic` clock (Linux: from /proc, both
    count from boot); now, where that cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as stat, open("/proc/uptime", "rb") as uptime:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
            age = float(uptime.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    return time.monotonic() - max(age, 0.0)


def read_hook_input(data: bytes) -> HookInput | str:
    """The hook's input, or why it is unusable (then PreToolUse denies): not UTF-8 JSON
    (NaN and Infinity are not JSON; nesting too deep to parse), or not a tool hook's
    shape."""
    try:
        parsed = json.loads(data, parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return f"the hook input is not JSON ({type(exc).__name__}: {str(exc)[:200]})"
    try:
        return HookInput.model_validate(parsed)
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in problem["loc"]) or "input"
        return f"the hook input does not validate ({where}: {problem['msg']})"


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range")
    return value


def _print(output: dict[str, object]) -> None:
    print(json.dumps(output, ensure_ascii=True))
