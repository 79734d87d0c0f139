"""`hud` installed as a tool (`pipx install .`, `uv tool install .`): the wheel hatchling
builds, installed alone into a fresh venv, runs, and carries the themes' stylesheet.

Built without build isolation and installed without an index, so no network is needed.
The fresh venv sees this environment's site-packages through a .pth file, for the
dependencies only: operator-hud itself comes from the wheel (checked).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.small_support import REPO, VALID, small_fixture

# one worker runs them all: the wheel and its venv (module fixtures) are built once a run
pytestmark = [pytest.mark.wheel, pytest.mark.xdist_group("wheel")]

PACKAGES = ("store", "hud", "widgets", "themes", "simulator", "agentside")
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]

OPEN_HUD = """
import asyncio, sys
from pathlib import Path
from hud.app import HudApp

async def main():
    app = HudApp(Path(sys.argv[1]), live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print(type(app.screen).__name__)

asyncio.run(main())
"""
"""Opens the HUD headless, which reads the stylesheet from the installed package."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("pip", reason="no pip in this environment to build the wheel with")
    pytest.importorskip(
        "hatchling", reason="no build backend: hatchling is not installed (it is in [test])"
    )
    out = tmp_path_factory.mktemp("wheel")
    ok(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", out, REPO)
    [built] = out.glob("operator_hud-*.whl")
    return built


@pytest.fixture(scope="module")
def tool(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh venv with the wheel installed in it."""
    env = tmp_path_factory.mktemp("tool") / "venv"
    ok(sys.executable, "-m", "venv", "--without-pip", env)
    python = env / "bin" / "python"
    site = ok(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip()
    ours = dict.fromkeys(sysconfig.get_path(name) for name in ("purelib", "platlib"))
    (Path(site) / "dependencies.pth").write_text("".join(f"{path}\n" for path in ours))
    ok(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel)
    return env / "bin"


def run(*argv: object) -> subprocess.CompletedProcess[str]:
    """Run outside the repo (no package found in the working directory), no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, cwd="/", env=env, timeout=60
    )


def ok(*argv: object) -> str:
    """The output of a command that must succeed (its stderr in the failure)."""
    done = run(*argv)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_wheel_holds_the_packages_the_stylesheet_and_the_script(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"{package}/__init__.py" for package in PACKAGES} <= set(names)
    assert "themes/hud.tcss" in names
    assert not [n for n in names if n.startswith("tests/") or "__pycache__" in n]
    [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "hud = cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_installed_package_comes_from_the_wheel(tool: Path) -> None:
    where = ok(tool / "python", "-c", "import hud, themes; print(hud.__file__, themes.__file__)")
    assert all(Path(path).is_relative_to(tool.parent) for path in where.split())


def test_hud_version(tool: Path) -> None:
    assert ok(tool / "hud", "--version") == f"hud {VERSION}\n"


def test_hud_check(tool: Path, state_dir: Path) -> None:
    assert "3 missions, 0 errors, 0 warnings: valid" in ok(tool / "hud", "check", state_dir)
    small = ok(tool / "hud", "check", small_fixture(VALID))
    assert "SMALL v1.0.0: schema valid, lint valid, strict valid, verify valid" in small


def test_hud_opens_with_its_stylesheet(tool: Path, state_dir: Path) -> None:
    assert ok(tool / "python", "-c", OPEN_HUD, state_dir) == "OverviewScreen\n"
