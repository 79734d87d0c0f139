"""`hud serve` against hostile clients (asyncssh, raw sockets): absurd window sizes, a
flood of resizes, more connections than it takes, garbage instead of SSH. The server
keeps serving and no HUD outlives its connection."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pyte
import pytest

from tests.e2e.pty_screen import PtyHud
from tests.e2e.serve_support import SSH, Served, served

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(SSH).exists(), reason="needs the OpenSSH client"),
]
MAX_SESSIONS = 8
FLOOD_SECONDS = 25


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path, "--max-sessions", str(MAX_SESSIONS)) as running:
        yield running


async def connect(server: Served, who: str) -> asyncssh.SSHClientConnection:
    return await asyncssh.connect(
        "127.0.0.1",
        server.port,
        username="anyone",
        client_keys=[str(server.keys / who)],
        known_hosts=None,
        agent_path=None,
        config=None,
    )


async def screen_shows(
    process: asyncssh.SSHClientProcess[bytes], size: tuple[int, int], text: str
) -> bool:
    """Whether `text` shows on a `size` screen fed the session's output within 15 s."""
    screen = pyte.Screen(*size)
    stream = pyte.ByteStream(screen)
    deadline = time.monotonic() + 15
    while text not in "\n".join(screen.display):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            data = await asyncio.wait_for(process.stdout.read(65536), left)
        except TimeoutError:
            return False
        if not data:
            return False
        stream.feed(data)
    return True


async def hud(
    conn: asyncssh.SSHClientConnection, size: tuple[int, int]
) -> asyncssh.SSHClientProcess[bytes]:
    return await conn.create_process(term_type="xterm-256color", term_size=size, encoding=None)


async def test_absurd_sizes_and_a_resize_flood(server: Served) -> None:
    async with await connect(server, "alice") as conn:
        process = await hud(conn, (0, 0))
        assert await screen_shows(process, (80, 24), "Deploy the")  # 0x0: 80x24
        process.change_terminal_size(100_000, 100_000)
        started = time.monotonic()
        for i in range(1000):
            process.change_terminal_size(i % 300, i % 120)
            if i % 10 == 0:
                await asyncio.sleep(0.01)
        assert time.monotonic() - started < 5
        process.change_terminal_size(100, 30)
        assert await screen_shows(process, (100, 30), "Deploy the service")
        assert server.process.poll() is None
    assert server.no_child_within(5), server.children()


async def test_more_connections_than_sessions(server: Served) -> None:
    results = await asyncio.gather(
        *(connect(server, "alice") for _ in range(100)), return_exceptions=True
    )
    taken = [result for result in results if isinstance(result, asyncssh.SSHClientConnection)]
    refused = [result for result in results if isinstance(result, BaseException)]
    assert 1 <= len(taken) <= MAX_SESSIONS
    assert len(taken) + len(refused) == 100
    assert all(isinstance(error, (asyncssh.Error, OSError)) for error in refused), refused
    for conn in taken:
        conn.close()
        await conn.wait_closed()
    await asyncio.sleep(0.2)
    async with await connect(server, "bob") as conn:  # served again, with a HUD
        assert await screen_shows(await hud(conn, (100, 30)), (100, 30), "Deploy the service")
    assert server.process.poll() is None
    assert server.no_child_within(5), server.children()


def test_garbage_and_dropped_connections(server: Served) -> None:
    for payload in (b"", b"SSH-2.0-x\r\n" + bytes(range(256)) * 40, b"GET / HTTP/1.0\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            raw.sendall(payload)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        assert raw.recv(64).startswith(b"SSH-2.0-")  # still serving
    assert server.process.poll() is None


def hold(server: Served, count: int, banner: int) -> list[socket.socket]:
    """`count` raw TCP connections from 127.0.0.2-4 that never log in; the first `banner`
    send an SSH version line and stall."""
    held = []
    for number in range(count):
        raw = socket.socket()
        held.append(raw)
        raw.settimeout(5)
        raw.bind((f"127.0.0.{2 + number % 3}", 0))
        raw.connect(("127.0.0.1", server.port))
        if number < banner:
            raw.sendall(b"SSH-2.0-stalling\r\n")
    return held


def test_keyless_connections_do_not_lock_keyed_users_out(tmp_path: Path) -> None:
    with served(tmp_path, "--max-sessions", "2") as server:
        held = hold(server, 100, banner=10)
        try:
            time.sleep(0.5)
            started = time.monotonic()
            login = subprocess.run(
                server.ssh("alice", "-b", "127.0.0.1", command=("true",)),
                capture_output=True,
                text=True,
                timeout=20,
                stdin=subprocess.DEVNULL,
            )
            took = time.monotonic() - started
            print(f"keyed login while 100 keyless connections are held: {took:.2f} s")
            assert login.returncode == 2 and "only the HUD runs here" in login.stderr  # logged in
            assert took < 5
            assert server.process.poll() is None
        finally:
            for raw in held:
                raw.close()
    assert len(server.log().splitlines()) < 30, server.log()  # refusals summed up, not each


def test_a_client_over_the_session_limit_is_told_so(tmp_path: Path) -> None:
    with served(tmp_path, "--max-sessions", "1") as server:
        first = PtyHud.spawn(server.ssh("bob", "-tt"), cols=100, rows=30)
        try:
            first.wait_for("Deploy the service")
            second = subprocess.run(
                server.ssh("alice", command=("true",)),
                capture_output=True,
                text=True,
                timeout=20,
                stdin=subprocess.DEVNULL,
            )
            assert second.returncode == 255 and "too many sessions" in second.stderr
            first.press("q")
            assert first.close() == 0
        finally:
            first.process.terminate(force=True)


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def hud_pid(server: Served) -> int:
    """The session's HUD (the server's child running cli.main)."""
    for pid in server.children():
        with contextlib.suppress(OSError):
            if b"cli.main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
    raise AssertionError("no HUD runs")


async def test_an_environment_flood_is_not_kept(server: Served) -> None:
    before = rss_mb(server.process.pid)
    flood = {f"X{number}": "v" * 30_000 for number in range(3000)}
    flood["LANG"] = "C.UTF-8"
    async with await connect(server, "alice") as conn:
        process = await conn.create_process(
            term_type="xterm-256color", term_size=(100, 30), encoding=None, env=flood
        )
        assert await screen_shows(process, (100, 30), "Deploy the service")
        during = rss_mb(server.process.pid)
        environ = Path(f"/proc/{hud_pid(server)}/environ").read_bytes().split(b"\0")
        assert b"LANG=C.UTF-8" in environ and not any(v.startswith(b"X1=") for v in environ)
    await asyncio.sleep(0.5)
    after = rss_mb(server.process.pid)
    print(
        f"server RSS: {before:.0f} MB before, {during:.0f} MB with 3,000 x 30 KB of env, "
        f"{after:.0f} MB after"
    )
    assert during - before < 30 and after - before < 30
    assert server.no_child_within(5), server.children()


@pytest.mark.slow
async def test_a_key_flood_is_held_back(server: Served) -> None:
    async with await connect(server, "alice") as conn:
        process = await hud(conn, (100, 30))
        assert await screen_shows(process, (100, 30), "Deploy the service")
        hud_before, server_before = rss_mb(hud_pid(server)), rss_mb(server.process.pid)

        async def drain_output() -> None:
            while await process.stdout.read(65536):
                pass

        reader = asyncio.create_task(drain_output())
        chunk = b"\x1b[B\x1b[Aj" * 4096
        sent = 0
        deadline = time.monotonic() + FLOOD_SECONDS
        while time.monotonic() < deadline:
            process.stdin.write(chunk)
            sent += len(chunk)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.stdin.drain(), deadline - time.monotonic())
        hud_after, server_after = rss_mb(hud_pid(server)), rss_mb(server.process.pid)
        print(
            f"{FLOOD_SECONDS} s key flood ({sent / 1e6:.0f} MB offered): HUD RSS "
            f"{hud_before:.0f} -> {hud_after:.0f} MB, server {server_before:.0f} -> "
            f"{server_after:.0f} MB"
        )
        reader.cancel()
        assert hud_after - hud_before < 40 and server_after - server_before < 30
        assert server.process.poll() is None
    assert server.no_child_within(5), server.children()
