"""Run Python code in a fresh interpreter (what a new process imports, unlike pytest's)."""

from __future__ import annotations

import subprocess
import sys


def fresh_stdout(code: str, *args: str, timeout: float = 120) -> str:
    """`python -c code args...`'s standard output; raises if it fails or hangs."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    ).stdout
