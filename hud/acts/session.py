"""What an act works with: the session (workspace, writer, signer, "wrote", notify) and
the HUD's one door to `store.writers.human` (its writer, its errors, `writer_for`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from store.format.confined import read_file
from store.format.load import MAX_DOCUMENT_BYTES
from store.format.problems import Problem
from store.format.records import Decision
from store.index.workspace import Workspace
from store.trust.sshsig import AgentSigner, KeySigner, Signer, load_signer
from store.trust.sshsig import SigError as SigError
from store.writers.human import AlreadyDecided as AlreadyDecided
from store.writers.human import AlreadyExists as AlreadyExists
from store.writers.human import Conflict as Conflict
from store.writers.human import DecisionFields
from store.writers.human import HumanWriteError as HumanWriteError
from store.writers.human import HumanWriter as HumanWriter
from store.writers.human import Invalid as Invalid
from store.writers.human import Saved as Saved
from store.writers.human import writer_for as writer_for

T = TypeVar("T")
Severity = Literal["information", "warning", "error"]


class Notify(Protocol):
    def __call__(
        self,
        message: str,
        *,
        title: str = "",
        severity: Severity = "information",
        timeout: float | None = None,
    ) -> None: ...


class InThread(Protocol):
    """Runs a file read off the event loop and returns what it returned."""

    def __call__(self, read: Callable[[], T]) -> Awaitable[T]: ...


async def inline(read: Callable[[], T]) -> T:
    """`InThread` for a front with no event loop to keep free (the CLI): reads at once."""
    return read()


class Decider:
    """The one write an approver may make: record a decision. It keeps the writer it
    decides through to itself and offers nothing else of it (no edit, no new mission, no
    budget): an approver's HUD holds this and no HumanWriter."""

    __slots__ = ("__writer",)

    def __init__(self, writer: HumanWriter) -> None:
        self.__writer = writer

    def clock(self) -> datetime:
        return self.__writer.clock()

    def workspace_id(self) -> str:
        """`HumanWriter.workspace_id`: a signed decision binds to the state directory."""
        return self.__writer.workspace_id()

    def decision_fields(self, *args: Any, **kwargs: Any) -> DecisionFields:
        """`HumanWriter.decision_fields`."""
        return self.__writer.decision_fields(*args, **kwargs)

    def decide(self, *args: Any, **kwargs: Any) -> Decision:
        """`HumanWriter.decide`."""
        return self.__writer.decide(*args, **kwargs)


@dataclass(frozen=True, slots=True)
class Session:
    """Where an act writes and whom it tells."""

    workspace: Workspace
    writer: HumanWriter | None
    """None in read-only mode: an act then writes nothing."""
    wrote: Callable[[Iterable[str]], None]
    """Files just written (or about to be re-read): the live view folds them at once."""
    notify: Notify
    in_thread: InThread
    reread: Callable[[Iterable[str]], Awaitable[None]]
    """Files to read again: returns once the workspace holds what they say now (the live
    view folded them, or the CLI read them)."""
    key: Callable[[str], str | None] = lambda binding: None
    """The key bound to a binding id, for a message that names it (None: unbound)."""
    signer: Signer | None = None
    """Signs every decision made in this session (`--sign-key`); None: unsigned."""
    decider: Decider | None = None
    """An approver's only write (`writer` is None then)."""

    @property
    def decisions(self) -> Decider | None:
        """What records a decision: the approver's decider, else one over the writer (an
        operator), else None (read-only: nothing is decided)."""
        if self.decider is not None:
            return self.decider
        return Decider(self.writer) if self.writer is not None else None

    async def read_document(self, root: Path, relpath: str) -> bytes | Problem:
        """A document's bytes (`store.format.confined`: no symlink, only a regular file, capped),
        or the Problem that stops it; read off the event loop."""
        return await self.in_thread(lambda: read_file(root, relpath, MAX_DOCUMENT_BYTES))

    def announce(self, saved: Saved) -> None:
        """Tell the live view and the human what a save wrote."""
        self.wrote([p for p in (saved.relpath, saved.history) if p])
        if saved.history:
            kept = saved.history.rsplit("/", 1)[-1]
            message = (
                f"saved {saved.relpath} as revision {saved.revision} ({kept} kept in history/)"
            )
        else:
            message = f"saved {saved.relpath}"
        self.notify(message)


def signer_from(path: Path) -> KeySigner | AgentSigner:
    """The signer `--sign-key PATH` names: a private key file signs itself, a public key
    (`.pub`) signs through ssh-agent (SSH_AUTH_SOCK). Read once, at start-up (before any
    event loop); SigError says why it cannot sign."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SigError(f"{path}: {exc.strerror or exc}") from None
    try:
        return load_signer(data)
    except SigError as exc:
        raise SigError(f"{path}: {exc}") from None
