"""Open the HUD on a state directory."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from cli.commands import sign_key_signer
from hud import driver, terminal
from hud.output import say
from hud.pending_writes import wait_for_writes
from hud.roles import Identity, Role

if TYPE_CHECKING:
    from hud.opening import Target

LINGER_SECONDS = 0.3
"""How long a quitting HUD waits for a write of the user's files still under way off the
event loop (`hud.pending_writes`: view settings, a screenshot, an export; decisions and
edits are written on the loop, before it ends). A thread still reading (the first scan,
a replay's first read) is never waited for (`q` always quits within a second)."""


def open_app(
    root: Path,
    *,
    read_only: bool,
    theme: str | None,
    identity: Identity = (None, None),
    sign_key: Path | None = None,
    role: Role = "operator",
    saves: Path | None = None,
    opening: Target | None = None,
) -> int:
    """Run the HUD; exit 2 when `root` is not a directory, `sign_key` cannot sign or there
    is no terminal, 129 when the terminal went away. Under `hud web` (Textual's web
    driver) it draws for a browser, through the pipes of its server."""
    if not root.is_dir():
        say(f"hud: {root}: no such directory", err=True)
        return 2
    signer = None
    if sign_key is not None:
        signer = sign_key_signer(sign_key, "hud")
        if signer is None:
            return 2
    if not driver.web() and terminal.refused("hud"):
        return 2
    if not read_only and not os.access(root, os.W_OK):
        read_only = True
    from store.index import prefetch

    gc.disable()  # start-up allocates much and frees little; HudApp collects after its scan
    small = prefetch.start(root)  # before any thread exists: it forks
    try:
        from hud.app import HudApp

        app = HudApp(
            root,
            read_only=read_only,
            theme=theme,
            prefetch=small,
            identity=identity,
            signer=signer,
            role=role,
            saves=saves,
            opening=opening,
        )
        loop = asyncio.new_event_loop()
        app.run(loop=loop)
    finally:
        if small is not None:
            small.close()
    code = app.return_code or 0
    _close(loop, code)
    return code


def _close(loop: asyncio.AbstractEventLoop, code: int) -> None:
    """Close the app's loop as `asyncio.run` does, except that its reads are not waited
    for: a thread still busy ends with the process (os._exit, with the app's exit `code`,
    once a write under way has ended, LINGER_SECONDS at most, and what was printed is
    flushed) instead of holding it."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()  # idle executor threads end; a busy one would finish its read first
    if _busy():
        wait_for_writes(LINGER_SECONDS)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def _busy() -> list[threading.Thread]:
    """The threads that would hold the process at exit (not daemons, not this one)."""
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]
