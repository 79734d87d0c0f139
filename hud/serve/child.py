"""One session's HUD: a `hud` process on a pty of its own, and its end.

The child leads a new session with the pty as its controlling terminal, so a resize
(TIOCSWINSZ on the master) reaches it as SIGWINCH, and its end takes its whole process
group: SIGHUP (with the terminal hung up), then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pwd
import re
import signal
import struct
import sys
import termios
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from hud.roles import Role

DEFAULT_SIZE = (80, 24)
"""Columns and rows when the client says 0 (unknown)."""
MAX_COLUMNS, MAX_ROWS = 512, 256
MIN_COLUMNS, MIN_ROWS = 20, 5
RESIZE_EVERY = 0.05
"""Seconds: resizes within this are applied once, the last one."""
INPUT_WINDOW = 64 * 1024
"""Bytes a client may send ahead of what the HUD took (the SSH channel's window)."""
INPUT_HIGH = 2 * INPUT_WINDOW
"""Bytes of keyboard input waiting for the HUD beyond which the client is paused."""
INPUT_LOW = INPUT_HIGH - INPUT_WINDOW
"""A paused client goes on once this little waits: all asyncssh holds for it (at most a
window) then fits below INPUT_HIGH, so it is handed over whole. (Paused part-way, asyncssh
opens a whole window again for what it still holds, and holds more at each pause.)"""
PASSED_ENV = re.compile(r"LANG|LC_[A-Z]+|COLORTERM|NO_COLOR")
"""What the client may set in the child's environment (sshd's `AcceptEnv` of the docs)."""
MAX_ENV_NAMES, MAX_ENV_VALUE = 16, 256
"""Of what a client asks to set, the names and the bytes of a value kept at most."""
FIXED_PATH = "/usr/local/bin:/usr/bin:/bin"
_SAFE_TERM = re.compile(r"[A-Za-z0-9._+-]{1,64}")
_SAFE_TZ = re.compile(r"[A-Za-z0-9._+:/-]{1,64}")
GRACE = 1.0
"""Seconds the child has after SIGHUP, then after SIGTERM."""


class Person(Protocol):
    """Who a session is: an SSH key's grant (`hud serve`), a token's holder (`hud web`)."""

    @property
    def role(self) -> Role: ...

    @property
    def name(self) -> str: ...


def child_argv(
    root: Path, grant: Person, origin: str, host_key: Path, saves: Path, *more: str
) -> list[str]:
    """The HUD a session runs: this server's Python, isolated (`-I`: neither the current
    folder nor PYTHON* variables nor the user's site-packages reach `sys.path`), in the
    key's role. A reviewer's holds no writer and saves nothing; an approver's and an
    operator's write as the key's name, from `origin`, signing decisions with the host
    key, and save exports and screenshots into the server's private folder `saves`.
    `more`: further options of `hud` (`--open`)."""
    hud = [sys.executable, "-I", "-m", "cli.main", str(root), f"--role={grant.role}", *more]
    if grant.role == "reviewer":
        return hud
    return [
        *hud,
        f"--as-user={grant.name}",
        f"--origin={origin}",
        f"--sign-key={host_key}",
        f"--save-to={saves}",
    ]


def child_env(term: str | None, client: Mapping[str, str]) -> dict[str, str]:
    """A fixed environment, nothing else of this server's: PATH, the server user's HOME
    (from the password database, not $HOME), a UTF-8 locale, its time zone; the client's
    TERM and the few variables a client may pass (locale and colour). No external editor
    (its shell escape would be a shell: the in-app editor it is), no SSH_*, no PYTHON*,
    no LD_*."""
    env = {"PATH": FIXED_PATH, "HOME": _home(), "LANG": "C.UTF-8"}
    zone = os.environ.get("TZ", "")
    if _SAFE_TZ.fullmatch(zone):
        env["TZ"] = zone
    for name, value in client.items():
        if PASSED_ENV.fullmatch(name) and value.isprintable() and len(value) <= 256:
            env[name] = value
    env["TERM"] = term if term and _SAFE_TERM.fullmatch(term) else "xterm-256color"
    return env


def _home() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return "/"


class AcceptedEnv(dict[bytes, bytes]):
    """Where the SSH channel stores the client's environment requests, keeping only what a
    HUD may get (PASSED_ENV, short values, MAX_ENV_NAMES names): a flood of others is
    dropped as it arrives, never held."""

    _PASSED = re.compile(PASSED_ENV.pattern.encode())

    def __setitem__(self, name: bytes, value: bytes) -> None:
        room = name in self or len(self) < MAX_ENV_NAMES
        if room and len(value) <= MAX_ENV_VALUE and self._PASSED.fullmatch(name):
            super().__setitem__(name, value)


def clamp(columns: int, rows: int) -> tuple[int, int]:
    """A size a HUD can draw: 0 (unknown) is the default, anything else is bounded."""
    if columns <= 0 or rows <= 0:
        return DEFAULT_SIZE
    return (
        min(max(columns, MIN_COLUMNS), MAX_COLUMNS),
        min(max(rows, MIN_ROWS), MAX_ROWS),
    )


def _set_size(fd: int, size: tuple[int, int]) -> None:
    columns, rows = clamp(*size)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def _take_terminal() -> None:  # pragma: no cover (runs in the child, between fork and exec)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


async def end_group(process: asyncio.subprocess.Process) -> None:
    """End a HUD started in a session of its own and every process of its group: SIGHUP,
    SIGTERM, SIGKILL, GRACE seconds apart, until it is gone; reap it."""
    pid = process.pid
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGKILL):
        if process.returncode is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE)
    await process.wait()
    with contextlib.suppress(ProcessLookupError):  # what it left behind in its group
        os.killpg(pid, signal.SIGKILL)


class Child:
    """A running HUD on a pty: `write` keys to it, its output goes to `output`."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        master: int,
        output: Callable[[bytes], None],
        input_paused: Callable[[bool], None],
    ) -> None:
        self.process = process
        self._master = master
        self._output = output
        self._input_paused = input_paused
        self._pending = bytearray()
        self._size: tuple[int, int] | None = None
        self._loop = asyncio.get_running_loop()
        self._reading = False
        self._closed = False
        self.resume_output()

    @classmethod
    async def start(
        cls,
        argv: list[str],
        env: Mapping[str, str],
        size: tuple[int, int],
        output: Callable[[bytes], None],
        input_paused: Callable[[bool], None],
    ) -> Child:
        master, slave = os.openpty()
        try:
            _set_size(slave, size)
            os.set_blocking(master, False)
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=dict(env),
                cwd="/",  # nothing of the server's current folder, even by accident
                start_new_session=True,
                preexec_fn=_take_terminal,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        return cls(process, master, output, input_paused)

    def write(self, data: bytes) -> None:
        """Keys from the client; held while the HUD is not reading (the client is paused
        past INPUT_HIGH)."""
        if self._closed:
            return
        waiting = bool(self._pending)
        self._pending += data
        if waiting:  # the HUD is not keeping up
            self._hold_back()
        else:
            self._flush()

    def resize(self, columns: int, rows: int) -> None:
        """Apply the newest size at most every RESIZE_EVERY seconds."""
        first = self._size is None
        self._size = (columns, rows)
        if first:
            self._loop.call_later(RESIZE_EVERY, self._apply_size)

    def pause_output(self) -> None:
        if self._reading:
            self._loop.remove_reader(self._master)
            self._reading = False

    def resume_output(self) -> None:
        if not self._reading and not self._closed:
            self._loop.add_reader(self._master, self._read)
            self._reading = True

    async def wait(self) -> int:
        """The HUD's exit status (128 + N when killed by signal N), once what it wrote is
        passed on."""
        code = await self.process.wait()
        with contextlib.suppress(OSError):
            while not self._closed and (data := os.read(self._master, 65536)):
                self._output(data)
        return code if code >= 0 else 128 - code

    async def stop(self) -> None:
        """End the HUD and every process of its group, and reap it."""
        self._close()
        await end_group(self.process)

    def _close(self) -> None:
        if self._closed:
            return
        self.pause_output()
        self._loop.remove_writer(self._master)
        self._closed = True
        os.close(self._master)  # hangs the terminal up

    def _read(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except BlockingIOError:
            return
        except OSError:  # EIO: every process let go of the terminal
            data = b""
        if data:
            self._output(data)
        else:
            self.pause_output()

    def _flush(self) -> None:
        if self._closed:
            return
        try:
            written = os.write(self._master, self._pending)
        except BlockingIOError:
            written = 0
        except OSError:
            written = len(self._pending)  # the HUD is gone: nothing will read it
        del self._pending[:written]
        if self._pending:
            self._loop.add_writer(self._master, self._flush)
        else:
            self._loop.remove_writer(self._master)
        self._hold_back()

    def _hold_back(self) -> None:
        """Pause the client past INPUT_HIGH; let it go on at INPUT_LOW."""
        if len(self._pending) > INPUT_HIGH:
            self._input_paused(True)
        elif len(self._pending) <= INPUT_LOW:
            self._input_paused(False)

    def _apply_size(self) -> None:
        size, self._size = self._size, None
        if size is not None and not self._closed:
            _set_size(self._master, size)
