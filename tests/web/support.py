"""A real `hud web` on loopback for the tests: tokens for a reviewer and an approver, a
state directory with one pending request, and an HTTP client that signs in."""

from __future__ import annotations

import os
import re
import signal
import ssl
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.client import HTTPResponse
from pathlib import Path

from tests.e2e.pty_screen import descendants, hud_command, wait_gone
from tests.e2e.serve_support import state

PEOPLE = {"alice": "reviewer", "bob": "approver"}


@dataclass
class Web:
    """A `hud web` process, what it serves and each person's token."""

    process: subprocess.Popen[str]
    url: str
    root: Path
    tmp: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def log(self) -> str:
        return (self.tmp / "web.log").read_text()

    def children(self) -> set[int]:
        return descendants(self.process.pid)

    def huds(self) -> list[int]:
        """The HUD processes the server runs now."""
        found = []
        for pid in self.children():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"cli.main" in argv:
                found.append(pid)
        return found

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(5)

    def sign_in(
        self,
        token: str,
        target: str = "",
        origin: str | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> HTTPResponse:
        """POST the sign-in form (from this server's page unless `origin` says otherwise);
        the answer, redirects not followed."""
        body = urllib.parse.urlencode({"token": token, "open": target}).encode()
        request = urllib.request.Request(f"{self.url}/sign-in", data=body, method="POST")
        request.add_header("Origin", origin or self.url)
        return fetch(request, tls)

    def cookie(self, who: str) -> str:
        """A session cookie for `who` (`hud_session=...`)."""
        answer = self.sign_in(self.tokens[who])
        assert answer.status == 303, answer.status
        return answer.headers["Set-Cookie"].split(";")[0]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def fetch(request: urllib.request.Request | str, tls: ssl.SSLContext | None = None) -> HTTPResponse:
    """The answer to `request`, whatever its status (never raised, never redirected)."""
    opener = urllib.request.build_opener(_NoRedirect, urllib.request.HTTPSHandler(context=tls))
    try:
        answer: HTTPResponse = opener.open(request, timeout=20)
    except urllib.error.HTTPError as error:
        return error  # type: ignore[return-value]
    return answer


def start(
    tmp: Path, *options: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Web:
    """`hud web` on 127.0.0.1, a free port, a fresh signing key (in `cwd`, with `env` added
    to its environment); wait until it listens."""
    root = state(tmp / "state")
    tokens_file = tmp / "tokens"
    environ = dict(os.environ, HOME=str(tmp), LANG="C.UTF-8", TZ="UTC", **(env or {}))
    tokens = {}
    for who, role in PEOPLE.items():
        made = subprocess.run(
            hud_command("web", "--add-token", who, "--role", role, "--tokens", str(tokens_file)),
            capture_output=True,
            text=True,
            env=dict(os.environ, HOME=str(tmp)),
            check=True,
        )
        tokens[who] = made.stdout.strip()
    process = subprocess.Popen(
        hud_command(
            "web",
            str(root),
            *("--listen", "127.0.0.1:0", "--tokens", str(tokens_file)),
            *("--sign-key", str(tmp / "sign_key"), *options),
        ),
        stdout=subprocess.PIPE,
        stderr=(tmp / "web.log").open("w"),
        text=True,
        env=environ,
        cwd=cwd,
    )
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"listening on (https?://127\.0\.0\.1:\d+)", line)
        if found:
            return Web(process, found.group(1), root, tmp, tokens)
    process.wait(5)
    raise AssertionError(f"hud web did not start: {(tmp / 'web.log').read_text()}")


@contextmanager
def served(tmp: Path, *options: str) -> Iterator[Web]:
    """`start`, then stop it: it must exit 0 and leave no process behind."""
    web = start(tmp, *options)
    try:
        yield web
    finally:
        running = web.children()
        assert web.stop() == 0
        assert wait_gone(running, 10) is not None, "a HUD outlived the server"
