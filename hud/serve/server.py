"""The SSH server of `hud serve`: keys only, one HUD per connection, nothing else.

Each connection may open one session, and only an interactive one (a shell request
with a pty) runs a HUD; exec requests get a one-line refusal, subsystems (sftp),
forwarding of ports, agent and X11, passwords and keyboard-interactive logins are all
refused. At most `max_sessions` logged-in connections at once (the next is told "too
many sessions"); connections not logged in yet have a pool, a rate and a grace of their
own (`hud.serve.gate`), so keyless clients cannot lock keyed users out. A connection
without input for `idle_timeout` seconds is closed; ending a connection ends its HUD.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from hud.serve.child import INPUT_WINDOW, AcceptedEnv, Child, child_argv, child_env
from hud.serve.gate import Gate
from hud.serve.keys import AuthorizedKeys, Grant
from hud.serve.tally import WINDOW, Tally

log = logging.getLogger("hud.serve")

NOT_INTERACTIVE = (
    "hud serve: only the HUD runs here, in a terminal: connect with plain ssh (or ssh -t), "
    "with no command\r\n"
)
NOT_INTERACTIVE_EXIT = 2


@dataclass(frozen=True)
class Settings:
    root: Path
    host_key: Path
    authorized_keys: Path
    saves: Path
    """The private folder (0700) where approvers' and operators' sessions save files."""
    max_sessions: int = 16
    idle_timeout: float = 30 * 60.0
    """Seconds without a key press before a connection is closed."""
    login_timeout: float = 10.0
    """Seconds a connection has to log in (its place in the gate's pool is freed then)."""


class Server:
    """The listening server, its connections and the HUDs they run."""

    def __init__(self, settings: Settings, host_key: asyncssh.SSHKey) -> None:
        self.settings = settings
        self._host_key = host_key
        self.connections: set[Connection] = set()
        """Connections logged in: at most `max_sessions`."""
        self.gate: Gate[Connection] = Gate()
        """Connections not logged in yet."""
        self.tally = Tally(log)
        self._summaries: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        """Sessions running a HUD and HUDs being stopped: `stop` waits for them."""
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self.key_problems: list[str] = []
        """The authorized-keys problems last logged: a connection logs them when they change."""

    async def start(self, host: str, port: int) -> int:
        """Listen on host:port; the port listened on (for port 0)."""
        self._acceptor = await asyncssh.create_server(
            lambda: Connection(self),
            host,
            port,
            server_host_keys=[self._host_key],
            encoding=None,
            line_editor=False,
            public_key_auth=True,
            password_auth=False,
            kbdint_auth=False,
            host_based_auth=False,
            gss_host=None,
            agent_forwarding=False,
            x11_forwarding=False,
            allow_scp=False,
            login_timeout=self.settings.login_timeout,
            keepalive_interval=60,
            keepalive_count_max=3,
        )
        self._summarize()
        return int(self._acceptor.get_port())

    def _summarize(self) -> None:
        self.tally.summary()
        self._summaries = asyncio.get_running_loop().call_later(WINDOW, self._summarize)

    async def stop(self) -> None:
        """Stop listening, close every connection and wait for every HUD to end."""
        if self._summaries is not None:
            self._summaries.cancel()
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
        for waiting in self.gate.everyone():
            if waiting.conn is not None:
                waiting.conn.abort()
        for connection in list(self.connections):
            connection.close("the server is stopping")
            if connection.session is not None:
                connection.session.end()
        while self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def run(self, work: Coroutine[object, object, None]) -> None:
        """Run `work` as a task the server waits for when it stops."""
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


class Connection(asyncssh.SSHServer):
    """One client: who it is (the grant of its key) and its one session."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.conn: asyncssh.SSHServerConnection | None = None
        self.address = "?"
        self.keys = AuthorizedKeys("")
        self.grant: Grant | None = None
        self.session: Session | None = None
        self._loop = asyncio.get_running_loop()
        self._last_input = self._loop.time()
        self._idle: asyncio.TimerHandle | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        peer = conn.get_extra_info("peername") or ("?", 0)
        self.address = str(peer[0])
        verdict, displaced = self.server.gate.admit(self.address, self, self._loop.time())
        if verdict == "rate":  # closed before a byte is sent: no key exchange to pay for
            self.server.tally.refused("too many connections from one address", self.address)
            conn.abort()
            return
        if displaced is not None and displaced.conn is not None:
            self.server.tally.refused("not logged in, displaced by a newer one", displaced.address)
            displaced.conn.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.gate.leave(self.address, self, logged_in=False)
        self.server.connections.discard(self)
        if self._idle is not None:
            self._idle.cancel()
        if self.session is not None:
            self.session.end()

    def close(self, why: str) -> None:
        if self.conn is not None:
            log.info("closing %s: %s", self.address, why)
            self.conn.disconnect(asyncssh.DISC_BY_APPLICATION, why)

    def touched(self) -> None:
        """The client pressed a key: it is not idle."""
        self._last_input = self._loop.time()

    def _check_idle(self) -> None:
        left = self._last_input + self.server.settings.idle_timeout - self._loop.time()
        if left > 0:
            self._idle = self._loop.call_later(left, self._check_idle)
        else:
            self.close(f"no input for {self.server.settings.idle_timeout:g} s")

    def begin_auth(self, username: str) -> bool:
        self.keys = AuthorizedKeys.read(self.server.settings.authorized_keys)
        if self.keys.problems != self.server.key_problems:
            self.server.key_problems = self.keys.problems
            for problem in self.keys.problems:
                log.warning("authorized keys: %s", problem)
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        grant = self.keys.grant(key, self.address)
        if isinstance(grant, str):
            self.server.tally.refused("key", self.address, grant)
            return False
        self.grant = grant
        return True

    def auth_completed(self) -> None:
        self.server.gate.leave(self.address, self, logged_in=True)
        if self.grant is None or self.conn is None:
            return
        settings = self.server.settings
        if len(self.server.connections) >= settings.max_sessions:
            self.server.tally.refused(f"{settings.max_sessions} sessions already", self.address)
            self.conn.disconnect(asyncssh.DISC_TOO_MANY_CONNECTIONS, "too many sessions, try later")
            return
        self.server.connections.add(self)
        self._idle = self._loop.call_later(settings.idle_timeout, self._check_idle)
        log.info(
            "%s %s (%s) from %s",
            self.grant.role,
            self.grant.name,
            self.grant.fingerprint,
            self.address,
        )

    def session_requested(self) -> tuple[asyncssh.SSHServerChannel[bytes], Session] | bool:
        logged_in = self in self.server.connections
        if self.conn is None or self.grant is None or self.session is not None or not logged_in:
            return False
        self.session = Session(self, self.grant)
        chan = self.conn.create_server_channel(encoding=None, window=INPUT_WINDOW)
        # asyncssh keeps every `env` request of a channel in its `_env` dict, unbounded
        # (2.24 has no hook to refuse one): a dict that keeps only what a HUD may get
        chan._env = AcceptedEnv()
        return chan, self.session


class Session(asyncssh.SSHServerSession[bytes]):
    """The session of a connection: a HUD on a pty when the client asked for a shell on a
    terminal; a refusal otherwise."""

    def __init__(self, connection: Connection, grant: Grant) -> None:
        self.connection = connection
        self.grant = grant
        self.chan: asyncssh.SSHServerChannel[bytes] | None = None
        self.child: Child | None = None
        self.interactive = False
        self._input_paused = False
        self._ended = False

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self.chan = chan

    def shell_requested(self) -> bool:
        self.interactive = True
        return True

    def exec_requested(self, command: str) -> bool:
        log.warning("refused %s: a command (not logged)", self.connection.address)
        return True  # answered with NOT_INTERACTIVE, never run

    def subsystem_requested(self, subsystem: str) -> bool:
        log.warning("refused %s: subsystem %r", self.connection.address, subsystem[:40])
        return False

    def session_started(self) -> None:
        chan = self.chan
        assert chan is not None
        if not self.interactive or chan.get_terminal_type() is None:
            chan.write_stderr(NOT_INTERACTIVE.encode())
            chan.exit(NOT_INTERACTIVE_EXIT)
            return
        self.connection.server.run(self._run(chan))

    async def _run(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        settings = self.connection.server.settings
        origin = f"hud serve key {self.grant.fingerprint} from {self.connection.address}"
        width, height, _, _ = chan.get_terminal_size()
        try:
            child = await Child.start(
                child_argv(settings.root, self.grant, origin, settings.host_key, settings.saves),
                child_env(chan.get_terminal_type(), chan.get_environment()),
                (width, height),
                self._send,
                self._pause_input,
            )
        except OSError as error:
            log.error("could not start the HUD: %s", error)
            chan.exit(1)
            return
        if self._ended:  # the client left while it started
            self.connection.server.run(child.stop())
            return
        self.child = child
        width, height, _, _ = chan.get_terminal_size()  # resized while it started
        child.resize(width, height)
        status = await child.wait()
        log.info("%s %s: the HUD exited (%d)", self.grant.role, self.grant.name, status)
        self.end()
        chan.exit(status)

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        if self.child is not None:
            self.child.resize(width, height)

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        self.connection.touched()
        if self.child is not None:
            self.child.write(data)

    def pause_writing(self) -> None:
        if self.child is not None:
            self.child.pause_output()

    def resume_writing(self) -> None:
        if self.child is not None:
            self.child.resume_output()

    def connection_lost(self, exc: Exception | None) -> None:
        self.end()

    def end(self) -> None:
        """End the HUD (once), whoever asks first: the channel, the connection, the HUD."""
        if self._ended:
            return
        self._ended = True
        if self.child is not None:
            self.connection.server.run(self.child.stop())

    def _send(self, data: bytes) -> None:
        """The HUD's output to the client, while the channel is open."""
        if self.chan is not None and not self.chan.is_closing():
            self.chan.write(data)

    def _pause_input(self, paused: bool) -> None:
        if self.chan is None or paused == self._input_paused:
            return
        self._input_paused = paused
        if paused:
            self.chan.pause_reading()
        else:
            self.chan.resume_reading()
