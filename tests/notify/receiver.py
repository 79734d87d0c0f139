"""A local receiver for notification tests: an HTTP server on loopback that keeps what
Apprise's `json://` posts (and can fail on purpose)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """`json://127.0.0.1:<port>/` posts, kept in order; `fail` answers 500 while set."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.arrivals: list[float] = []
        self.fail = 0
        """How many posts to answer with 500 before accepting again."""
        self.attempts = 0
        self.answering = threading.Event()
        """Cleared: a post is kept, then its answer waits until this is set again."""
        self.answering.set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.attempts += 1
                    failing = receiver.fail > 0
                    if failing:
                        receiver.fail -= 1
                    else:
                        receiver.received.append(json.loads(body))
                        receiver.arrivals.append(time.monotonic())
                receiver.answering.wait(10)
                self.send_response(500 if failing else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, userinfo: str = "") -> str:
        return f"json://{userinfo}127.0.0.1:{self.port}/"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def titles(self) -> list[str]:
        with self._lock:
            return [str(m.get("title", "")) for m in self.received]

    def wait_for(self, check: Callable[[], bool], timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if check():
                return True
            time.sleep(0.02)
        return check()
