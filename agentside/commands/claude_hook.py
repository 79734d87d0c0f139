"""`hud agent claude-hook --state DIR --mission M [--step S] [--wait SECONDS]
[--on-timeout deny|ask]`: a Claude Code hook command for PreToolUse, PostToolUse and
PostToolUseFailure (it tells them apart by `hook_event_name`).

Reads the hook's JSON on stdin. PreToolUse prints `{"hookSpecificOutput": {...,
"permissionDecision": "allow"|"deny"|"ask", ...}}` and exits 0, also when something goes
wrong (then it denies). The post events print nothing; a failure to record exits 1 (Claude
Code shows it and goes on). Keep `--wait` below the hook's `timeout` in settings.json:
a hook that Claude Code kills decides nothing. See docs/claude-code.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from agentside.claude_hook import HookInput, Session, answer, post_tool_use, pre_tool_use
from agentside.commands import seconds
from agentside.mission import Unusable
from agentside.output import EXIT_OK, EXIT_REFUSED, fail
from store.agent import AgentError

POST_EVENTS = ("PostToolUse", "PostToolUseFailure")


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state", type=Path, required=True, metavar="DIR", help="the state directory"
    )
    parser.add_argument("--mission", required=True, help="the mission id (it must exist)")
    parser.add_argument("--step", default="session", help="the plan step (default: session)")
    parser.add_argument(
        "--wait",
        type=seconds,
        default=50.0,
        help="seconds to wait for a decision (default 50: under Claude Code's default 60 s "
        "hook timeout)",
    )
    parser.add_argument(
        "--on-timeout",
        choices=("deny", "ask"),
        default="deny",
        help="no decision in time: deny (default), or ask Claude Code's user",
    )


def run(args: argparse.Namespace) -> int:
    session = Session(args.state, args.mission, args.step, args.wait, args.on_timeout)
    try:
        hook = HookInput.model_validate_json(sys.stdin.buffer.read())
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in problem["loc"]) or "input"
        _print(answer("deny", f"the hook input does not validate ({where}: {problem['msg']})"))
        return EXIT_OK
    if hook.hook_event_name == "PreToolUse":
        _print(pre_tool_use(hook, session))
        return EXIT_OK
    if hook.hook_event_name not in POST_EVENTS:
        return fail(EXIT_REFUSED, f"not a tool hook event: {hook.hook_event_name!r}")
    try:
        post_tool_use(hook, session)
    except (AgentError, Unusable, OSError, ValueError) as exc:
        return fail(EXIT_REFUSED, f"cannot record the outcome: {exc}")
    return EXIT_OK


def _print(output: dict[str, object]) -> None:
    print(json.dumps(output, ensure_ascii=True))
