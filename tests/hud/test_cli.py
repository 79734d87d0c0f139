"""`hud --help`, `hud --version`, each subcommand's `--help`, a missing directory, and no
terminal (the HUD refuses to start; subcommands work)."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from cli import commands
from cli.main import main
from tests.e2e.pty_screen import hud_command


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
    assert "no export, no screenshot" in " ".join(out.split())  # read-only writes nothing
    assert "--role" in out and "--save-to" not in out
    for name in commands.NAMES:
        assert f"  {name} " in out


@pytest.mark.parametrize("name", commands.NAMES)
def test_each_subcommand_has_its_own_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code([name, "--help"]) in (0, None)
    assert capsys.readouterr().out.startswith(f"usage: hud {name}")


def test_a_missing_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_an_unknown_command_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["bogus-sub"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'bogus-sub'" in err and "check, simulate" in err
    assert "no such directory" not in err
    assert main(["chek"]) == 2
    assert "did you mean 'check'?" in capsys.readouterr().err
    assert main(["revew", str(tmp_path)]) == 2  # a typo before DIR: not a usage error
    assert "did you mean 'review'?" in capsys.readouterr().err
    assert main(["./bogus"]) == 2  # a path: the directory is missing
    err = capsys.readouterr().err
    assert "no such directory" in err and "unknown command" not in err
    (tmp_path / "bogus").mkdir()  # a directory of that name opens (here: no terminal)
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert "unknown command" not in err and "no such directory" not in err


@pytest.mark.parametrize("name", [*commands.NAMES, "agent"])
def test_help_cites_no_module_names(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Help is for people: docs/ paths, never `store.x` or `hud.acts.y`."""
    assert _exit_code([name, "--help"]) in (0, None)
    out = capsys.readouterr().out
    assert not re.search(r"\b(store|hud|widgets|agentside)\.(?!toml\b)[a-z_]+", out), out


# ---- no terminal -------------------------------------------------------------------------


def _without_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`hud args` with stdin and stdout not terminals (as over scp, sftp or `ssh host cmd`):
    (exit code, stdout, stderr); fails if it runs past NO_TTY_SECONDS."""
    done = subprocess.run(
        hud_command(*args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=NO_TTY_SECONDS,
        env=env,
    )
    return done.returncode, done.stdout, done.stderr


NO_TTY_SECONDS = 10.0
"""The process starts a Python interpreter; the refusal itself is immediate."""


def test_the_hud_refuses_to_start_without_a_terminal_and_subcommands_still_run(
    state_dir: Path,
) -> None:
    started = time.monotonic()
    code, out, err = _without_a_terminal(str(state_dir))
    assert time.monotonic() - started < NO_TTY_SECONDS
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "stdin and stdout are not terminals" in err
    code, out, err = _without_a_terminal("check", str(state_dir))
    assert code == 0 and "3 missions, 0 errors" in out and err == ""
    code, out, _ = _without_a_terminal("approvals", str(state_dir), "--json")
    assert code == 0 and '"beta"' in out


def test_the_demo_refuses_to_start_without_a_terminal(tmp_path: Path) -> None:
    code, out, err = _without_a_terminal("demo", env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert (code, out) == (2, "") and "are not terminals" in err
    assert list(tmp_path.iterdir()) == []  # no demo directory, no simulator log


def test_hud_check_keeps_what_start_up_made_out_of_the_collector(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One check, then the process ends: its modules, models and validators are frozen
    (`gc.freeze`), so no collection walks them again, nor the last one at exit."""
    gc.unfreeze()  # (what an earlier test in this process froze)
    assert gc.get_freeze_count() == 0
    assert main(["check", str(state_dir), "--json"]) == 0
    assert gc.get_freeze_count() > 0
    assert '"valid": true' in capsys.readouterr().out
