"""Every CLI command ends quietly on a closed pipe (`hud check DIR | head -1`): no
BrokenPipeError traceback, exit 141 (128 + SIGPIPE) or 0 when nothing was left to write."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.main import EXIT_CLOSED_PIPE
from tests.e2e.pty_screen import hud_command
from tests.factory import mission, stamp

BOUND = 30.0


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pipe") / "state"
    later = stamp(datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2))
    for index in range(3):
        built = mission(path, f"m{index}", "Migrate the database")
        built.step("s1", "running")
        built.usage(0.5, 100, 1)
        built.succeed("s1")
        built.request(f"r{index}", risk="read_only", tool="ls", expires_at=later)
        built.handoff(plan_version=1, current_step="s1", verified=["e1"])
    return path


COMMANDS = [
    ["check", "{root}"],
    ["check", "{root}", "--json"],
    ["approvals", "{root}"],
    ["approvals", "{root}", "--json"],
    ["metrics", "{root}"],
    ["metrics", "{root}", "--json"],
    ["replay", "{root}", "m0"],
    ["replay", "{root}", "m0", "--at", "2"],
    ["replay", "{root}", "m0", "--json"],
    ["review", "{root}", "m0"],
    ["review", "{root}", "m0", "--json"],
    ["handoff", "{root}", "m0"],
    ["decide", "{root}", "m1/r1", "reject", "--reason", "no"],
    ["--help"],
    ["--version"],
    ["check", "--help"],
    ["agent", "--help"],
]
"""Every command that prints to stdout, with the arguments to make it print."""


def closed_pipe_run(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run `hud ARGS` with a stdout whose reader closed before it started: every write
    fails, as at `| head -1` once head has gone (deterministic, unlike a race)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            hud_command(*args), stdout=writer, stderr=subprocess.PIPE, timeout=BOUND, check=False
        )
    finally:
        os.close(writer)


@pytest.mark.parametrize("template", COMMANDS, ids=" ".join)
def test_a_closed_pipe_ends_quietly(root: Path, template: list[str]) -> None:
    args = [word.format(root=root) for word in template]
    done = closed_pipe_run(args)
    err = done.stderr.decode()
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception" not in err, (
        args,
        err,
    )
    # argparse drops what --help cannot write (0); the rest stop at the closed pipe (141)
    assert done.returncode in (0, EXIT_CLOSED_PIPE), (args, done.returncode, err)
    if "--help" not in args:
        assert done.returncode == EXIT_CLOSED_PIPE, (args, done.returncode)


def test_head_1_ends_quietly(root: Path) -> None:
    """The race itself, a few times: the first line read, then the pipe closed."""
    for _ in range(4):
        process = subprocess.Popen(
            hud_command("check", str(root)), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait(timeout=BOUND) in (0, EXIT_CLOSED_PIPE)
        process.stderr.close()
        assert "Traceback" not in err and "BrokenPipe" not in err, err
