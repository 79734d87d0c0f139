"""The HUD's driver: Textual's, with keyboard input held back while the app is behind.

Textual's input thread reads the terminal as fast as keys come and hands each event to
the event loop, which would pile a flood of keys (a paste, a hostile SSH client) up in
memory without end. Here that thread waits while more than BACKLOG events are on their
way or queued: the rest stays in the terminal's own buffer (a few KB), the terminal
stops taking input, and whoever sends it (`hud serve`, a terminal emulator) is held back
in turn. The same holds for the browser's keys under `hud web`, which runs the HUD with
Textual's web driver (its input is a pipe from the server).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from concurrent.futures import Future
from functools import cache

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message
from textual.message_pump import MessagePump

from hud.web import WEB_DRIVER

BACKLOG = 256
"""Input events on their way to the app or queued in it, beyond which reading waits."""
WAIT = 0.005
"""Seconds between two looks at the backlog while it is too long."""


def web() -> bool:
    """Whether this HUD draws for a browser (`hud web`), not on a terminal."""
    return os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER


def held_back() -> type[Driver]:
    """The driver for this HUD: the web one under `hud web`, else the terminal's."""
    return web_driver() if web() else HeldBackDriver


class _HeldBack(Driver):
    """A driver whose input thread waits while the app is behind (BACKLOG)."""

    _lock = threading.Lock()
    _in_flight = 0
    exit_event: threading.Event

    def send_message(self, message: Message) -> None:
        if not _on_a_loop():  # the input thread: wait, never the event loop itself
            while self._backlog() > BACKLOG and not self.exit_event.is_set():
                time.sleep(WAIT)
        with self._lock:
            self._in_flight += 1
        future = asyncio.run_coroutine_threadsafe(self._app._post_message(message), loop=self._loop)
        future.add_done_callback(self._landed)

    def _landed(self, _: Future[bool]) -> None:
        with self._lock:
            self._in_flight -= 1

    def _backlog(self) -> int:
        """Events sent and not yet queued, plus those queued in the app, its screen and
        the focused widget (where keys go); read from the input thread (a glimpse: the
        sizes are plain integers)."""
        app = self._app
        try:
            screen = app.screen
        except Exception:  # no screen yet (or any more)
            return self._in_flight + _queued(app)
        return self._in_flight + _queued(app) + _queued(screen) + _queued(screen.focused)


class HeldBackDriver(_HeldBack, LinuxDriver):
    """The terminal's driver, held back."""


@cache
def web_driver() -> type[Driver]:
    """The browser's driver (input in packets on stdin from `hud web`), held back; made
    on first use: Textual's web driver loads only under `hud web`."""
    from textual.drivers.web_driver import WebDriver

    class HeldBackWebDriver(_HeldBack, WebDriver):
        """The browser's driver, held back."""

    return HeldBackWebDriver


def _queued(pump: MessagePump | None) -> int:
    return 0 if pump is None else pump.message_queue_size


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
