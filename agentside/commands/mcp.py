"""`hud agent mcp DIR --mission M [--actor A] [--expires-in SECONDS] [--patience SECONDS]`:
serve one mission over MCP on stdin/stdout (`agentside.mcp_server`) until the client
closes it.

`request_approval` returns at once; the client then asks `wait_for_decision` (each call
under its own tool-call timeout). A request the client has not asked about for
`--patience` seconds is withdrawn: nobody waits for it any more.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentside.commands import seconds
from agentside.mcp_server import DEFAULT_PATIENCE, build_server
from agentside.mission import Unusable
from agentside.output import EXIT_OK, EXIT_USAGE, fail


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("--mission", required=True, help="the mission id (it must exist)")
    parser.add_argument("--actor", default="mcp-agent", help="who writes (default: mcp-agent)")
    parser.add_argument(
        "--expires-in",
        type=seconds,
        default=600.0,
        help="seconds an approval request waits for a human (default 600)",
    )
    parser.add_argument(
        "--patience",
        type=seconds,
        default=DEFAULT_PATIENCE,
        help=f"withdraw a request the client has not asked about for this long "
        f"(default {DEFAULT_PATIENCE:g} s)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        server = build_server(
            args.dir, args.mission, args.actor, expires_in=args.expires_in, patience=args.patience
        )
    except Unusable as exc:
        return fail(EXIT_USAGE, str(exc))
    server.run("stdio")
    return EXIT_OK
