"""Run the real `hud` in a pseudo-terminal and read its screen with pyte; close the terminal."""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import ptyprocess
import pyte

DETACH = (
    "import os, sys\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    os.setsid()\n"
    "    os.execvp(sys.argv[1], sys.argv[1:])\n"
    "os.waitpid(child, 0)\n"
)
"""`python -c DETACH argv...`: run argv in a session of its own, still on this terminal
(its stdin and stdout), so that closing the terminal sends it no SIGHUP: it only reads
end-of-input. The terminal's own session leader (this wrapper) gets the SIGHUP."""


def running(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (Linux /proc)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def descendants(pid: int) -> set[int]:
    """Every process below `pid` now (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def wait_gone(pids: Iterable[int], timeout: float) -> float | None:
    """Seconds until none of `pids` runs, or None if one still does after `timeout`."""
    started = time.monotonic()
    while any(running(pid) for pid in pids):
        if time.monotonic() - started > timeout:
            return None
        time.sleep(0.01)
    return time.monotonic() - started


def hud_command(*args: str) -> list[str]:
    """The installed `hud` console script beside this Python, else `python -m cli.main`."""
    script = Path(sys.executable).with_name("hud")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "cli.main", *args]


class PtyHud:
    """A `hud` process on a 80x24 (or other) pty, with its screen emulated by pyte."""

    def __init__(self, args: Sequence[str], cols: int = 80, rows: int = 24) -> None:
        self._start(hud_command(*args), cols, rows)

    @classmethod
    def spawn(cls, argv: Sequence[str], cols: int = 80, rows: int = 24) -> PtyHud:
        """Any command line (not only `hud`) on a pty."""
        self = cls.__new__(cls)
        self._start(list(argv), cols, rows)
        return self

    @staticmethod
    def hud_argv(*args: str) -> list[str]:
        return hud_command(*args)

    def _start(self, argv: list[str], cols: int, rows: int) -> None:
        env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor", TZ="UTC")
        env.pop("NO_COLOR", None)
        env.pop("TEXTUAL_THEME", None)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.process = ptyprocess.PtyProcess.spawn(argv, dimensions=(rows, cols), env=env)
        self.received = 0

    def pump(self, seconds: float = 0.1) -> None:
        """Feed whatever the process wrote within `seconds` into the screen."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            remaining = max(0.0, deadline - time.monotonic())
            if not self.process.isalive():
                break
            try:
                ready, _, _ = select.select([self.process.fd], [], [], remaining)
                if not ready:
                    continue
                data = self.process.read(65536)
            except EOFError:
                break
            self.received += len(data)
            self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def pump_until(self, condition: Callable[[], bool], timeout: float = 15.0) -> bool:
        """Keep the screen current until `condition()` holds (True) or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= deadline:
                return False
            self.pump(0.01)  # short slices: the time it shows up is measured (bench/)
        return True

    def holds(self, condition: Callable[[], bool], timeout: float = 15.0) -> None:
        """Pump until `condition()` holds; fail with the screen if it does not in time."""
        if not self.pump_until(condition, timeout):
            raise AssertionError(f"not so after {timeout} s; the screen:\n{self.text()}")

    def wait_for(self, needle: str, timeout: float = 15.0) -> str:
        """Pump until `needle` is on screen; return the screen or fail with it."""
        if not self.pump_until(lambda: needle in self.text(), timeout):
            raise AssertionError(f"{needle!r} not on screen after {timeout} s:\n{self.text()}")
        return self.text()

    def hang_up(self, timeout: float = 5.0) -> float | None:
        """Close the terminal as a closed window or a dropped ssh connection does: the
        master side goes away and the kernel hangs the terminal up. Seconds until the
        process on it ended, or None if it still runs after `timeout`."""
        started = time.monotonic()
        self.process.fileobj.close()
        while time.monotonic() - started < timeout:
            if not self.process.isalive():
                return time.monotonic() - started
            time.sleep(0.01)
        return None

    def press(self, keys: str) -> None:
        self.process.write(keys.encode())

    def close(self) -> int | None:
        """Wait briefly for exit, else terminate; return the exit status."""
        deadline = time.monotonic() + 10
        while self.process.isalive() and time.monotonic() < deadline:
            self.pump(0.1)
        if self.process.isalive():
            self.process.terminate(force=True)
        return self.process.exitstatus
