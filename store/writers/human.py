"""The HUD's only writer: human-owned records, written atomically.

Every method takes a path relative to the state directory and refuses any path
that `store.format.layout.is_human` does not mark human (`OwnershipError`; so an unsafe
mission or request id is never written). The state directory may be written by a
hostile agent, so every write is confined by construction: the target's folder is
opened one name at a time through directory descriptors (`store.format.confined.folder`,
which makes missing folders the same way), and everything after happens by name
inside that descriptor (`store.format.durable`). A symlink, FIFO, device or file where a
folder belongs is refused (`OwnershipError` naming it), never followed or opened; so
is a file the writer must read first (a conflict check, a history slot) that is not a
regular file, and one over the 64 MiB document cap (`HumanWriteError`). Each write
first removes its folder's temp files left by killed writers (older than a minute,
their process gone). Three ways to write:

* **Write-once create** (decisions, a new mission's intent and constraints, history):
  the bytes go to a temp file in the target folder (`.<name>.tmp-<pid>-<hex>`, which
  `layout.is_transient` ignores), are fsynced, and are hard-linked to the final name;
  the link fails if the name exists, so of two racing writers exactly one wins. The
  loser of a decision race gets `AlreadyDecided`: "already decided by X at T".
* **Optimistic replace** of an edited intent.toml or constraints.toml: the caller
  passes the sha256 of the bytes it loaded; other bytes on disk raise `Conflict`
  with both texts. Identical text is not written at all. Otherwise the previous
  bytes are kept write-once as `history/<kind>.r<N>.toml` (N = their `revision`,
  default 1; if that name holds other bytes, the next free N), then the new text
  replaces the file: temp file, fsync, rename over, fsync the folder. Replaces of
  one mission are serialised by an advisory lock (flock) on its folder.
* **Who and when** of an edit: the text is saved as the human wrote it, comments and
  layout kept, except three top-level lines that the writer owns:
  `revision = N` (one more than the kept history revision), `edited_by = "<user>"`
  and `edited_at = <time>`; whatever the human put there is overwritten. Each
  such line is rewritten whole where it stands; a missing one is inserted after the
  last top-level key, before the first table header and the comments that lead
  into it. Every edit is verified by re-parsing: the result must equal the human's
  data plus the three values and validate as `Intent` or `Constraints`, or the save
  fails with `Invalid` (so does a text that does not parse: with line and column).

Records the HUD creates itself (a new mission with `created_by`/`created_at`, a
decision) are serialised with tomli-w. Times are UTC to the second, written as TOML
offset date-times in tomli-w's spelling `2025-03-01 12:00:00+00:00` (RFC 3339
allows the space for the `T`).
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import os
import re
import tomllib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

import tomli_w
from pydantic import BaseModel, ValidationError

from store.format import confined, durable
from store.format.layout import (
    POLICY_FILE,
    WORKSPACE_FILE,
    Kind,
    Located,
    classify,
    decision_path,
    doc_path,
    history_path,
    is_human,
    mission_dir,
    unsafe_id,
)
from store.format.load import MAX_DOCUMENT_BYTES, parse_document, parse_toml
from store.format.problems import Problem
from store.format.records import (
    Constraints,
    Decision,
    Intent,
    Settings,
    WorkspaceIdentity,
    request_digest,
    request_snapshot,
    validate,
)
from store.sources.small.layout import FILES as SMALL_FILES
from store.sources.small.layout import HUMAN_KINDS as SMALL_HUMAN_KINDS
from store.sources.small.layout import SMALL_DIR
from store.trust.policy import below_floor, floor_of
from store.trust.signers import MAX_SIGNERS_BYTES

_MODELS: dict[Kind, type[BaseModel]] = {
    Kind.SETTINGS: Settings,
    Kind.INTENT: Intent,
    Kind.CONSTRAINTS: Constraints,
    Kind.DECISION: Decision,
    Kind.WORKSPACE: WorkspaceIdentity,
}
_EDITABLE = (Kind.INTENT, Kind.CONSTRAINTS)
_COLUMN = re.compile(r"column (\d+)\)")
_HEADER = re.compile(r"\s*\[")
_LEAD_IN = re.compile(r"\s*(#.*)?\r?\n?$")
_NOT_PLAIN = frozenset({"symlink", "symlink-escape", "not-a-file", "not-a-folder", "unsafe-path"})
"""`store.format.confined` Problem codes of a path that is not plain folders and a plain file."""


class HumanWriteError(Exception):
    """Base of every refusal; `relpath` names the file."""

    def __init__(self, relpath: str, message: str) -> None:
        super().__init__(message)
        self.relpath = relpath


class OwnershipError(HumanWriteError):
    """The path is not human-owned, or not plain folders and a plain file of the state
    directory (a symlink, a FIFO, a device anywhere on the way)."""


class AlreadyExists(HumanWriteError):
    """A write-once file exists already; `text` is what is on disk."""

    def __init__(self, relpath: str, message: str, text: str) -> None:
        super().__init__(relpath, message)
        self.text = text


class AlreadyDecided(AlreadyExists):
    """Someone decided first; `decision` is theirs (None if it is unreadable)."""

    def __init__(self, relpath: str, message: str, text: str, decision: Decision | None) -> None:
        super().__init__(relpath, message, text)
        self.decision = decision


class Conflict(HumanWriteError):
    """The file changed on disk since it was loaded: `theirs` (on disk) vs `yours`.

    `theirs_sha256` is None when the file was deleted; else pass it to a retried
    `replace` to save on top of theirs.
    """

    def __init__(self, relpath: str, theirs: str, theirs_sha256: str | None, yours: str) -> None:
        what = "was deleted" if theirs_sha256 is None else "changed on disk"
        super().__init__(relpath, f"{relpath} {what} since it was loaded; not saved")
        self.theirs = theirs
        self.theirs_sha256 = theirs_sha256
        self.yours = yours


class Invalid(HumanWriteError):
    """The text does not parse or validate; `line` and `column` are 1-based, if known."""

    def __init__(self, relpath: str, message: str, line: int | None, column: int | None) -> None:
        where = ":".join(str(n) for n in (line, column) if n is not None)
        super().__init__(relpath, f"{relpath}:{where}: {message}" if where else message)
        self.line = line
        self.column = column
        self.reason = message


@dataclass(frozen=True, slots=True)
class Saved:
    """What a write left on disk. `changed` is False when nothing was written."""

    relpath: str
    changed: bool
    text: str
    sha256: str
    revision: int | None = None
    history: str | None = None


HUMAN_MODE = 0o666
"""New human files: read-write for all, as the umask allows (as an editor would)."""


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def default_identity() -> tuple[str, str]:
    """The local user name, and the origin: the SSH client address or the local tty."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    ssh = os.environ.get("SSH_CLIENT") or os.environ.get("SSH_CONNECTION")
    if ssh:
        return user, f"ssh {ssh.split()[0]}"
    return user, f"local {os.ttyname(0)}" if os.isatty(0) else "local"


def writer_for(
    root: Path, read_only: bool, user: str | None = None, origin: str | None = None
) -> HumanWriter | None:
    """A writer, or None in read-only mode or when the user cannot write `root`."""
    missions = root / "missions"
    writable = os.access(root, os.W_OK) and (not missions.exists() or os.access(missions, os.W_OK))
    if read_only or not writable:
        return None
    default_user, default_origin = default_identity()
    return HumanWriter(root, user or default_user, origin or default_origin)


class DecisionFields(TypedDict):
    """The fields of a decision a signature covers (with the mission:
    `store.trust.signatures.payload(mission, **fields)`), in the order decision files write them."""

    request: str
    digest: str
    decision: Literal["approve", "reject"]
    reason: str
    decided_by: str
    decided_at: datetime
    valid_until: datetime | None
    origin: str


class HumanWriter:
    """Writes human-owned records under `root` as `user` from `origin`."""

    def __init__(
        self, root: Path, user: str, origin: str, clock: Callable[[], datetime] = _now
    ) -> None:
        self.root = root
        self.user = user
        self.origin = origin
        self.clock = clock
        self._real_root = root.resolve()

    # ---- public ----------------------------------------------------------------------

    def create_document(self, relpath: str, data: dict[str, Any]) -> Saved:
        """Serialise `data` (with `schema = 1`, None values dropped) and create it write-once."""
        located = self._located(relpath)
        text = tomli_w.dumps(_drop_none({"schema": 1, **data}))
        self._validate(relpath, text, _model_of(located))
        data_bytes = text.encode()
        with self._folder(relpath, create=True) as fd:
            try:
                durable.create_once(fd, _name(relpath), data_bytes, HUMAN_MODE)
            except FileExistsError:
                raise self._exists(located) from None
        return Saved(relpath, True, text, _sha256(data_bytes))

    def create_mission(
        self, mission: str, intent: dict[str, Any], constraints: dict[str, Any] | None = None
    ) -> list[Saved]:
        """A new mission: intent.toml (with created_by/at) claims the id, then constraints.toml."""
        _refuse_unsafe(mission_dir(mission), mission)
        stamp = {"created_by": self.user, "created_at": self.clock()}
        saved = [self.create_document(doc_path(mission, Kind.INTENT), {**stamp, **intent})]
        if constraints is not None:
            saved.append(self.create_document(doc_path(mission, Kind.CONSTRAINTS), constraints))
        return saved

    def workspace_id(self) -> str:
        """The state directory's id (workspace.toml), created now if there is none yet:
        write-once, never rewritten (of two first writers, one wins and both read it)."""
        for _ in range(2):
            found = confined.read_file(self.root, WORKSPACE_FILE, MAX_DOCUMENT_BYTES)
            if isinstance(found, Problem) and found.code == "missing":
                identity = {"id": str(uuid.uuid4()), "created_by": self.user}
                with contextlib.suppress(AlreadyExists):
                    self.create_document(WORKSPACE_FILE, {**identity, "created_at": self.clock()})
                continue
            if isinstance(found, Problem):
                raise _refusal(WORKSPACE_FILE, found)
            loaded = parse_document(WORKSPACE_FILE, found, WorkspaceIdentity)
            if loaded.record is None:
                why = loaded.problems[0].message if loaded.problems else "it does not load"
                raise HumanWriteError(WORKSPACE_FILE, f"{WORKSPACE_FILE}: {why}")
            return loaded.record.id
        raise HumanWriteError(WORKSPACE_FILE, f"{WORKSPACE_FILE} could not be created")

    def decision_fields(
        self,
        request_id: str,
        digest: str,
        decision: Literal["approve", "reject"],
        reason: str,
        valid_until: datetime | None,
        decided_at: datetime,
    ) -> DecisionFields:
        """The fields `decide` writes for this decision by this writer, signature aside:
        what a signature is made over (`store.trust.signatures.payload(mission, **fields)`)."""
        return {
            "request": request_id,
            "digest": digest,
            "decision": decision,
            "reason": reason,
            "decided_by": self.user,
            "decided_at": decided_at,
            "valid_until": valid_until,
            "origin": self.origin,
        }

    def decide(
        self,
        mission: str,
        request_id: str,
        request_raw: dict[str, Any],
        decision: Literal["approve", "reject"],
        reason: str = "",
        valid_until: datetime | None = None,
        decided_at: datetime | None = None,
        signature: str | None = None,
    ) -> Decision:
        """Record a decision on the request whose raw JSON object is `request_raw`, once.

        `decided_at` defaults to now; `signature` (armored SSHSIG, made over
        `store.trust.signatures.payload` of these very fields: `decision_fields`) is written
        as given."""
        relpath = decision_path(mission, request_id)
        _refuse_unsafe(relpath, mission, request_id)
        if request_raw.get("id") != request_id:
            raise Invalid(relpath, f"the request's id is not {request_id!r}", None, None)
        saved = self.create_document(
            relpath,
            {
                **self.decision_fields(
                    request_id,
                    request_digest(request_raw),
                    decision,
                    reason,
                    valid_until,
                    decided_at or self.clock(),
                ),
                "request_json": request_snapshot(request_raw),
                "signature": signature,
            },
        )
        return cast(Decision, validate(Decision, tomllib.loads(saved.text)))

    def replace(self, relpath: str, new_text: str, loaded_sha256: str) -> Saved:
        """Save an edited intent or constraints text, if the file is still what was loaded."""
        located = self._located(relpath)
        if located.kind not in _EDITABLE:
            raise HumanWriteError(relpath, f"{relpath}: only intent and constraints are edited")
        model = _model_of(located)
        self._validate(relpath, new_text, model)
        new_bytes = new_text.encode()
        with self._folder(relpath) as fd, _conflicts(relpath, new_text):
            current = durable.check_unchanged(self.root, fd, relpath, loaded_sha256)
            if new_bytes == current:
                return Saved(relpath, False, new_text, loaded_sha256)
            revision = self._history_slot(located, current)
            stamps = {"revision": revision + 1, "edited_by": self.user, "edited_at": self.clock()}
            stamped = _stamp(new_text, stamps)
            if stamped is None:
                message = "cannot record who and when: keep revision, edited_by, edited_at "
                raise Invalid(relpath, message + "as one-line top-level keys", None, None)
            self._validate(relpath, stamped, model)
            history = self._keep(located, revision, current)
            stamped_bytes = stamped.encode()
            durable.replace(fd, _name(relpath), stamped_bytes)
        return Saved(relpath, True, stamped, _sha256(stamped_bytes), revision + 1, history)

    def replace_small(self, relpath: str, new_text: str, loaded_sha256: str) -> Saved:
        """Save an edited SMALL intent.small.yml or constraints.small.yml, and nothing else.

        SMALL's ownership, not the `.toml` rule, decides here: only the two human-owned
        SMALL files (in `.small/`, or at the root when the state directory is a `.small`
        folder) are accepted; plan, progress, handoff and workspace are the agent's and
        raise `OwnershipError`. The text must parse and pass the v1.0.0 schema and lint
        (`Invalid`, with its line); an unquoted `small_version: 1.0.0` is written quoted;
        comments and layout are kept. The file must still hash to `loaded_sha256`
        (`Conflict`). Atomic (temp file, fsync, rename, fsync folder); no history file,
        no progress entry: SMALL's own `small accept` records one (see docs/small.md).
        """
        from store.sources.small import write as small_write  # ruamel.yaml: only here

        kind = self._small_kind(relpath)
        try:
            text = small_write.prepare(kind, relpath, new_text)
        except small_write.SmallInvalid as exc:
            raise Invalid(relpath, str(exc), exc.line, 1 if exc.line else None) from None
        with self._folder(relpath) as fd, _conflicts(relpath, new_text):
            written = small_write.replace(self.root, fd, relpath, text, loaded_sha256)
        return Saved(relpath, written.changed, written.text, written.sha256)

    def _small_kind(self, relpath: str) -> str:
        """The human-owned SMALL kind at `relpath`; OwnershipError for any other path."""
        prefix = "" if self._real_root.name == SMALL_DIR else f"{SMALL_DIR}/"
        for kind in SMALL_HUMAN_KINDS:
            if relpath == prefix + SMALL_FILES[kind]:
                return kind
        raise OwnershipError(
            relpath,
            f"{relpath} is not a human-owned SMALL file: the HUD writes only "
            f"{prefix}intent.small.yml and {prefix}constraints.small.yml of a SMALL workspace",
        )

    # ---- paths -----------------------------------------------------------------------

    def _located(self, relpath: str) -> Located:
        located = classify(relpath)
        if located is None or not is_human(relpath):
            owner = "unknown to the layout" if located is None else f"{located.owner} owned"
            raise OwnershipError(relpath, f"{relpath} is {owner}: the HUD writes only human files")
        if located.kind is Kind.SIGNERS:
            raise OwnershipError(
                relpath, f"{relpath}: signers files are the admin's, not the HUD's"
            )
        return located

    @contextmanager
    def _folder(self, relpath: str, *, create: bool = False) -> Iterator[int]:
        """The folder of `relpath`, open through `store.format.confined` (no symlink followed,
        missing folders made with `create`), its stale temp files removed."""
        try:
            with confined.folder(self.root, _parent(relpath), create=create) as fd:
                durable.remove_stale_temps(fd)
                yield fd
        except confined.Refused as refused:
            raise _refusal(relpath, refused.problem) from None

    def _exists(self, located: Located) -> AlreadyExists:
        relpath = located.relpath
        try:
            on_disk = durable.existing(self.root, relpath) or b""
        except confined.Refused:
            on_disk = b""  # a FIFO or a symlink took the name: there, but unreadable
        text = on_disk.decode(errors="replace")
        if located.kind is not Kind.DECISION:
            return AlreadyExists(relpath, f"{relpath} already exists", text)
        try:
            theirs: Decision | None = validate(Decision, tomllib.loads(text))
        except (tomllib.TOMLDecodeError, ValidationError):
            theirs = None
        if theirs is None:
            message = f"{relpath}: already decided (the existing decision is unreadable)"
        else:
            message = (
                f"{relpath}: already decided ({theirs.decision}) by {theirs.decided_by} "
                f"at {theirs.decided_at.isoformat()}"
            )
        return AlreadyDecided(relpath, message, text, theirs)

    # ---- history ---------------------------------------------------------------------

    def _history_slot(self, located: Located, old: bytes) -> int:
        """The revision number under which `old` is (or will be) kept in history/."""
        revision = _revision_of(old)
        while True:
            kept = durable.existing(
                self.root, history_path(located.mission or "", located.kind, revision)
            )
            if kept is None or kept == old:
                return revision
            revision += 1

    def _keep(self, located: Located, revision: int, old: bytes) -> str:
        kept = self._located(history_path(located.mission or "", located.kind, revision))
        with self._folder(kept.relpath, create=True) as fd:
            try:
                durable.create_once(fd, _name(kept.relpath), old, HUMAN_MODE)
            except FileExistsError:
                if durable.existing(self.root, kept.relpath) != old:
                    raise self._exists(kept) from None
        return kept.relpath

    # ---- checks ----------------------------------------------------------------------

    def _validate(self, relpath: str, text: str, model: type[BaseModel]) -> None:
        parsed = parse_toml(relpath, text)
        if isinstance(parsed, Problem):
            column = _COLUMN.search(parsed.message)
            where = int(column.group(1)) if column else None
            raise Invalid(relpath, parsed.message, parsed.line, where)
        try:
            record = validate(model, parsed)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(part) for part in first["loc"])
            line = _line_of(text, first["loc"])
            message = f"{loc}: {first['msg']}" if loc else first["msg"]
            raise Invalid(relpath, message, line, 1 if line else None) from None
        if isinstance(record, Constraints):
            self._within_floor(relpath, record)

    def _within_floor(self, relpath: str, constraints: Constraints) -> None:
        """Refuse constraints that go below the workspace floor (policy.toml), naming the
        field and the floor's value; or any, when policy.toml does not load."""
        found = confined.read_file(self.root, POLICY_FILE, MAX_SIGNERS_BYTES)
        if isinstance(found, Problem) and found.code == "missing":
            return
        floor = floor_of({POLICY_FILE: found})
        if isinstance(floor, Problem):
            message = f"{POLICY_FILE} does not load ({floor.message}): nothing is saved"
            raise Invalid(relpath, message, None, None)
        below = below_floor(floor, constraints)
        if below:
            message = "below the workspace floor: " + "; ".join(below)
            raise Invalid(relpath, message, None, None)


# ---- helpers ------------------------------------------------------------------------------


def _parent(relpath: str) -> str:
    return relpath.rpartition("/")[0]


def _name(relpath: str) -> str:
    return relpath.rpartition("/")[2]


def _refuse_unsafe(relpath: str, mission: str, request_id: str | None = None) -> None:
    why = unsafe_id(mission, request_id)
    if why is not None:
        raise OwnershipError(relpath, f"{relpath} not written: {why}")


def _refusal(relpath: str, problem: Problem) -> HumanWriteError:
    """The writer's error for a path `store.format.confined` refused (it names that path)."""
    error = OwnershipError if problem.code in _NOT_PLAIN else HumanWriteError
    where = f"{problem.path}: " if problem.path else ""  # "": the state directory itself
    return error(relpath, f"{relpath} not written: {where}{problem.message}")


@contextmanager
def _conflicts(relpath: str, yours: str) -> Iterator[None]:
    """`durable.Changed` as a `Conflict` between the bytes on disk and `yours`."""
    try:
        yield
    except durable.Changed as changed:
        if changed.theirs is None:
            raise Conflict(relpath, "", None, yours) from None
        theirs = changed.theirs.decode(errors="replace")
        raise Conflict(relpath, theirs, _sha256(changed.theirs), yours) from None


def _model_of(located: Located) -> type[BaseModel]:
    if located.kind is Kind.HISTORY:
        return Intent if located.parts["name"].startswith("intent.") else Constraints
    return _MODELS[located.kind]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _revision_of(data: bytes) -> int:
    """The `revision` of a document's bytes; 1 when absent or unreadable."""
    try:
        revision = tomllib.loads(data.decode()).get("revision", 1)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return 1
    return revision if isinstance(revision, int) and revision >= 1 else 1


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line of a validation error's location, for error messages.

    The first line assigning or opening the table of `loc`'s first key, then, for a
    nested key (`budget.usd`), its assignment inside that table, if there is one.
    """
    lines = text.splitlines()
    found: int | None = None
    for key in (str(part) for part in loc if isinstance(part, str)):
        pattern = re.compile(
            rf"\s*(\[+\s*{re.escape(key)}\s*[\].]|[\"']?{re.escape(key)}[\"']?\s*[=.])"
        )
        for index in range(found or 0, len(lines)):
            if found is not None and _HEADER.match(lines[index]):
                return found
            if pattern.match(lines[index]):
                found = index + 1
                break
        else:
            return found
    return found


def _stamp(text: str, stamps: dict[str, Any]) -> str | None:
    """`text` with each stamp as a one-line top-level `key = value`; None if no safe edit."""
    result: str | None = text
    for key, value in stamps.items():
        result = _set_top_level(result, key, value) if result is not None else None
    return result


def _set_top_level(text: str, key: str, value: Any) -> str | None:
    """`text` with the line `key = value` rewritten where it stands, or inserted."""
    want = {**tomllib.loads(text), key: value}
    newline = "\r\n" if "\r\n" in text else "\n"
    line = tomli_w.dumps({key: value}).rstrip("\n") + newline
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    assigns = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
    spans = [(i, i + 1) for i, s in enumerate(lines) if assigns.match(s)]
    for i in [*(i for i, s in enumerate(lines) if _HEADER.match(s)), len(lines), 0]:
        while i > 0 and _LEAD_IN.match(lines[i - 1]):
            i -= 1
        spans.append((i, i))
    for start, end in spans:
        result = "".join([*lines[:start], line, *lines[end:]])
        try:
            if tomllib.loads(result) == want:
                return result
        except tomllib.TOMLDecodeError:
            continue
    return None
