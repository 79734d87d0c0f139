"""`hud serve DIR`: an SSH server where each session runs its own HUD on DIR.

Keys only, each with a role in the authorized-keys file (OpenSSH syntax):
`role="reviewer" ssh-ed25519 AAAA... alice@laptop` browses read-only (no writer exists
in that HUD); `role="approver"` decides requests and nothing else, `role="operator"`
also edits intent, constraints and budgets and makes missions; both as the key's
comment (else its SHA256 fingerprint), decisions signed by the host key. No shell,
commands, sftp or forwarding. The host key is made on first start; its fingerprint is
printed for clients to check.
See docs/ssh-reviewers.md.

Exit 0 after SIGINT, SIGTERM or SIGHUP (every HUD ended first); 2 cannot run (no such
directory, no authorized keys, the address is taken).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cli.commands import SUMMARIES
from hud.output import printable, say

if TYPE_CHECKING:
    import asyncssh

    from hud.notify.notifier import Notifier
    from hud.serve.server import Settings

EXIT_CANNOT_RUN = 2


def build(parser: argparse.ArgumentParser) -> None:
    from hud.serve.keys import default_dir

    home = default_dir()
    parser.description = __doc__.split("\n\n", 1)[1] if __doc__ else SUMMARIES["serve"]
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument(
        "--listen",
        default="127.0.0.1:2222",
        metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:2222; [::1]:2222 for IPv6; port 0: any)",
    )
    parser.add_argument(
        "--authorized-keys",
        type=Path,
        default=home / "authorized_keys",
        metavar="FILE",
        help=f"keys with their roles (default {home / 'authorized_keys'})",
    )
    parser.add_argument(
        "--host-key",
        type=Path,
        default=home / "ssh_host_ed25519_key",
        metavar="FILE",
        help=f"the server's key, made if absent (default {home / 'ssh_host_ed25519_key'})",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=16,
        metavar="N",
        help="logged-in sessions at once (default 16); connections not logged in yet have "
        "limits of their own (docs/ssh-reviewers.md)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=30.0,
        metavar="MINUTES",
        help="close a session without a key press for this long (default 30)",
    )
    parser.add_argument(
        "--notify",
        action="store_true",
        help="also run `hud notify` on DIR, with notify.toml's targets and --notify-to's "
        "(docs/notifications.md)",
    )
    from cli.commands.notify import add_target_options

    add_target_options(parser, "--notify-to")


def listen_address(text: str) -> tuple[str, int]:
    """`host:port` or `[v6]:port` as (host, port); ValueError if it is neither."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host.removeprefix("[").removesuffix("]"), int(port)


def _anywhere(host: str) -> bool:
    """True for 0.0.0.0 or ::, where people reach the server by its name."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _notifier_ended(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        say(f"hud serve: notify stopped: {task.exception()!r}", err=True)


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class _Printable(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), multiline=True)


def log_to_stderr(
    name: str = "hud.serve", prog: str = "hud serve", quiet: str = "asyncssh"
) -> None:
    """The server's log (logger `name`) on stderr, each line after `prog:`, control
    characters made visible; the library's own (`quiet`) only from warnings up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Printable(f"%(asctime)s {prog}: %(message)s"))
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logging.getLogger(quiet).setLevel(logging.WARNING)


def _fail(message: str) -> int:
    say(f"hud serve: {message}", err=True)
    return EXIT_CANNOT_RUN


def run(args: argparse.Namespace) -> int:
    from hud import saving
    from hud.serve.keys import AuthorizedKeys, host_key
    from hud.serve.server import Settings

    root = args.dir.resolve()
    if not root.is_dir():
        return _fail(f"{args.dir}: no such directory")
    try:
        host, port = listen_address(args.listen)
    except ValueError as error:
        return _fail(str(error))
    if args.max_sessions < 1 or args.idle_timeout <= 0:
        return _fail("--max-sessions and --idle-timeout must be positive")
    if not os.path.lexists(args.authorized_keys):
        return _fail(
            f"{args.authorized_keys}: no such file; put one key a line there, with its "
            'role: role="reviewer" ssh-ed25519 AAAA... alice@laptop (or "approver", "operator")'
        )
    keys = AuthorizedKeys.read(args.authorized_keys)
    if keys.refused is not None:
        return _fail(f"authorized keys {keys.refused}")
    for problem in keys.problems:
        say(f"hud serve: authorized keys: {problem} (skipped)", err=True)
    try:
        key, made = host_key(args.host_key)
    except (OSError, ValueError) as error:
        return _fail(f"host key {args.host_key}: {error}")
    try:
        saves = saving.made_serve_folder(root)
    except OSError as error:
        return _fail(f"exports folder: {error}")
    say(f"hud serve: {'made a new' if made else 'using the'} host key {args.host_key}")
    say(f"hud serve: host key fingerprint {key.get_fingerprint('sha256')}")
    if not loopback(host):
        say(f"hud serve: warning: listening on {host}, not only this machine", err=True)
    settings = Settings(
        root=root,
        host_key=args.host_key.resolve(),
        authorized_keys=args.authorized_keys,
        saves=saves,
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout * 60,
    )
    notifier = None
    if args.notify:
        from cli.commands.notify import prepare

        notifier = prepare(root, args, "hud serve: notify")
        if notifier is None:
            return EXIT_CANNOT_RUN
    log_to_stderr()
    return asyncio.run(_serve(settings, key, host, port, notifier))


async def _serve(
    settings: Settings, key: asyncssh.SSHKey, host: str, port: int, notifier: Notifier | None
) -> int:
    from hud.serve.server import Server

    server = Server(settings, key)
    try:
        bound = await server.start(host, port)
    except OSError as error:
        return _fail(f"cannot listen on {host}:{port}: {error}")
    shown = f"[{host}]" if ":" in host else host
    if notifier is not None:  # unless notify.toml says how to reach this server
        notifier.answer_by(f"ssh -p {bound} {socket.gethostname() if _anywhere(host) else host}")
    say(f"hud serve: exports and screenshots of sessions go to {settings.saves}")
    say(f"hud serve: listening on {shown}:{bound} (serving {settings.root})")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    notifying = asyncio.create_task(notifier.run(stop)) if notifier is not None else None
    if notifying is not None:
        notifying.add_done_callback(_notifier_ended)
    await stop.wait()
    if notifying is not None:
        await asyncio.wait([notifying])
    say("hud serve: stopping: ending every session")
    await server.stop()
    return 0
