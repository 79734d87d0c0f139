"""The HUD runs on a terminal and ends with it.

Without one (`ssh host hud` with no `-t`, scp, sftp, a `restrict` key without `pty`) it
would draw into a pipe for no one and outlive its client, so it refuses to start. Once
running, it exits when its terminal goes away: on SIGHUP, and when stdin hangs up
without a SIGHUP reaching it (it runs in another session than its terminal's), where
Textual's input thread would otherwise spin on end-of-input for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from hud.output import say

if TYPE_CHECKING:
    from textual.app import App

HANGUP_EXIT = 128 + signal.SIGHUP
"""The exit code after the terminal went away, as if killed by SIGHUP."""


def missing() -> str | None:
    """What is not a terminal ("stdin is not a terminal"), or None when both are."""
    streams = {"stdin": sys.stdin, "stdout": sys.stdout}
    absent = [name for name, stream in streams.items() if stream is None or not stream.isatty()]
    if not absent:
        return None
    return " and ".join(absent) + (
        " are not terminals" if len(absent) > 1 else " is not a terminal"
    )


def refused(prog: str) -> bool:
    """Say on stderr why `prog` cannot run the HUD here and return True; False on a terminal."""
    why = missing()
    if why is not None:
        say(
            f"{prog}: {why}; the HUD needs one (ssh -t), "
            "or use hud check, hud approvals or hud handoff",
            err=True,
        )
    return why is not None


def end_with_terminal(app: App[Any]) -> None:
    """Exit `app` (code HANGUP_EXIT) on SIGHUP or when stdin hangs up; call on its loop.

    A hung-up terminal's session leader gets SIGCONT right after SIGHUP, and Textual's
    driver takes SIGCONT as "resumed after ctrl+z": it would restart application mode on
    the dead terminal while the app shuts down, which can deadlock its output thread.
    Python runs pending handlers in signal-number order, so the SIGHUP handler (a plain
    one, not the event loop's, which would run later) puts SIGCONT back to its default
    first."""
    loop = asyncio.get_running_loop()

    def hung_up() -> None:
        app.exit(return_code=HANGUP_EXIT)

    def exit_soon() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed first: the app has ended
            loop.call_soon_threadsafe(hung_up)

    def on_sighup(_signal: int, _frame: object) -> None:
        signal.signal(signal.SIGCONT, signal.SIG_DFL)
        exit_soon()

    signal.signal(signal.SIGHUP, on_sighup)
    stdin = sys.__stdin__.fileno() if sys.__stdin__ is not None else 0

    def watch() -> None:
        poller = select.poll()
        poller.register(stdin, 0)  # no event asked: only a hang-up or an error wakes it
        poller.poll()
        exit_soon()

    threading.Thread(target=watch, name="hud-hangup", daemon=True).start()
