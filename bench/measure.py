"""Peak resident memory of a process tree, sampled from /proc (Linux)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path


def with_bytecode() -> None:
    """The processes measured write and use bytecode, as an installed HUD does (pip
    compiles it): under PYTHONDONTWRITEBYTECODE every start compiled the HUD's own modules
    from source (a cold open at 1,000 missions: 2,824 M instructions to its first row
    against 2,177 M; the bare app, Textual's bytecode installed, never paid it)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):  # the process may end while we look
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found += [int(c) for c in Path(task.path, "children").read_text().split()]
    return found


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mib(pid: int) -> float:
    """Current RSS of `pid` and all its descendants, in MiB."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        total += _rss_kib(current)
        stack += _children(current)
    return total / 1024


def run_measured(argv: list[str], **popen: object) -> tuple[float, float, int]:
    """Run `argv`; return (wall seconds, peak tree RSS MiB, exit code).

    RSS is sampled every 0.1 s: reading /proc costs CPU that a busy 2-core machine
    would otherwise give to the process measured."""
    started = time.monotonic()
    process = subprocess.Popen(argv, **popen)  # type: ignore[call-overload]
    peak = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss_mib(process.pid))
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = process.wait()
    stop.set()
    sampler.join()
    return time.monotonic() - started, peak, code


def self_peak_mib() -> float:
    """This process's own peak RSS (VmHWM), in MiB."""
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0
