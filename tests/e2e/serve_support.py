"""A real `hud serve` on loopback for the tests: client keys, roles, the ssh command line."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.pty_screen import descendants, hud_command, wait_gone
from tests.factory import mission

SSH = "/usr/bin/ssh"
LISTED = {
    "alice": 'role="reviewer" ',
    "bob": 'role="approver" ',
    "olga": 'role="operator" ',
    "eve": "",
}
"""Listed client keys and their options: alice reviews, bob approves, olga operates, eve
has no role."""
UNLISTED = "mallory"


@dataclass
class Served:
    """A `hud serve` process and what it serves."""

    process: subprocess.Popen[str]
    port: int
    root: Path
    keys: Path
    log_file: Path

    def log(self) -> str:
        """What the server logged so far."""
        return self.log_file.read_text()

    def options(self, who: str) -> list[str]:
        """OpenSSH options to log in with `who`'s key, never asking anything (no port)."""
        return [
            *("-i", str(self.keys / who)),
            *("-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"),
            *("-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"),
        ]

    def ssh(self, who: str, *extra: str, command: tuple[str, ...] = ()) -> list[str]:
        """The `ssh` command line for `who`, with `extra` options and a `command`."""
        return [SSH, "-p", str(self.port), *self.options(who), *extra, "127.0.0.1", *command]

    def fingerprint(self, who: str) -> str:
        line = subprocess.run(
            ["ssh-keygen", "-l", "-E", "sha256", "-f", str(self.keys / f"{who}.pub")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return line.split()[1]

    def children(self) -> set[int]:
        """The processes the server runs now (its HUDs and theirs)."""
        return descendants(self.process.pid)

    def no_child_within(self, seconds: float) -> bool:
        """Whether every process the server runs has ended and been reaped by it within
        `seconds` (a zombie counts until then: a busy server reaps a moment later)."""
        deadline = time.monotonic() + seconds
        while self.children():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it; the exit status."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def make_keys(folder: Path) -> str:
    """A key per client in `folder`; the authorized-keys text for them."""
    folder.mkdir()
    for who in [*LISTED, UNLISTED]:
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                f"{who}@laptop",
                "-f",
                folder / who,
            ],
            check=True,
        )
    return "".join(
        f"{option}{(folder / f'{who}.pub').read_text()}" for who, option in LISTED.items()
    )


def state(root: Path) -> Path:
    """A mission with one pending request (read_only: approving asks only a reason)."""
    beta = mission(root, "beta", "Deploy the service")
    beta.step("s1", "waiting_for_approval")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/srv"})
    return root


def serve(
    tmp: Path, *options: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Served:
    """Start `hud serve` on 127.0.0.1, a free port, a fresh host key (in `cwd`, with `env`
    added to its environment); wait until it listens."""
    root = state(tmp / "state")
    keys = tmp / "keys"
    authorized = tmp / "authorized_keys"
    authorized.write_text(make_keys(keys))
    environ = dict(os.environ, HOME=str(tmp), LANG="C.UTF-8", TZ="UTC", **(env or {}))
    process = subprocess.Popen(
        hud_command(
            "serve",
            str(root),
            *("--listen", "127.0.0.1:0", "--authorized-keys", str(authorized)),
            *("--host-key", str(tmp / "host_key"), *options),
        ),
        stdout=subprocess.PIPE,
        stderr=(tmp / "serve.log").open("w"),
        text=True,
        env=environ,
        cwd=cwd,
    )
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            return Served(process, int(found.group(1)), root, keys, tmp / "serve.log")
    process.wait(5)
    raise AssertionError(f"hud serve did not start: {(tmp / 'serve.log').read_text()}")


@contextmanager
def served(
    tmp: Path, *options: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """`serve`, then stop it: it must exit 0 and leave no process behind."""
    server = serve(tmp, *options, cwd=cwd, env=env)
    try:
        yield server
    finally:
        running = server.children()
        assert server.stop() == 0
        assert wait_gone(running, 5) is not None, "a HUD outlived the server"


def tree_digest(root: Path) -> str:
    """Every path, mode and content under `root`, as one digest."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode() + oct(path.lstat().st_mode).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()
