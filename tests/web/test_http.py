"""`hud web` at the HTTP level: who may sign in and from where, what a websocket needs,
the cookie, the bounds, the HUD each session runs, and TLS off loopback."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.pty_screen import hud_command, wait_gone
from tests.e2e.test_serve_ssh import plant
from tests.web.support import Web, fetch, served, start

pytestmark = pytest.mark.e2e


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Web]:
    with served(tmp_path) as running:
        yield running


async def socket_answer(
    web: Web, *, origin: str | None, cookie: str | None, path: str = "/ws"
) -> int:
    """The HTTP status of a websocket handshake (101 when it was taken)."""
    headers = {"Cookie": cookie} if cookie else {}
    url = web.url.replace("http", "ws", 1) + path
    async with aiohttp.ClientSession() as client:
        try:
            socket = await client.ws_connect(url, origin=origin, headers=headers)
        except aiohttp.WSServerHandshakeError as error:
            return error.status
        await socket.close()
        return 101


def test_sign_in_sets_a_strict_cookie_and_keeps_the_link(web: Web) -> None:
    answer = web.sign_in(web.tokens["bob"], "beta/r1")
    assert answer.status == 303
    assert answer.headers["Location"] == "/?open=beta/r1"
    cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=43200" in cookie
    assert "Secure" not in cookie  # plain http on loopback: a Secure cookie would not return
    page = fetch(
        urllib.request.Request(f"{web.url}/?open=beta/r1", headers={"Cookie": cookie.split(";")[0]})
    )
    text = page.read().decode()
    assert page.status == 200 and "/ws/beta/r1" in text and "bob (approver)" in text
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert "signed in: approver bob from 127.0.0.1" in web.log()


def test_a_wrong_or_missing_token_is_refused(web: Web) -> None:
    for token in ("hudw_not-a-token", "", web.tokens["bob"][:-1]):
        answer = web.sign_in(token)
        assert answer.status == 403, token
        assert "Set-Cookie" not in answer.headers
        assert "That token is not valid here." in answer.read().decode()
    assert web.log().count("a wrong token") == 3
    page = fetch(f"{web.url}/")  # no cookie: the sign-in form, never the HUD
    assert page.status == 200 and 'name="token"' in page.read().decode()


def test_the_link_survives_sign_in_only_as_ids(web: Web) -> None:
    for bad in ("https://evil.example/x", "//evil.example", "beta/../../r1", "beta/r1\r\nX: y"):
        assert fetch(f"{web.url}/?open={urllib.parse.quote(bad)}").status == 400, bad
        assert web.sign_in(web.tokens["bob"], bad).status == 400, bad
    form = fetch(f"{web.url}/?open=beta/r1").read().decode()
    assert 'name="open" value="beta/r1"' in form


async def test_a_websocket_needs_a_session_and_this_origin(web: Web) -> None:
    cookie = web.cookie("bob")
    assert await socket_answer(web, origin=web.url, cookie=None) == 401
    assert await socket_answer(web, origin=web.url, cookie="hud_session=forged") == 401
    assert await socket_answer(web, origin="http://evil.example", cookie=cookie) == 403
    assert await socket_answer(web, origin=None, cookie=cookie) == 403
    assert await socket_answer(web, origin="http://localhost:1", cookie=cookie) == 403
    assert await socket_answer(web, origin=web.url, cookie=cookie) == 101
    log = web.log()
    assert "a websocket without a session" in log and "Origin 'http://evil.example'" in log


def test_a_form_from_another_site_is_refused(web: Web) -> None:
    answer = web.sign_in(web.tokens["bob"], origin="http://evil.example")
    assert answer.status == 403 and "Set-Cookie" not in answer.headers
    assert web.sign_in(web.tokens["bob"], origin="null").status == 403


def test_another_host_is_refused(web: Web) -> None:
    port = web.url.rsplit(":", 1)[1]
    rebound = urllib.request.Request(f"{web.url}/", headers={"Host": f"evil.example:{port}"})
    assert fetch(rebound).status == 421


async def test_the_hud_runs_isolated_in_its_role(web: Web) -> None:
    cookie = web.cookie("alice")
    url = web.url.replace("http", "ws", 1) + "/ws/beta/r1?width=100&height=30"
    async with aiohttp.ClientSession() as client:
        socket = await client.ws_connect(url, origin=web.url, headers={"Cookie": cookie})
        first = await asyncio.wait_for(socket.receive(), 20)
        assert first.type == aiohttp.WSMsgType.BINARY
        (pid,) = web.huds()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        assert argv[1:4] == ["-I", "-m", "cli.main"]
        assert "--role=reviewer" in argv and "--open" in argv and "beta/r1" in argv
        assert not any(arg.startswith(("--as-user", "--sign-key")) for arg in argv)
        env = dict(
            item.split("=", 1)
            for item in Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
            if "=" in item
        )
        assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin" and env["COLUMNS"] == "100"
        assert env["TEXTUAL_DRIVER"] == "textual.drivers.web_driver:WebDriver"
        assert "HOME" in env and not {"PYTHONPATH", "TZ_X", "SSH_CLIENT"} & set(env)
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        limits = Path(f"/proc/{pid}/limits").read_text()
        assert f"{2048 * 1024 * 1024}" in next(
            line for line in limits.splitlines() if "address space" in line
        )
        await socket.send_str(json.dumps(["stdin", "q"]))
        closed = await asyncio.wait_for(socket.receive(), 20)
        while closed.type == aiohttp.WSMsgType.BINARY:
            closed = await asyncio.wait_for(socket.receive(), 20)
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    deadline = time.monotonic() + 10
    while web.huds() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not web.huds()


async def test_sessions_are_bounded(tmp_path: Path) -> None:
    with served(tmp_path, "--max-sessions", "1") as web:
        cookie = web.cookie("bob")
        headers = {"Cookie": cookie}
        url = web.url.replace("http", "ws", 1) + "/ws"
        async with aiohttp.ClientSession() as client:
            first = await client.ws_connect(url, origin=web.url, headers=headers)
            assert await socket_answer(web, origin=web.url, cookie=cookie) == 503
            await first.close()
        assert "1 sessions already" in web.log()


async def test_a_session_ends_with_its_sign_in(tmp_path: Path) -> None:
    with served(tmp_path, "--session-hours", "0.001") as web:  # 3.6 s
        cookie = web.cookie("bob")
        url = web.url.replace("http", "ws", 1) + "/ws"
        async with aiohttp.ClientSession() as client:
            socket = await client.ws_connect(url, origin=web.url, headers={"Cookie": cookie})
            started = time.monotonic()
            message = await asyncio.wait_for(socket.receive(), 20)
            while message.type == aiohttp.WSMsgType.BINARY:
                message = await asyncio.wait_for(socket.receive(), 20)
            assert time.monotonic() - started < 10
        assert await socket_answer(web, origin=web.url, cookie=cookie) == 401
        page = fetch(urllib.request.Request(f"{web.url}/", headers={"Cookie": cookie}))
        assert 'name="token"' in page.read().decode()


async def test_input_is_read_at_a_bounded_rate(web: Web) -> None:
    """A thousand messages at once: the server reads 400 at once, then 200 a second (the
    pong to the last comes no sooner than 3 s); one over 64 KiB ends the session."""
    cookie = web.cookie("alice")
    url = web.url.replace("http", "ws", 1) + "/ws"
    async with aiohttp.ClientSession() as client:
        socket = await client.ws_connect(url, origin=web.url, headers={"Cookie": cookie})
        started = time.monotonic()
        for number in range(1000):
            await socket.send_str(json.dumps(["ping", number]))
        while True:
            message = await asyncio.wait_for(socket.receive(), 30)
            if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data) == [
                "pong",
                "999",
            ]:
                break
        assert 2.8 <= time.monotonic() - started < 20
        assert len(web.huds()) == 1
        await socket.send_str(json.dumps(["stdin", "x" * (64 * 1024)]))
        message = await asyncio.wait_for(socket.receive(), 30)
        while message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
            message = await asyncio.wait_for(socket.receive(), 30)
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    deadline = time.monotonic() + 10
    while web.huds() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not web.huds()


def test_the_hud_under_hud_web_holds_its_input_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from hud import driver

    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")
    assert driver.held_back() is driver.web_driver()
    assert driver.web_driver().send_message is driver.HeldBackDriver.send_message
    monkeypatch.delenv("TEXTUAL_DRIVER")
    assert driver.held_back() is driver.HeldBackDriver


def run_web(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    tokens = tmp / "tokens"
    if not tokens.exists():
        subprocess.run(
            hud_command("web", "--add-token", "bob", "--role", "approver", "--tokens", str(tokens)),
            capture_output=True,
            check=True,
            env=dict(os.environ, HOME=str(tmp)),
        )
    (tmp / "state").mkdir(exist_ok=True)
    return subprocess.run(
        hud_command(
            "web", str(tmp / "state"), "--tokens", str(tokens), "--sign-key", str(tmp / "k"), *args
        ),
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ, HOME=str(tmp)),
        stdin=subprocess.DEVNULL,
    )


def test_off_loopback_needs_tls(tmp_path: Path) -> None:
    refused = run_web(tmp_path, "--listen", "0.0.0.0:0")
    assert refused.returncode == 2
    assert "0.0.0.0 is not loopback" in refused.stderr and "--tls-cert" in refused.stderr
    half = run_web(tmp_path, "--listen", "127.0.0.1:0", "--tls-cert", str(tmp_path / "c"))
    assert half.returncode == 2 and "go together" in half.stderr


def test_tls_serves_https_with_a_secure_cookie(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ed25519",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        capture_output=True,
        check=True,
    )
    with served(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as web:
        assert web.url.startswith("https://")
        tls = ssl.create_default_context(cafile=str(cert))
        tls.check_hostname = False
        answer = web.sign_in(web.tokens["bob"], tls=tls)
        assert answer.status == 303
        assert "Secure" in answer.headers["Set-Cookie"]
        page = fetch(
            urllib.request.Request(
                f"{web.url}/", headers={"Cookie": answer.headers["Set-Cookie"].split(";")[0]}
            ),
            tls,
        )
        assert "wss://127.0.0.1:" in page.read().decode()


def test_a_trusted_proxy_names_the_person(tmp_path: Path) -> None:
    with served(tmp_path, "--proxy", "127.0.0.1", "--proxy-header", "X-User") as web:
        page = fetch(urllib.request.Request(f"{web.url}/", headers={"X-User": "bob"}))
        assert "bob (approver)" in page.read().decode()
        unlisted = fetch(urllib.request.Request(f"{web.url}/", headers={"X-User": "mallory"}))
        assert 'name="token"' in unlisted.read().decode()


def test_a_proxy_header_from_elsewhere_is_ignored(tmp_path: Path) -> None:
    with served(tmp_path, "--proxy", "192.0.2.1", "--proxy-header", "X-User") as web:
        page = fetch(urllib.request.Request(f"{web.url}/", headers={"X-User": "bob"}))
        assert 'name="token"' in page.read().decode()


async def test_an_idle_session_is_closed_and_stopping_ends_every_hud(tmp_path: Path) -> None:
    web = start(tmp_path, "--idle-timeout", "0.05")  # 3 s
    try:
        cookie = web.cookie("bob")
        url = web.url.replace("http", "ws", 1) + "/ws"
        async with aiohttp.ClientSession() as client:
            idle = await client.ws_connect(url, origin=web.url, headers={"Cookie": cookie})
            started = time.monotonic()
            message = await asyncio.wait_for(idle.receive(), 20)
            while message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                if time.monotonic() - started > 20:
                    break
                await asyncio.sleep(0.05)
                await idle.send_str(json.dumps(["ping", "not a key"]))  # keeps nothing alive
                message = await asyncio.wait_for(idle.receive(), 20)
            assert 2.5 <= time.monotonic() - started < 15
            busy = await client.ws_connect(url, origin=web.url, headers={"Cookie": cookie})
            await asyncio.wait_for(busy.receive(), 20)
            running = web.huds()
            assert len(running) == 1
            assert await asyncio.to_thread(web.stop) == 0
            assert wait_gone(running, 5) is not None
    finally:
        if web.process.poll() is None:
            web.stop()
    assert "stopping: ending every session" in web.process.stdout.read()


async def test_nothing_from_the_servers_folder_or_environment_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    here, elsewhere = tmp_path / "cwd", tmp_path / "pythonpath"
    plant(here, marker, "hud/__init__.py", "cli/main.py", "textual/__init__.py", "sitecustomize.py")
    plant(elsewhere, marker, "textual/__init__.py", "rich/__init__.py")
    startup = tmp_path / "startup.py"
    plant(tmp_path, marker, "startup.py")
    env = {"PYTHONPATH": str(elsewhere), "PYTHONSTARTUP": str(startup), "EDITOR": "vim"}
    web = start(tmp_path, cwd=here, env={**env, "HUD_TRAP": "1"})
    try:
        cookie = web.cookie("bob")
        url = web.url.replace("http", "ws", 1) + "/ws"
        async with aiohttp.ClientSession() as client:
            socket = await client.ws_connect(url, origin=web.url, headers={"Cookie": cookie})
            first = await asyncio.wait_for(socket.receive(), 20)
            assert first.type == aiohttp.WSMsgType.BINARY  # the real HUD draws
            (pid,) = web.huds()
            names = {
                item.split("=", 1)[0]
                for item in Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
            }
            assert not {"PYTHONPATH", "PYTHONSTARTUP", "EDITOR", "HUD_TRAP"} & names
            assert Path(f"/proc/{pid}/cwd").resolve() == Path("/")
            await socket.close()
    finally:
        assert web.stop() == 0
    assert not marker.exists(), marker.read_text()
