"""`hud web DIR`: the HUD in a browser, one HUD process per browser session.

People sign in with a personal token, made with `hud web --add-token NAME --role ROLE`
(shown once; the tokens file keeps only its hash) or, behind a reverse proxy that signs
them in, are named by its header (`--proxy-header`, believed only from `--proxy`).
Roles as in `hud serve`: a reviewer browses (no writer exists in that HUD), an approver
decides requests and nothing else, an operator does everything; decisions carry the
person's name and are signed by the server's key. Loopback by default; any other
address needs TLS (`--tls-cert`, `--tls-key`). A notification's link
`URL/?open=MISSION/REQUEST` opens that request after sign-in.
See docs/web.md.

Exit 0 after SIGINT, SIGTERM or SIGHUP (every HUD ended first); 2 cannot run (no such
directory, no tokens file, no TLS off loopback, the address is taken).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cli.commands import SUMMARIES
from cli.commands.serve import listen_address, log_to_stderr, loopback
from hud.output import printable, say
from hud.roles import ROLES

if TYPE_CHECKING:
    import ssl

    from hud.web.server import Settings

EXIT_CANNOT_RUN = 2


def build(parser: argparse.ArgumentParser) -> None:
    from hud.serve.keys import default_dir
    from hud.web.tokens import default_path

    tokens = default_path()
    sign_key = default_dir() / "ssh_host_ed25519_key"
    parser.description = __doc__.split("\n\n", 1)[1] if __doc__ else SUMMARIES["web"]
    parser.add_argument("dir", type=Path, nargs="?", help="the state directory")
    parser.add_argument(
        "--listen",
        default="127.0.0.1:8023",
        metavar="HOST:PORT",
        help="address to listen on (default 127.0.0.1:8023; another than loopback needs TLS)",
    )
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="certificate chain (PEM)")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="its private key (PEM)")
    parser.add_argument(
        "--url",
        metavar="URL",
        help="where browsers reach this server, e.g. https://ops.example.com (default: "
        "from --listen); the only Origin and Host accepted, and the notifications' link",
    )
    parser.add_argument(
        "--tokens",
        type=Path,
        default=tokens,
        metavar="FILE",
        help=f"hashed personal tokens with names and roles (default {tokens})",
    )
    parser.add_argument(
        "--add-token",
        metavar="NAME",
        help="make a token for NAME (with --role), print it once and exit",
    )
    parser.add_argument("--role", choices=ROLES, help="the new token's role (with --add-token)")
    parser.add_argument(
        "--sign-key",
        type=Path,
        default=sign_key,
        metavar="FILE",
        help=f"the server's key that signs decisions, made if absent (default {sign_key}, "
        "the key of hud serve)",
    )
    parser.add_argument(
        "--proxy",
        metavar="ADDRESS",
        help="a reverse proxy's IP address: its --proxy-header names who signed in there",
    )
    parser.add_argument(
        "--proxy-header",
        metavar="NAME",
        help="the header with the signed-in user's name, believed from --proxy only",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=16,
        metavar="N",
        help="HUDs at once, one per browser session (default 16)",
    )
    parser.add_argument(
        "--session-hours",
        type=float,
        default=12.0,
        metavar="HOURS",
        help="a sign-in lasts this long (default 12)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=30.0,
        metavar="MINUTES",
        help="close a session without input for this long (default 30)",
    )
    parser.add_argument(
        "--max-memory",
        type=int,
        default=2048,
        metavar="MIB",
        help="address space of each HUD, at most (default 2048)",
    )


def _fail(message: str) -> int:
    say(f"hud web: {printable(message)}", err=True)
    return EXIT_CANNOT_RUN


def add_token(args: argparse.Namespace) -> int:
    from hud.web.tokens import add

    if args.role is None:
        return _fail("--add-token needs --role (reviewer, approver or operator)")
    try:
        token = add(args.tokens, args.add_token, args.role)
    except (OSError, ValueError) as error:
        return _fail(f"{args.tokens}: {error}")
    say(
        f"hud web: {args.add_token} ({args.role}) added to {args.tokens}; their token, shown "
        "only now (the file keeps its hash):",
        err=True,
    )
    say(token)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.add_token is not None:
        return add_token(args)
    if args.dir is None:
        return _fail("the state directory is missing: hud web DIR")
    checked = _settings(args)
    if isinstance(checked, int):
        return checked
    settings, host, port, tls = checked
    log_to_stderr("hud.web", "hud web", quiet="aiohttp.access")
    return asyncio.run(_serve(settings, host, port, tls, args.url is None))


def _settings(args: argparse.Namespace) -> tuple[Settings, str, int, ssl.SSLContext | None] | int:
    """The server's settings from `args`, or an exit code (having said why)."""
    from hud import saving
    from hud.serve.keys import host_key
    from hud.web.server import Proxy, Settings, tls_context
    from hud.web.tokens import Tokens

    root = args.dir.resolve()
    if not root.is_dir():
        return _fail(f"{args.dir}: no such directory")
    try:
        host, port = listen_address(args.listen)
    except ValueError as error:
        return _fail(str(error))
    if min(args.max_sessions, args.session_hours, args.idle_timeout, args.max_memory) <= 0:
        return _fail("--max-sessions, --session-hours, --idle-timeout, --max-memory: positive")
    if (args.tls_cert is None) != (args.tls_key is None):
        return _fail("--tls-cert and --tls-key go together")
    tls = None
    if args.tls_cert is not None:
        try:
            tls = tls_context(args.tls_cert, args.tls_key)
        except (OSError, ValueError) as error:
            return _fail(f"TLS: {error}")
    elif not loopback(host):
        return _fail(
            f"{host} is not loopback: others would send tokens and decisions in clear text; "
            "give --tls-cert and --tls-key (or listen on 127.0.0.1 behind a TLS proxy)"
        )
    proxy = None
    if (args.proxy is None) != (args.proxy_header is None):
        return _fail("--proxy and --proxy-header go together")
    if args.proxy is not None:
        try:
            address = str(ipaddress.ip_address(args.proxy))
        except ValueError:
            return _fail(f"--proxy {args.proxy!r}: an IP address")
        proxy = Proxy(address, args.proxy_header)
    if not os.path.lexists(args.tokens):
        return _fail(
            f"{args.tokens}: no such file; add a person with "
            "hud web --add-token NAME --role reviewer|approver|operator"
        )
    tokens = Tokens.read(args.tokens)
    if tokens.refused is not None:
        return _fail(f"tokens {tokens.refused}")
    for problem in tokens.problems:
        say(f"hud web: tokens: {problem} (skipped)", err=True)
    try:
        key, made = host_key(args.sign_key)
    except (OSError, ValueError) as error:
        return _fail(f"signing key {args.sign_key}: {error}")
    say(f"hud web: {'made a new' if made else 'using the'} signing key {args.sign_key}")
    say(f"hud web: it signs decisions as {key.get_fingerprint('sha256')}")
    try:
        saves = saving.made_serve_folder(root)
    except OSError as error:
        return _fail(f"exports folder: {error}")
    scheme = "https" if tls is not None else "http"
    shown = f"[{host}]" if ":" in host else host
    settings = Settings(
        root=root,
        tokens=args.tokens,
        sign_key=args.sign_key.resolve(),
        saves=saves,
        url=(args.url or f"{scheme}://{shown}:{port}").rstrip("/"),
        max_sessions=args.max_sessions,
        session_hours=args.session_hours,
        idle_timeout=args.idle_timeout * 60,
        memory=args.max_memory * 1024 * 1024,
        proxy=proxy,
    )
    return settings, host, port, tls


async def _serve(
    settings: Settings, host: str, port: int, tls: ssl.SSLContext | None, derived: bool
) -> int:
    """Serve until SIGINT, SIGTERM or SIGHUP, then end every session and its HUD."""
    from dataclasses import replace

    from aiohttp import web

    from hud.web.server import Server

    try:
        sock = _bind(host, port)
    except OSError as error:
        return _fail(f"cannot listen on {host}:{port}: {error}")
    bound = sock.getsockname()[1]
    if derived:  # port 0: the one bound
        settings = replace(settings, url=settings.url.rsplit(":", 1)[0] + f":{bound}")
    server = Server(settings)
    runner = web.AppRunner(server.app(), handle_signals=False, access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock, ssl_context=tls).start()
    say(f"hud web: exports and screenshots of sessions go to {settings.saves}")
    say(f"hud web: listening on {settings.url} (serving {settings.root})")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    say("hud web: stopping: ending every session")
    await server.stop()
    await runner.cleanup()
    return 0


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock
