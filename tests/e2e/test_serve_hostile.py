"""`hud serve` against hostile clients (asyncssh, raw sockets): absurd window sizes, a
flood of resizes, more connections than it takes, garbage instead of SSH. The server
keeps serving and no HUD outlives its connection."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pyte
import pytest

from tests.e2e.serve_support import Served, served

pytestmark = pytest.mark.e2e
MAX_SESSIONS = 8


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
