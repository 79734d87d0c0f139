"""`hud serve`'s parts without a server: keys and roles, the child's command line and
environment, sizes, the listening address, the host key."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncssh
import pytest

from cli import launch
from cli.commands.serve import listen_address, loopback
from cli.main import main
from hud.serve.child import (
    FIXED_PATH,
    INPUT_HIGH,
    INPUT_LOW,
    INPUT_WINDOW,
    MAX_ENV_NAMES,
    AcceptedEnv,
    Child,
    child_argv,
    child_env,
    clamp,
)
from hud.serve.gate import Gate
from hud.serve.keys import MAX_BYTES, AuthorizedKeys, Grant, host_key
from hud.serve.tally import Tally

ALICE = asyncssh.generate_private_key("ssh-ed25519", comment="alice@laptop").convert_to_public()
BOB = asyncssh.generate_private_key("ssh-ed25519", comment="bob@desk").convert_to_public()


def public(key: asyncssh.SSHKey) -> str:
    return key.export_public_key().decode().strip()


def test_the_role_comes_from_the_key_option() -> None:
    keys = AuthorizedKeys(f'role="reviewer" {public(ALICE)}\nrole="approver" {public(BOB)}\n')
    alice = keys.grant(ALICE, "127.0.0.1")
    bob = keys.grant(BOB, "127.0.0.1")
    assert isinstance(alice, Grant) and alice.role == "reviewer" and alice.name == "alice@laptop"
    assert isinstance(bob, Grant) and bob.role == "approver"
    assert bob.fingerprint == BOB.get_fingerprint("sha256")


@pytest.mark.parametrize(
    "options", ["", 'role="admin" ', "role ", 'role="reviewer",role="approver" ', "no-pty "]
)
def test_no_valid_role_is_refused(options: str) -> None:
    grant = AuthorizedKeys(f"{options}{public(ALICE)}\n").grant(ALICE, "127.0.0.1")
    assert isinstance(grant, str) and "has no role" in grant


def test_unlisted_key_and_from_option() -> None:
    keys = AuthorizedKeys(f'role="approver",from="10.0.0.0/8" {public(BOB)}\n')
    assert "not authorized" in str(keys.grant(ALICE, "10.1.2.3"))
    assert "not authorized" in str(keys.grant(BOB, "127.0.0.1"))
    assert isinstance(keys.grant(BOB, "10.1.2.3"), Grant)


def test_bad_lines_are_named_and_skipped() -> None:
    keys = AuthorizedKeys(f'# a comment\nrole="x" garbage\n\nrole="reviewer" {public(ALICE)}\n')
    assert len(keys.problems) == 1 and keys.problems[0].startswith("line 2:")
    assert isinstance(keys.grant(ALICE, "::1"), Grant)


def test_an_unsafe_comment_names_the_fingerprint() -> None:
    grant = Grant("approver", "SHA256:abc", "bob \x1b[31m evil")
    assert grant.name == "SHA256:abc"
    assert Grant("approver", "SHA256:abc", "").name == "SHA256:abc"


def test_a_reviewer_child_holds_no_writer() -> None:
    alice = Grant("reviewer", "SHA256:a", "alice")
    reviewer = child_argv(Path("/s"), alice, "o", Path("/k"), Path("/v"))
    assert reviewer[1:4] == ["-I", "-m", "cli.main"] and reviewer[-2:] == ["/s", "--role=reviewer"]
    bob = Grant("approver", "SHA256:b", "-rf")
    approver = child_argv(Path("/s"), bob, "from x", Path("/k"), Path("/v"))
    assert approver[-6:] == [
        "/s",
        "--role=approver",
        "--as-user=-rf",
        "--origin=from x",
        "--sign-key=/k",
        "--save-to=/v",
    ]


def test_child_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_CONNECTION", "1.2.3.4 5 6.7.8.9 22")
    monkeypatch.setenv("EDITOR", "vim")
    monkeypatch.setenv("PYTHONPATH", "/evil")
    monkeypatch.setenv("LD_PRELOAD", "/evil.so")
    monkeypatch.setenv("HOME", "/evil")
    client = {"LANG": "C.UTF-8", "LD_PRELOAD": "/x.so", "NO_COLOR": "1", "PATH": "/evil"}
    env = child_env("xterm-kitty", client)
    assert env["TERM"] == "xterm-kitty" and env["LANG"] == "C.UTF-8" and env["NO_COLOR"] == "1"
    assert "SSH_CONNECTION" not in env and "LD_PRELOAD" not in env and env["PATH"] != "/evil"
    assert not {"EDITOR", "PYTHONPATH"} & set(env) and env["HOME"] != "/evil"
    assert env["PATH"] == FIXED_PATH
    assert child_env("\x1b]evil", {})["TERM"] == "xterm-256color"
    assert child_env(None, {})["TERM"] == "xterm-256color"


def test_sizes_are_bounded() -> None:
    assert clamp(0, 0) == (80, 24) == clamp(0, 50)
    assert clamp(100_000, 100_000) == (512, 256)
    assert clamp(1, 1) == (20, 5)
    assert clamp(132, 43) == (132, 43)


def test_listen_address() -> None:
    assert listen_address("127.0.0.1:2222") == ("127.0.0.1", 2222)
    assert listen_address("[::1]:0") == ("::1", 0)
    for bad in ("2222", "host:", ":22", "h:99999", "h:x"):
        with pytest.raises(ValueError):
            listen_address(bad)
    assert loopback("127.0.0.1") and loopback("::1") and loopback("localhost")
    assert not loopback("0.0.0.0") and not loopback("example.org")


def test_host_key_is_made_once_private(tmp_path: Path) -> None:
    path = tmp_path / "serve" / "ssh_host_ed25519_key"
    made, fresh = host_key(path)
    assert fresh and stat.S_IMODE(path.stat().st_mode) == 0o600
    again, fresh = host_key(path)
    assert not fresh and again.get_fingerprint() == made.get_fingerprint()
    path.chmod(0o644)
    with pytest.raises(ValueError, match="chmod 600"):
        host_key(path)


def test_the_hud_takes_its_identity_from_hud_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}
    monkeypatch.setattr(launch, "open_app", lambda root, **options: seen.update(options) or 0)
    main([str(tmp_path), "--as-user", "bob", "--origin", "from x", "--sign-key", "/k"])
    assert seen["identity"] == ("bob", "from x")
    main([str(tmp_path)])
    assert seen["identity"] == (None, None)


def test_serve_needs_authorized_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "authorized_keys"
    assert main(["serve", str(tmp_path), "--authorized-keys", str(missing)]) == 2
    assert 'role="reviewer"' in capsys.readouterr().err
    assert main(["serve", str(tmp_path / "nowhere")]) == 2


def test_the_gate_keeps_a_place_for_a_new_address() -> None:
    gate: Gate[int] = Gate(limit=4, per_address=2, burst=3, per_second=1.0)
    assert gate.admit("a", 1, 0.0) == ("admitted", None)
    assert gate.admit("a", 2, 0.0) == ("admitted", None)
    assert gate.admit("a", 3, 0.0) == ("admitted", 1)  # its own oldest goes
    assert gate.admit("a", 4, 0.0) == ("rate", None)  # three starts at once: the burst
    assert gate.admit("a", 4, 1.0) == ("admitted", 2)
    assert gate.admit("b", 5, 1.0) == ("admitted", None)
    assert gate.admit("c", 6, 1.0) == ("admitted", None)
    assert gate.admit("d", 7, 1.0) == ("admitted", 3)  # full: the most crowded address gives
    gate.leave("d", 7, logged_in=True)
    assert gate.waiting() == 3 and 7 not in gate.everyone()


def test_a_login_gives_its_start_back() -> None:
    gate: Gate[int] = Gate(burst=1, per_second=0.001)
    assert gate.admit("a", 1, 0.0)[0] == "admitted"
    gate.leave("a", 1, logged_in=True)
    assert gate.admit("a", 2, 0.0)[0] == "admitted"
    gate.leave("a", 2, logged_in=False)
    assert gate.admit("a", 3, 0.0)[0] == "rate"


def test_refusals_are_summed_up(caplog: pytest.LogCaptureFixture) -> None:
    tally = Tally(logging.getLogger("test.tally"), said=2)
    with caplog.at_level(logging.WARNING, "test.tally"):
        for number in range(1000):
            tally.refused("flood", f"10.0.0.{number % 20}")
        tally.summary()
    assert len(caplog.records) == 3
    assert "refused 998 more" in caplog.records[-1].getMessage()


def test_only_accepted_environment_requests_are_kept() -> None:
    env = AcceptedEnv()
    for number in range(1000):
        env[f"X{number}".encode()] = b"v" * 30_000
    env[b"LANG"] = b"C.UTF-8"
    env[b"LC_ALL"] = b"x" * 1000
    env[b"LD_PRELOAD"] = b"/x.so"
    assert env == {b"LANG": b"C.UTF-8"}
    for number in range(100):
        env[f"LC_{chr(65 + number % 26)}{chr(65 + number // 26)}".encode()] = b"1"
    assert len(env) == MAX_ENV_NAMES


def keys_file(folder: Path, text: str = "") -> Path:
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / "authorized_keys"
    path.write_text(text or f'role="reviewer" {public(ALICE)}\n')
    path.chmod(0o600)
    return path


def refusal(path: Path) -> str | None:
    keys = AuthorizedKeys.read(path)
    assert (keys.refused is None) == isinstance(keys.grant(ALICE, "127.0.0.1"), Grant)
    return keys.refused


def test_strict_modes_accept_a_private_file(tmp_path: Path) -> None:
    assert refusal(keys_file(tmp_path / "serve")) is None


def test_strict_modes_refuse_a_file_others_may_write(tmp_path: Path) -> None:
    path = keys_file(tmp_path / "serve")
    path.chmod(0o622)
    assert "writable by others" in str(refusal(path))


def test_strict_modes_refuse_a_folder_others_may_write(tmp_path: Path) -> None:
    path = keys_file(tmp_path / "serve")
    path.parent.chmod(0o777)
    assert "writable by others" in str(refusal(path))
    path.parent.chmod(0o700)
    tmp_path.chmod(0o775)  # further up
    assert "writable by others" in str(refusal(path))


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_strict_modes_refuse_a_file_of_another_user(tmp_path: Path) -> None:
    path = keys_file(tmp_path / "serve")
    os.chown(path, 4242, 4242)
    assert "another user" in str(refusal(path))


def test_strict_modes_refuse_a_symlink_even_to_a_good_file(tmp_path: Path) -> None:
    target = keys_file(tmp_path / "serve")
    target.chmod(0o666)
    link = tmp_path / "serve" / "link"
    link.symlink_to(target)
    assert "symlink" in str(refusal(link))


def test_strict_modes_refuse_a_fifo_without_waiting(tmp_path: Path) -> None:
    folder = tmp_path / "serve"
    folder.mkdir(mode=0o700)
    os.mkfifo(folder / "authorized_keys", 0o600)
    started = time.monotonic()
    assert "not a regular file" in str(refusal(folder / "authorized_keys"))
    assert time.monotonic() - started < 1


def test_strict_modes_refuse_a_huge_file(tmp_path: Path) -> None:
    path = keys_file(tmp_path / "serve", f'role="reviewer" {public(ALICE)}\n' + "#" * MAX_BYTES)
    assert "larger than" in str(refusal(path))


@pytest.mark.parametrize(
    ("written", "now", "granted"),
    [
        ("20300101", datetime(2029, 12, 31, tzinfo=UTC), True),
        ("20200101Z", datetime(2020, 1, 1, 0, 0, 1, tzinfo=UTC), False),
        ("202001011200Z", datetime(2020, 1, 1, 11, 59, tzinfo=UTC), True),
        ("20200101120030Z", datetime(2020, 1, 1, 12, 0, 31, tzinfo=UTC), False),
        ("2020", datetime(2000, 1, 1, tzinfo=UTC), False),  # not a time: refused
    ],
)
def test_expiry_time_is_honoured(written: str, now: datetime, granted: bool) -> None:
    keys = AuthorizedKeys(f'role="reviewer",expiry-time="{written}" {public(ALICE)}\n')
    grant = keys.grant(ALICE, "127.0.0.1", now)
    assert isinstance(grant, Grant) == granted, grant


def test_the_earliest_expiry_time_counts() -> None:
    line = f'role="reviewer",expiry-time="20300101Z",expiry-time="20200101Z" {public(ALICE)}'
    grant = AuthorizedKeys(line).grant(ALICE, "127.0.0.1", datetime(2025, 1, 1, tzinfo=UTC))
    assert "expired" in str(grant)


def test_serve_refuses_to_start_on_a_loose_keys_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = keys_file(tmp_path / "serve")
    path.chmod(0o666)
    assert main(["serve", str(tmp_path), "--authorized-keys", str(path)]) == 2
    assert "writable by others" in capsys.readouterr().err


HUD_THAT_READS_LATE = """
import os, sys, time, tty
tty.setraw(0)
os.write(1, b"raw")
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
while os.read(0, 65536):
    pass
"""
"""A HUD's terminal as Textual sets it (raw, so the pty pushes back), read only once the
file named by its argument exists."""


@pytest.mark.parametrize("chunk", [1, 100, 4096, 65536])
async def test_keys_the_hud_does_not_read_pause_the_client(chunk: int, tmp_path: Path) -> None:
    """However the client's keys arrive (one by one or in big chunks, onto keys already
    waiting or not), the child holds at most INPUT_HIGH plus one chunk before pausing the
    client, and lets it go on once the HUD has read what waits."""
    paused: list[bool] = []
    ready = asyncio.Event()
    go = tmp_path / "read now"
    child = await Child.start(
        [sys.executable, "-c", HUD_THAT_READS_LATE, str(go)],
        {},
        (80, 24),
        lambda data: ready.set() if b"raw" in data else None,
        paused.append,
    )
    try:
        await asyncio.wait_for(ready.wait(), 30)
        offered = 0
        while offered < 4 * 1024 * 1024 and not (paused and paused[-1]):
            child.write(b"j" * chunk)
            offered += chunk
        assert paused and paused[-1], f"{offered} bytes offered and the client never paused"
        assert len(child._pending) <= INPUT_HIGH + chunk
        go.touch()
        deadline = time.monotonic() + 30
        while paused[-1] and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not paused[-1], "the HUD read its keys and the client stayed paused"
    finally:
        await child.stop()


async def test_a_paused_client_goes_on_only_when_a_whole_window_fits(tmp_path: Path) -> None:
    """Resumed with little room, asyncssh would hand over part of what it holds, be paused
    again, and open a whole window for the rest: it would hold more at each pause. So the
    client goes on only once all it may have sent (a window) fits below INPUT_HIGH."""
    assert INPUT_HIGH - INPUT_LOW >= INPUT_WINDOW
    paused: list[bool] = []
    child = await Child.start(
        [sys.executable, "-c", HUD_THAT_READS_LATE, str(tmp_path / "never")],
        {},
        (80, 24),
        lambda data: None,
        paused.append,
    )
    try:
        for waiting, said in [
            (INPUT_HIGH + 1, [True]),
            (INPUT_HIGH, [True]),
            (INPUT_LOW + 1, [True]),
            (INPUT_LOW, [True, False]),
            (INPUT_HIGH, [True, False]),
        ]:
            child._pending = bytearray(waiting)
            child._hold_back()
            assert paused == said, waiting
    finally:
        await child.stop()
