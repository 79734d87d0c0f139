"""`hud --help`, `hud --version`, each subcommand's `--help`, and a missing directory."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from hud import commands
from hud.cli import main


def _exit_code(argv: list[str]) -> int | str | None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    return stopped.value.code


def test_version_is_the_installed_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["--version"]) in (0, None)
    assert capsys.readouterr().out == f"hud {version('operator-hud')}\n"


def test_help_names_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(["--help"]) in (0, None)
    out = capsys.readouterr().out
    assert "usage: hud" in out and "--read-only" in out
    for name in commands.NAMES:
        assert f"  {name} " in out


@pytest.mark.parametrize("name", commands.NAMES)
def test_each_subcommand_has_its_own_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code([name, "--help"]) in (0, None)
    assert capsys.readouterr().out.startswith(f"usage: hud {name}")


def test_a_missing_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "no such directory" in capsys.readouterr().err
