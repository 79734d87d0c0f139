"""`hud serve` end to end: the OpenSSH client on a pty, logged in with a key and a role.

A reviewer's write keys do nothing and no file changes; an approver's decision lands as
the key, signed by the server's key; unlisted keys, keys without a role, passwords,
commands and sftp are refused; a dropped connection, an idle one and a stopped server
leave no HUD behind.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pytest

from store.format.records import Decision
from store.trust import sshsig
from store.trust.signatures import NAMESPACE, decision_payload
from tests.e2e.pty_screen import PtyHud, running, wait_gone
from tests.e2e.serve_support import SSH, UNLISTED, Served, serve, served, tree_digest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(SSH).exists(), reason="needs the OpenSSH client"),
]
DECISION = "missions/beta/approvals/r1.toml"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path) as running:
        yield running


def login(server: Served, who: str) -> PtyHud:
    """`who` logged in with OpenSSH on a 100x30 pty, the HUD's overview on screen."""
    client = PtyHud.spawn(server.ssh(who, "-tt"), cols=100, rows=30)
    client.wait_for("Deploy the service")
    return client


def press(client: PtyHud, *keys: str) -> None:
    """Each of `keys` in turn, with time for the HUD to act on it."""
    for key in keys:
        client.press(key)
        client.pump(0.3)


def hud_process(server: Served) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of the one HUD the server runs."""
    for pid in server.children():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
        except OSError:
            continue
        if "cli.main" in argv:
            env = dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
            return argv, env
    raise AssertionError("no HUD runs")


def quit_hud(client: PtyHud, server: Served) -> None:
    client.press("q")
    assert client.close() == 0
    assert server.no_child_within(5), server.children()


@pytest.mark.slow
def test_reviewer_write_keys_do_nothing(server: Served) -> None:
    before = tree_digest(server.root)
    client = login(server, "alice")
    try:
        assert "READ-ONLY" in client.text()
        argv, env = hud_process(server)
        assert "--role=reviewer" in argv and not any(arg.startswith("--as-user") for arg in argv)
        assert env["TERM"] == "xterm-256color" and not any(name.startswith("SSH_") for name in env)
        press(client, "n", "\x13", "\x1b", "c", "\r")  # new mission, create; make state dir
        press(client, "a")
        client.wait_for("r1")
        press(client, "\r")
        client.wait_for('"path": "/srv"')
        press(client, "y", "\r", "n", "no\r")  # approve, reject
        assert "reason" not in client.text()
        press(client, "\x1b", "\x1b", "\r")
        client.wait_for("Intent")
        press(client, "e", "\r", "E", "\r", "b", "\r", "+", "\r")  # edits, budget
        assert tree_digest(server.root) == before
        quit_hud(client, server)
    finally:
        client.process.terminate(force=True)
    assert tree_digest(server.root) == before


def approve(client: PtyHud) -> None:
    """Open r1 and approve it up to the reason dialog."""
    press(client, "a")
    client.wait_for("r1")
    press(client, "\r")
    client.wait_for('"path": "/srv"')
    client.press("y")
    client.wait_for("reason (optional)")


def test_approver_decides_as_the_key(server: Served) -> None:
    client = login(server, "bob")
    try:
        assert "READ-ONLY" not in client.text()
        argv, _ = hud_process(server)
        host_key = server.keys.parent / "host_key"
        assert "--as-user=bob@laptop" in argv and f"--sign-key={host_key}" in argv
        approve(client)
        client.press("\r")
        client.wait_for("approved by")
        quit_hud(client, server)
    finally:
        client.process.terminate(force=True)
    decision = tomllib.loads((server.root / DECISION).read_text())
    assert decision["decision"] == "approve"
    assert decision["decided_by"] == "bob@laptop"
    assert decision["origin"] == f"hud serve key {server.fingerprint('bob')} from 127.0.0.1"
    signed = sshsig.parse(decision["signature"])
    record = Decision.model_validate(tomllib.loads((server.root / DECISION).read_text()))
    workspace = tomllib.loads((server.root / "workspace.toml").read_text())["id"]
    sshsig.verify(signed, decision_payload("beta", record, workspace), NAMESPACE)
    host = asyncssh.read_private_key(server.keys.parent / "host_key")
    assert signed.fingerprint == host.get_fingerprint("sha256")


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
    )


def ssh(server: Served, who: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run(server.ssh(who, *extra))


def test_refusals(server: Served) -> None:
    unlisted = ssh(server, UNLISTED)
    assert unlisted.returncode == 255 and "Permission denied" in unlisted.stderr
    no_role = ssh(server, "eve")
    assert no_role.returncode == 255 and "Permission denied" in no_role.stderr
    password = ssh(
        server, "alice", "-o", "PreferredAuthentications=password", "-o", "PubkeyAuthentication=no"
    )
    assert password.returncode == 255 and "Permission denied (publickey)" in password.stderr
    kbdint = ssh(
        server,
        "alice",
        *("-o", "PreferredAuthentications=keyboard-interactive", "-o", "PubkeyAuthentication=no"),
    )
    assert kbdint.returncode == 255 and "Permission denied (publickey)" in kbdint.stderr
    command = run(server.ssh("alice", command=("ls", "/")))
    assert command.returncode == 2 and "only the HUD runs here" in command.stderr
    assert command.stdout == ""
    sftp = run(["sftp", "-P", str(server.port), *server.options("alice"), "127.0.0.1"])
    assert sftp.returncode != 0 and "subsystem request failed" in sftp.stderr
    forward = ssh(server, "alice", "-N", "-o", "ExitOnForwardFailure=yes", "-R", "0:127.0.0.1:9")
    assert forward.returncode == 255 and "forwarding failed" in forward.stderr
    log = server.log()
    assert "is not authorized" in log and "has no role" in log and "a command" in log
    assert "ls /" not in log
    assert server.no_child_within(5)


def test_dropped_mid_decision_leaves_nothing(server: Served) -> None:
    before = tree_digest(server.root)
    client = login(server, "bob")
    try:
        approve(client)
        client.press("half a reason")
        client.pump(0.3)
        os.kill(client.process.pid, signal.SIGKILL)  # the connection drops
        assert server.no_child_within(5), server.children()
    finally:
        client.process.terminate(force=True)
    assert tree_digest(server.root) == before


def test_dropped_right_after_confirming_leaves_all_or_nothing(server: Served) -> None:
    client = login(server, "bob")
    try:
        approve(client)
        client.press("\r")
        os.kill(client.process.pid, signal.SIGKILL)
        assert server.no_child_within(5), server.children()
    finally:
        client.process.terminate(force=True)
    approvals = sorted(path.name for path in (server.root / DECISION).parent.iterdir())
    assert approvals in (["r1.json"], ["r1.json", "r1.toml"])  # no temporary file
    if "r1.toml" in approvals:
        assert tomllib.loads((server.root / DECISION).read_text())["decided_by"] == "bob@laptop"


def test_a_killed_server_leaves_no_hud(tmp_path: Path) -> None:
    server = serve(tmp_path)
    client = login(server, "alice")
    try:
        huds = server.children()
        server.process.kill()
        server.process.wait(5)
        assert wait_gone(huds, 5) is not None
    finally:
        client.process.terminate(force=True)


def test_stopping_the_server_ends_every_hud(tmp_path: Path) -> None:
    server = serve(tmp_path)
    clients = [login(server, "alice"), login(server, "bob")]
    try:
        huds = server.children()
        assert huds
        assert server.stop() == 0
        assert not any(running(pid) for pid in huds)
        for client in clients:
            assert client.close() is not None
    finally:
        for client in clients:
            client.process.terminate(force=True)


def test_idle_session_is_closed(tmp_path: Path) -> None:
    with served(tmp_path, "--idle-timeout", "0.05") as server:  # 3 s
        client = PtyHud.spawn(server.ssh("alice", "-tt"), cols=100, rows=30)
        client.wait_for("Approvals")  # the HUD runs (a loaded machine may take 2 s to it)
        try:
            started = time.monotonic()
            assert client.close() is not None
            assert time.monotonic() - started < 3 + 5
            assert server.no_child_within(5), server.children()
            assert "no input for" in server.log()
        finally:
            client.process.terminate(force=True)


def plant(folder: Path, marker: Path, *modules: str) -> None:
    """Python files in `folder` that append their name to `marker` when imported."""
    code = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for module in modules:
        path = folder / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)


def test_nothing_from_the_servers_folder_or_environment_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    here, elsewhere = tmp_path / "cwd", tmp_path / "pythonpath"
    plant(here, marker, "hud/__init__.py", "cli/main.py", "textual/__init__.py", "sitecustomize.py")
    plant(elsewhere, marker, "textual/__init__.py", "rich/__init__.py")
    startup = tmp_path / "startup.py"
    plant(tmp_path, marker, "startup.py")
    env = {"PYTHONPATH": str(elsewhere), "PYTHONSTARTUP": str(startup), "PYTHONNOUSERSITE": ""}
    env |= {"EDITOR": "vim", "HUD_TRAP": "1"}
    with served(tmp_path, cwd=here, env=env) as server:
        client = login(server, "alice")
        try:
            _, child_env = hud_process(server)
            assert not {"PYTHONPATH", "PYTHONSTARTUP", "EDITOR", "HUD_TRAP"} & set(child_env)
            for pid in server.children():
                assert Path(f"/proc/{pid}/cwd").resolve() != here
            quit_hud(client, server)
        finally:
            client.process.terminate(force=True)
    assert not marker.exists(), marker.read_text()


def test_a_keys_file_others_may_write_lets_nobody_in(server: Served) -> None:
    authorized = server.keys.parent / "authorized_keys"
    authorized.chmod(0o666)
    refused = run(server.ssh("alice", command=("true",)))
    assert refused.returncode == 255 and "Permission denied" in refused.stderr
    assert "writable by others" in server.log()
    authorized.chmod(0o600)
    assert run(server.ssh("alice", command=("true",))).returncode == 2  # in again, no restart


CONSTRAINTS = "missions/beta/constraints.toml"


def open_beta(client: PtyHud) -> None:
    press(client, "\r")
    client.wait_for("Intent")


def test_an_approver_cannot_touch_the_constraints(server: Served) -> None:
    before = tree_digest(server.root)
    client = login(server, "bob")
    try:
        argv, _ = hud_process(server)
        assert "--role=approver" in argv
        open_beta(client)
        client.wait_for("History")  # the footer is drawn
        assert "Edit constraints" not in client.text() and "Edit intent" not in client.text()
        press(client, "E", "e", "b")
        client.pump(0.5)
        assert "Editing" not in client.text()
        press(client, "\x13", "\r", "\x1b")  # would save an editor, were one open
        assert tree_digest(server.root) == before
        quit_hud(client, server)
    finally:
        client.process.terminate(force=True)
    assert tree_digest(server.root) == before


def test_an_operator_edits_the_constraints(server: Served) -> None:
    before = (server.root / CONSTRAINTS).read_text()
    client = login(server, "olga")
    try:
        open_beta(client)
        press(client, "E")
        client.wait_for(f"Editing {CONSTRAINTS}")
        client.press("# tightened by olga\r")
        client.pump(0.3)
        client.press("\x13")
        client.wait_for("saved missions/beta/constraints.toml")
        quit_hud(client, server)
    finally:
        client.process.terminate(force=True)
    after = (server.root / CONSTRAINTS).read_text()
    assert after != before and "# tightened by olga" in after


def saved_files(tmp: Path) -> list[Path]:
    """What sessions saved in the server's private folder (HOME is `tmp`)."""
    return sorted((tmp / ".local/state/operator-hud/serve").glob("*/saved/*"))


@pytest.mark.slow
def test_exports_stay_private_and_reviewers_save_none(tmp_path: Path) -> None:
    here = tmp_path / "cwd"
    here.mkdir()
    with served(tmp_path, cwd=here) as server:
        for who in ("alice", "bob"):
            client = login(server, who)
            try:
                open_beta(client)
                client.wait_for("History")  # the footer is drawn
                assert ("Export" in client.text()) == (who == "bob")
                press(client, "x")
                if who == "bob":
                    client.wait_for("handoff written to")
                quit_hud(client, server)
            finally:
                client.process.terminate(force=True)
            if who == "alice":
                assert saved_files(tmp_path) == []
    (saved,) = saved_files(tmp_path)
    assert saved.name == "beta-handoff.md" and list(here.iterdir()) == []
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
