"""`make demo` installs the runtime only, says one line, keeps pip's output in a log and
shows the log's tail when the install fails; `make test` installs the test extras.

pip and the HUD are stand-ins (a fake `python3 -m venv` makes them), so this runs in
well under a second and needs no index."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")

FAKE_PYTHON = """#!/bin/sh
# `-m venv DIR` makes DIR/bin/python (pip's stand-in) and DIR/bin/hud
mkdir -p "$3/bin"
cp "$FAKES/pip" "$3/bin/python"
cp "$FAKES/hud" "$3/bin/hud"
"""
FAKE_PIP = """#!/bin/sh
echo "$@" >> "$FAKES/pip-args"
i=1
while [ $i -le 100 ]; do echo "pip line $i"; i=$((i + 1)); done
exit "${PIP_EXIT:-0}"
"""
FAKE_HUD = """#!/bin/sh
echo "hud $*"
"""


def make(tmp_path: Path, target: str, **env: str) -> subprocess.CompletedProcess[str]:
    fakes = tmp_path / "fakes"
    fakes.mkdir(exist_ok=True)
    for name, text in (("python3", FAKE_PYTHON), ("pip", FAKE_PIP), ("hud", FAKE_HUD)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    venv = tmp_path / "venv"
    return subprocess.run(
        ["make", "--no-print-directory", target, f"VENV={venv}", f"PY={fakes / 'python3'}"],
        cwd=REPO,
        env={**os.environ, "FAKES": str(fakes), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_demo_installs_the_runtime_quietly(tmp_path: Path) -> None:
    done = make(tmp_path, "demo")
    assert done.returncode == 0, done.stderr
    venv = tmp_path / "venv"
    assert done.stdout.splitlines() == [
        f"Installing Operator HUD into {venv} (about a minute the first time; "
        f"log: {venv}/install.log)",
        f"{venv}/bin/hud demo",
        "hud demo",
    ]
    assert done.stderr == ""
    assert (tmp_path / "fakes/pip-args").read_text() == "-m pip install -e .\n"  # no [test]
    assert (venv / "install.log").read_text().count("pip line") == 100
    again = make(tmp_path, "demo")  # installed: straight to the demo
    assert again.stdout.splitlines() == [f"{venv}/bin/hud demo", "hud demo"]


def test_a_failed_install_shows_the_logs_tail(tmp_path: Path) -> None:
    done = make(tmp_path, "demo", PIP_EXIT="1")
    assert done.returncode != 0
    shown = done.stdout.splitlines()
    assert shown[1:] == [f"pip line {n}" for n in range(81, 101)]  # the last 20 lines
    assert "installing Operator HUD failed; the whole log:" in done.stderr
    assert not (tmp_path / "venv/.installed-runtime").exists()


def test_make_test_installs_the_test_extras(tmp_path: Path) -> None:
    done = subprocess.run(
        ["make", "-n", "test", f"VENV={tmp_path / 'venv'}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "pip install -e '.[test]'" in done.stdout
