"""The web server of `hud web`: sign-in, checks, and one HUD per websocket.

Every request must name this server as its Host (a DNS-rebinding page cannot reach it);
pages forbid framing and any script or connection but this server's. A person signs in
with a personal token (`hud.web.tokens`), or is named by a trusted proxy's header; the
session cookie is HttpOnly, SameSite=Strict, Secure under https, and ends after
`session_hours`. The sign-in form and the websocket refuse a foreign (or missing)
Origin. Each websocket runs a HUD as `hud serve` runs one (`hud.serve.child`): `python
-I -m cli.main` in `/` with a fixed environment, in the person's role, under a memory
limit; at most `max_sessions` at once; the browser's input is read at a bounded rate and
waits for the HUD (its pipe, then the HUD's own backlog, `hud.driver`), so a flood is
held back in the browser's connection. A session without a key for `idle_timeout`, or
past its end, is closed and its HUD ended with its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import resource
import ssl
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import WSMsgType, web
from aiohttp.typedefs import Handler
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from hud import opening
from hud.serve.child import child_argv, child_env, clamp, end_group
from hud.web import WEB_DRIVER
from hud.web.sessions import Session, Sessions
from hud.web.tokens import Holder, Tokens

log = logging.getLogger("hud.web")

COOKIE = "hud_session"
MAX_MESSAGE = 64 * 1024
"""Bytes of one websocket message from a browser, at most (a paste larger is refused)."""
RATE, BURST = 200.0, 400
"""Browser messages a second a session may send, and at once: beyond, reading waits."""
MAX_STDERR = 64 * 1024
"""Bytes of a HUD's stderr logged at most."""
GRACE = 2.0
"""Seconds a HUD has to quit when asked before its process group is ended."""


@dataclass(frozen=True)
class Proxy:
    """A reverse proxy trusted to name the person in a header (off unless configured)."""

    address: str
    """The proxy's IP address: the header is believed from there only."""
    header: str


@dataclass(frozen=True)
class Settings:
    root: Path
    tokens: Path
    sign_key: Path
    """The server's key: it signs approvers' and operators' decisions."""
    saves: Path
    """The private folder (0700) where approvers' and operators' sessions save files."""
    url: str
    """Where browsers reach this server (scheme://host[:port]): the one Origin and Host."""
    max_sessions: int = 16
    session_hours: float = 12.0
    idle_timeout: float = 30 * 60.0
    """Seconds without a key before a session's HUD is closed."""
    memory: int = 2 * 1024**3
    """Bytes of address space a HUD may map (RLIMIT_AS)."""
    proxy: Proxy | None = None

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def secure(self) -> bool:
        return self.url.startswith("https://")


def _limit_memory(limit: int) -> None:  # pragma: no cover (in the child, before exec)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class HudService(AppService):
    """One HUD for one websocket: textual-serve's protocol with the child `hud serve`
    would start (argv, environment, `/`, a session of its own), under a memory limit."""

    def __init__(self, argv: list[str], env: dict[str, str], memory: int, **kwargs: object) -> None:
        super().__init__(" ".join(argv), **kwargs)  # type: ignore[arg-type]
        self._argv = argv
        self._env = env
        self._memory = memory
        self._stderr: asyncio.Task[None] | None = None

    async def _open_app_process(
        self, width: int = 80, height: int = 24
    ) -> asyncio.subprocess.Process:
        env = {**self._env, "COLUMNS": str(width), "ROWS": str(height)}
        self._process = process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd="/",  # nothing of the server's current folder, even by accident
            start_new_session=True,
            preexec_fn=partial(_limit_memory, self._memory),
        )
        self._stdin = process.stdin
        assert process.stderr is not None
        self._stderr = asyncio.create_task(_log_stderr(process.stderr))
        process.stderr = _ended()  # textual-serve would copy it raw to stdout
        return process

    async def stop(self) -> None:
        """Ask the HUD to quit; past GRACE, end its process group; reap it."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(super().stop(), GRACE)
        if self._process is not None:
            await end_group(self._process)
        if self._stderr is not None:
            await self._stderr


async def _log_stderr(stream: asyncio.StreamReader) -> None:
    """What a HUD says on stderr (a traceback), logged line by line (`hud web`'s log
    makes control characters visible), the first MAX_STDERR bytes; the rest is read and
    dropped."""
    logged = 0
    while chunk := await stream.read(4096):
        for line in chunk[: max(0, MAX_STDERR - logged)].decode("utf-8", "replace").splitlines():
            log.warning("HUD: %s", line)
        logged += len(chunk)


def _ended() -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_eof()
    return reader


def web_env() -> dict[str, str]:
    """The HUD's fixed environment (`hud.serve.child.child_env`), drawing for textual-serve."""
    env = child_env("xterm-256color", {})
    env.update(TEXTUAL_DRIVER=WEB_DRIVER, TEXTUAL_COLOR_SYSTEM="truecolor", TERM_PROGRAM="textual")
    return env


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server TLS context (TLS 1.2 at least) from a certificate chain and its key."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


class Server:
    """The web application and the HUDs its websockets run."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sessions = Sessions(settings.session_hours * 3600)
        self.sockets: set[web.WebSocketResponse] = set()
        """Websockets running a HUD: at most `max_sessions`."""
        self._downloads = DownloadManager()  # textual-serve wants one; the HUD sends no file
        self._statics = Path(str(resources.files("textual_serve"))) / "static"
        self._loop = asyncio.get_running_loop()

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=16 * 1024)
        templates = jinja2.FileSystemLoader(str(resources.files("hud.web") / "templates"))
        aiohttp_jinja2.setup(app, loader=templates, autoescape=True)
        app.add_routes(
            [
                web.get("/", self.index),
                web.post("/sign-in", self.sign_in),
                web.post("/sign-out", self.sign_out),
                web.get("/ws", self.websocket),
                web.get("/ws/{mission}/{request}", self.websocket),
                web.static("/static", self._statics),
            ]
        )
        return app

    async def stop(self) -> None:
        """Close every websocket and wait until its HUD has ended."""
        for socket in list(self.sockets):
            await socket.close(code=1001, message=b"the server is stopping")
        while self.sockets:
            await asyncio.sleep(0.05)

    # ---- every request -----------------------------------------------------------------

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Refuse a Host other than this server's; forbid framing, foreign scripts and
        connections, caching and referrers on every answer."""
        if request.host != urlsplit(self.settings.url).netloc:
            log.warning("refused %s: Host %r is not this server", request.remote, request.host[:80])
            raise web.HTTPMisdirectedRequest(text=f"this server is {self.settings.url}\n")
        response: web.StreamResponse = await handler(request)
        socket = self.settings.origin.replace("http", "ws", 1)
        response.headers["Content-Security-Policy"] = (
            f"default-src 'self'; connect-src 'self' {socket}; style-src 'self' 'unsafe-inline'; "
            "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
        )
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # "no-referrer" sends Origin: null
        if not request.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    def _same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin == self.settings.origin:
            return True
        log.warning(
            "refused %s: Origin %r on %s", request.remote, (origin or "")[:80], request.path
        )
        return False

    def _holder(self, request: web.Request) -> tuple[Holder, Session | None] | None:
        """Who makes `request`: the person the trusted proxy names (listed in the tokens
        file), else the session's; None."""
        proxy = self.settings.proxy
        name = request.headers.get(proxy.header) if proxy is not None else None
        if proxy is not None and name and request.remote == proxy.address:
            holder = Tokens.read(self.settings.tokens).named(name)
            if holder is not None:
                return holder, None
        session = self.sessions.get(request.cookies.get(COOKIE), self._loop.time())
        return None if session is None else (session.holder, session)

    # ---- pages -------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.StreamResponse:
        """The HUD when signed in (at the request `?open=` names), else the sign-in form."""
        target = _target(request.query.get("open"))
        who = self._holder(request)
        if who is None:
            return _page(request, "sign_in.html", open=_joined(target), problem=None)
        socket = self.settings.origin.replace("http", "ws", 1) + "/ws"
        if target is not None:
            socket += f"/{target[0]}/{target[1]}"
        return _page(
            request,
            "app.html",
            socket=socket,
            holder=who[0],
            signed_in=who[1] is not None,
            font_size=16,
        )

    async def sign_in(self, request: web.Request) -> web.StreamResponse:
        """The form's token checked against the tokens file read now: a session cookie and
        back to `/` (with the same `open`), or the form again saying why."""
        if not self._same_origin(request):
            raise web.HTTPForbidden(text="refused: this form was sent from another site\n")
        form = await request.post()
        target = _target(str(form.get("open", "")) or None)
        tokens = Tokens.read(self.settings.tokens)
        for problem in tokens.problems:
            log.warning("tokens: %s", problem)
        holder = tokens.holder(str(form.get("token", "")))
        if holder is None:
            log.warning("refused %s: a wrong token", request.remote)
            problem = (
                "That token is not valid here."
                if tokens.refused is None
                else ("Nobody can sign in now: the server's tokens file is refused (see its log).")
            )
            return _page(request, "sign_in.html", open=_joined(target), problem=problem, status=403)
        session = self.sessions.start(holder, self._loop.time())
        log.info("signed in: %s %s from %s", holder.role, holder.name, request.remote)
        answer = web.HTTPSeeOther("/" if target is None else f"/?open={_joined(target)}")
        answer.set_cookie(
            COOKIE,
            session.id,
            max_age=int(self.sessions.lifetime),
            path="/",
            httponly=True,
            secure=self.settings.secure,
            samesite="Strict",
        )
        return answer

    async def sign_out(self, request: web.Request) -> web.StreamResponse:
        if not self._same_origin(request):
            raise web.HTTPForbidden(text="refused: this form was sent from another site\n")
        self.sessions.end(request.cookies.get(COOKIE, ""))
        answer = web.HTTPSeeOther("/")
        answer.del_cookie(COOKIE, path="/")
        return answer

    # ---- the HUD -----------------------------------------------------------------------

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        """A HUD for a signed-in person from this server's own page, while there is room."""
        if not self._same_origin(request):
            raise web.HTTPForbidden(text="refused: a websocket from another site\n")
        who = self._holder(request)
        if who is None:
            log.warning("refused %s: a websocket without a session", request.remote)
            raise web.HTTPUnauthorized(text="sign in first\n")
        holder, session = who
        if len(self.sockets) >= self.settings.max_sessions:
            log.warning("refused %s: %d sessions already", request.remote, len(self.sockets))
            raise web.HTTPServiceUnavailable(text="too many sessions, try later\n")
        parts = request.match_info
        target = _target(f"{parts['mission']}/{parts['request']}" if parts else None)
        socket = web.WebSocketResponse(heartbeat=30, max_msg_size=MAX_MESSAGE)
        self.sockets.add(socket)  # before the handshake's await: counted at once
        try:
            await socket.prepare(request)
            await self._run(request, socket, holder, session, target)
        finally:
            self.sockets.discard(socket)
        return socket

    async def _run(
        self,
        request: web.Request,
        socket: web.WebSocketResponse,
        holder: Holder,
        session: Session | None,
        target: opening.Target | None,
    ) -> None:
        settings = self.settings
        width, height = clamp(
            _number(request.query.get("width")), _number(request.query.get("height"))
        )
        how = "token" if session is not None else "proxy"
        more = ["--open", _joined(target)] if target is not None else []
        service = HudService(
            child_argv(
                settings.root,
                holder,
                f"hud web {how} from {request.remote}",
                settings.sign_key,
                settings.saves,
                *more,
            ),
            web_env(),
            settings.memory,
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=socket.close,
            download_manager=self._downloads,
        )
        log.info("session: %s %s from %s", holder.role, holder.name, request.remote)
        try:
            await service.start(width, height)
            await self._relay(socket, service, session)
        except OSError as error:
            log.error("could not start the HUD: %s", error)
        finally:
            await service.stop()
            log.info("ended: %s %s", holder.role, holder.name)

    async def _relay(
        self, socket: web.WebSocketResponse, service: HudService, session: Session | None
    ) -> None:
        """The browser's messages to the HUD, at most RATE a second (BURST at once), until
        the socket closes, no key comes for `idle_timeout` (resizes, focus and pings do
        not count), or the session ends."""
        loop = self._loop
        allowance, then = float(BURST), loop.time()
        last_key = loop.time()
        while not socket.closed:
            now = loop.time()
            ends = last_key + self.settings.idle_timeout
            if session is not None:
                ends = min(ends, session.ends)
            if ends <= now:
                break
            try:
                message = await socket.receive(timeout=ends - now)
            except TimeoutError:
                break
            if message.type in (
                WSMsgType.CLOSE,
                WSMsgType.CLOSING,
                WSMsgType.CLOSED,
                WSMsgType.ERROR,
            ):
                break
            if message.type != WSMsgType.TEXT:
                continue
            allowance = min(BURST, allowance + (loop.time() - then) * RATE)
            then = loop.time()
            if allowance < 1:
                await asyncio.sleep((1 - allowance) / RATE)
                allowance, then = 1.0, loop.time()
            allowance -= 1
            kind = await _forward(socket, service, message.data)
            if kind is None:
                log.warning("closing a session: a malformed message")
                break
            if kind == "stdin":
                last_key = loop.time()
        await socket.close()


async def _forward(socket: web.WebSocketResponse, service: HudService, data: str) -> str | None:
    """One browser message (textual-serve's envelope) to the HUD: its kind, None if it
    is malformed."""
    try:
        kind, *rest = json.loads(data)
        body: Any = rest[0] if rest else None
        if kind == "stdin" and isinstance(body, str):
            await service.send_bytes(body.encode("utf-8", "replace"))
        elif kind == "resize":
            await service.set_terminal_size(*clamp(int(body["width"]), int(body["height"])))
        elif kind == "ping":
            await socket.send_json(["pong", str(body)[:64]])
        elif kind == "blur":
            await service.blur()
        elif kind == "focus":
            await service.focus()
    except (ValueError, TypeError, KeyError, IndexError):
        return None
    return str(kind)


def _target(text: str | None) -> opening.Target | None:
    """`?open=MISSION/REQUEST` as ids (HTTP 400 when it is not); None when absent."""
    if not text:
        return None
    try:
        return opening.parse(text)
    except ValueError:
        raise web.HTTPBadRequest(text="open= must be MISSION/REQUEST (two ids)\n") from None


def _joined(target: opening.Target | None) -> str:
    """A target as MISSION/REQUEST; "" for none."""
    return "" if target is None else "/".join(target)


def _number(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def _page(
    request: web.Request, template: str, *, status: int = 200, **context: object
) -> web.Response:
    return aiohttp_jinja2.render_template(template, request, context, status=status)
