"""`hud agent SUBCOMMAND ...`: the agents' side of the CLI (the router `cli.main` hands
over here). Each subcommand is a module of `agentside.commands` with `build(parser)` and
`run(args) -> exit code`, imported only when it runs (the MCP SDK loads only for `mcp`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib import import_module

SUMMARIES = {
    "plan": "propose the next plan version from a JSON file (- for stdin)",
    "step": "record a step's state",
    "evidence": "record an observation, optionally with an artifact (stored and hashed)",
    "request": "ask a human to approve a tool call; --wait prints the decision",
    "authorize": "at commit time: may the approved call run now? (uses the approval, once)",
    "claude-hook": "Claude Code PreToolUse / PostToolUse hook (hook JSON on stdin)",
    "mcp": "a stdio MCP server for one mission",
}
"""Subcommand -> one line for `hud agent --help`."""

EPILOG = """exit codes:
  0  done; approved (request --wait, authorize)
  1  refused or rejected (also stale, already used, not decided at authorize)
  2  cannot run (usage, no such directory or mission, unreadable input)
  3  expired, withdrawn, or no decision before --wait ran out: default deny
  4  authorize: already authorized under this key (a resume after a crash): do not
     repeat the effect, record its outcome

An agent writes only .json / .jsonl, through these commands; never a .toml."""


def _parser() -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:<12} {line}" for name, line in SUMMARIES.items())
    parser = argparse.ArgumentParser(
        prog="hud agent",
        description="Write into a state directory as an agent runtime, through the agents' "
        "writer only.",
        epilog=f"subcommands (each has --help):\n{lines}\n\n{EPILOG}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=tuple(SUMMARIES), metavar="SUBCOMMAND")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str]) -> int:
    chosen = _parser().parse_args(argv)
    module = import_module(f"agentside.commands.{chosen.command.replace('-', '_')}")
    parser = argparse.ArgumentParser(
        prog=f"hud agent {chosen.command}",
        description=SUMMARIES[chosen.command],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.build(parser)
    code: int = module.run(parser.parse_args(chosen.rest))
    return code
