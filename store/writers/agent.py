"""The writer for agent runtimes and the demo simulator. The HUD never imports it.

Logs (`events.jsonl`, `evidence.jsonl`) are appended under an exclusive `flock` on
the log file itself: the writer reads the last complete line to recover `seq` and the
hash chain (only the file's tail, so appending to a long log costs the same as to a
short one), validates the new record with its pydantic model, and writes the whole
line with one `os.write`. Plan versions, approval requests and artifacts are
write-once (temp file + hard link, which fails if the name exists); the handoff is
replaced atomically (temp + fsync + rename + fsync of the folder).

`authorize()` is the commit-time check an agent makes before running an effect that
needed approval: the decision approves exactly the request as it is now, has not
expired, and no attempt has used it yet. `AgentWriter.start_approved_attempt()` makes
that check and records the attempt under the events log's lock, so one approval runs
once even with several agents. `wait_for_decision()` waits for a human to decide (it
polls the decision's name) without using the approval. A request filed with a waiter
(`store.derivation.lease`) is authorized only for the process holding its lease, or once the waiter
recorded that it received the decision (a `waiter` event); never once it withdrew.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import mmap
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import ValidationError

from store.derivation.lease import Lease, waiting
from store.derivation.plan_binding import plan_binding
from store.format import confined, durable
from store.format.layout import (
    POLICY_FILE,
    WORKSPACE_FILE,
    Kind,
    classify,
    decision_path,
    doc_path,
    log_path,
    mission_dir,
    plan_path,
    request_path,
    safe_mission_id,
    safe_request_id,
)
from store.format.load import (
    EVENT_ADAPTER,
    EVIDENCE_ADAPTER,
    MAX_LINE_BYTES,
    Loaded,
    load_document,
    unknown_field_problems,
)
from store.format.problems import Problem
from store.format.records import (
    GENESIS,
    ApprovalRequest,
    Artifact,
    AttemptEvent,
    Constraints,
    Decision,
    ErrorEvent,
    Evidence,
    HaltEvent,
    Handoff,
    HeartbeatEvent,
    LogLine,
    Plan,
    Risk,
    StepEvent,
    StepState,
    UsageEvent,
    WaiterEvent,
    canonical_json,
    request_digest,
    validate,
)
from store.trust import sshsig
from store.trust.policy import (
    EffectivePolicy,
    Revision,
    Signing,
    constraints_missing,
    decision_times,
    effective_policy,
    floor_of,
    signature_texts,
)
from store.trust.signatures import policy, signature_state
from store.trust.signers import MAX_SIGNERS_BYTES

TAIL_BLOCK = 8192
_ARTIFACT_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class AgentError(Exception):
    """Base of everything `store.writers.agent` refuses to do."""


class LogCorrupt(AgentError):
    """The log's tail cannot be continued (unterminated or unparsable last line)."""


class AlreadyExists(AgentError):
    """A write-once file (plan version, request, artifact) exists already."""


class PlanError(AgentError):
    """A plan version that would overwrite one or leave a gap."""


class InvalidRecord(AgentError):
    """A record that does not validate against its model (nothing was written)."""


# ---- small helpers --------------------------------------------------------------------


def utcnow() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """An RFC 3339 timestamp with milliseconds; UTC is written as `Z`."""
    if moment.tzinfo is None:
        raise ValueError("timestamp has no time zone")
    text = moment.isoformat(timespec="milliseconds")
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def compact_json(value: Any) -> bytes:
    """One log line's JSON: separators `,` `:`, UTF-8, no ASCII escaping, key order kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )


def pretty_json(value: Any) -> bytes:
    """A document's JSON, indented for people who open it."""
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def _normalize(value: Mapping[str, Any]) -> dict[str, Any]:
    """A plain JSON object (tuples to lists, NaN refused), keys in their given order."""
    try:
        result = json.loads(json.dumps(dict(value), ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidRecord(f"not JSON-serializable: {exc}") from exc
    return cast(dict[str, Any], result)


def _validate(target: Any, raw: dict[str, Any], what: str) -> Any:
    try:
        record = validate(target, raw)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(record)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise InvalidRecord(f"{what} does not validate: {details}") from exc
    extra = unknown_field_problems(what, record, None)
    if extra:
        names = ", ".join(p.message for p in extra)
        raise InvalidRecord(f"{what} has fields the format does not define: {names}")
    return record


@contextlib.contextmanager
def _open_folder(folder: Path) -> Iterator[int]:
    """`folder` (made if missing) open for writing in it by name; its temp files left by
    killed writers are removed first."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        durable.remove_stale_temps(fd)
        yield fd
    finally:
        os.close(fd)


def write_once(final: Path, data: bytes) -> None:
    """Create `final` with `data`, or raise AlreadyExists; never a half-written file."""
    with _open_folder(final.parent) as fd:
        try:
            durable.create_once(fd, final.name, data)
        except FileExistsError as exc:
            raise AlreadyExists(f"{final.name} exists already; it is write-once") from exc


# ---- log tails ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tail:
    """Where a log ends: the last line's `seq` and the sha256 of its bytes (its successor's
    `prev`). An empty log has seq 0 and the genesis hash."""

    seq: int
    digest: str
    size: int


def read_tail(fd: int, *, strict: bool = True) -> Tail:
    """The last complete line of the open log `fd`, reading only the file's end.

    With `strict`, an unterminated last line raises LogCorrupt (appending after it would
    glue two records together); otherwise it is ignored, as a reader would hold it back.
    """
    size = os.fstat(fd).st_size
    end = size
    if end and os.pread(fd, 1, end - 1) != b"\n":
        if strict:
            raise LogCorrupt(
                "the log's last line has no newline (a writer crashed mid-line?); "
                "repair the log before appending"
            )
        end = _line_start(fd, end)  # drop the partial line
    if end == 0:
        return Tail(0, GENESIS, size)
    start = _line_start(fd, end - 1)
    line = os.pread(fd, end - 1 - start, start)
    try:
        seq = json.loads(line)["seq"]
    except (ValueError, TypeError, KeyError) as exc:
        raise LogCorrupt(f"the log's last line is not a record with a seq: {exc}") from exc
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise LogCorrupt(f"the log's last line has seq {seq!r}, not a positive integer")
    return Tail(seq, hashlib.sha256(line).hexdigest(), size)


def _line_start(fd: int, end: int) -> int:
    """Offset just after the last newline before `end` (0 if none)."""
    pos = end
    while pos > 0:
        begin = max(0, pos - TAIL_BLOCK)
        block = os.pread(fd, pos - begin, begin)
        found = block.rfind(b"\n")
        if found != -1:
            return begin + found + 1
        pos = begin
    return 0


def open_log(root: Path, relpath: str) -> confined.OpenFile | None:
    """The log at `relpath` open for reading (`store.format.confined`: no symlink followed, never
    blocking), or None when it does not exist yet; LogCorrupt when it is not a regular file."""
    opened = confined.open_on_disk(root, relpath)
    if isinstance(opened, Problem):
        if opened.code == "missing":
            return None
        raise LogCorrupt(f"{opened.path}: {opened.message}")
    return opened


def log_tail(root: Path, relpath: str) -> Tail:
    """The tail of the log at `relpath` without locking it (a partial last line is skipped)."""
    opened = open_log(root, relpath)
    if opened is None:
        return Tail(0, GENESIS, 0)
    with opened:
        return read_tail(opened.fd, strict=False)


class LockedLog:
    """An open log held under an exclusive flock; append lines one `os.write` each."""

    def __init__(self, path: Path, kind: Kind, fsync: bool) -> None:
        self.path = path
        self.kind = kind
        self.fsync = fsync
        self.fd = -1
        self.known: Tail | None = None  # the tail after our own last append under this lock

    def __enter__(self) -> LockedLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            except BaseException:
                os.close(fd)
                raise
            if same:
                self.fd = fd
                return self
            os.close(fd)  # replaced while we waited for the lock: lock the new file

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing releases the flock
        self.fd = -1

    def append(self, at: datetime, fields: Mapping[str, Any]) -> tuple[LogLine, dict[str, Any]]:
        """Validate and append one record; returns it and the raw dict as written."""
        tail = self.known if self.known is not None else read_tail(self.fd)
        seq = tail.seq + 1
        raw: dict[str, Any] = {"schema": 1} if seq == 1 else {}
        raw.update(seq=seq, at=rfc3339(at), prev=tail.digest)
        for key, value in fields.items():
            if value is None:
                continue
            if key == "id" and value == "" and self.kind is Kind.EVIDENCE:
                value = f"ev-{seq}"
            raw[key] = value
        raw = _normalize(raw)
        adapter = EVENT_ADAPTER if self.kind is Kind.EVENTS else EVIDENCE_ADAPTER
        record = _validate(adapter, raw, f"{self.kind.value} line {seq}")
        try:
            line = compact_json(raw)
        except ValueError as exc:  # e.g. a lone surrogate that UTF-8 cannot hold
            raise InvalidRecord(f"{self.kind.value} line {seq}: {exc}") from exc
        if b"\n" in line or len(line) > MAX_LINE_BYTES:
            raise InvalidRecord(f"a log line must be under {MAX_LINE_BYTES:,} bytes")
        data = line + b"\n"
        self.known = None
        try:
            written = os.write(self.fd, data)
        except BaseException:
            os.ftruncate(self.fd, tail.size)  # never leave part of a line behind
            raise
        if written != len(data):  # disk full: take the torn bytes back
            os.ftruncate(self.fd, tail.size)
            raise OSError(f"short write to {self.path} ({written} of {len(data)} bytes)")
        if self.fsync:
            os.fsync(self.fd)
            if seq == 1:
                durable.fsync_dir(self.path.parent)
        self.known = Tail(seq, hashlib.sha256(line).hexdigest(), tail.size + len(data))
        return cast(LogLine, record), raw


# ---- authorization ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Authorization:
    """The answer of `authorize`: ok, or the reason the action must not run."""

    ok: bool
    reason: str
    request: ApprovalRequest | None = None
    raw_request: dict[str, Any] | None = None
    decision: Decision | None = None
    used: ApprovalUse | None = None
    """Refused because an attempt already used the approval: that attempt."""
    resume: bool = False
    """Refused because the same idempotency key already authorized it: the caller crashed
    after `authorize` and must not repeat the effect, only record its outcome."""

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True, slots=True)
class ApprovalUse:
    """An attempt event found in the events log (one that references an approval, or
    ran under an idempotency key)."""

    seq: int
    step: str
    attempt: int
    idempotency_key: str = ""
    at: str = ""


def find_approval_use(root: Path, mission: str, request_id: str) -> ApprovalUse | None:
    """The first attempt event in the mission's events log that references `request_id`.

    Scans the log with `mmap` for the id's JSON string and parses only the lines that
    contain it, so a long log costs a memory scan, not a JSON parse per line. LogCorrupt
    when the log is not a regular file (then no one can tell).
    """
    return _first_attempt(root, mission, "approval", request_id)


def find_attempt(root: Path, mission: str, idempotency_key: str) -> ApprovalUse | None:
    """The first attempt event (its start) under `idempotency_key`, found the same way."""
    return _first_attempt(root, mission, "idempotency_key", idempotency_key)


def _first_attempt(root: Path, mission: str, field: str, value: str) -> ApprovalUse | None:
    for found in _records_naming(root, mission, value):
        if found.get("type") == "attempt" and found.get(field) == value:
            seq, step, attempt = found.get("seq"), found.get("step"), found.get("attempt")
            key, at = found.get("idempotency_key", ""), found.get("at", "")
            if (
                isinstance(seq, int)
                and isinstance(step, str)
                and isinstance(attempt, int)
                and isinstance(key, str)
                and isinstance(at, str)
            ):
                return ApprovalUse(seq, step, attempt, key, at)
    return None


def waiter_states(root: Path, mission: str, request_id: str) -> set[str]:
    """The states of the `waiter` events of request `request_id` (`received`,
    `withdrawn`), found as `find_approval_use` finds attempts."""
    return {
        state
        for found in _records_naming(root, mission, request_id)
        if found.get("type") == "waiter"
        and found.get("request") == request_id
        and isinstance(state := found.get("state"), str)
    }


def _records_naming(root: Path, mission: str, value: str) -> Iterator[dict[str, Any]]:
    """Each complete line of the events log that holds `value` as a JSON string, parsed.

    Scans the log with `mmap` for the JSON string and parses only the lines that contain
    it. LogCorrupt when the log is not a regular file (then no one can tell)."""
    needle = json.dumps(value, ensure_ascii=False).encode("utf-8")
    opened = open_log(root, log_path(mission, Kind.EVENTS))
    if opened is None:
        return
    with opened:
        if opened.info.st_size == 0:
            return
        with mmap.mmap(opened.fd, 0, access=mmap.ACCESS_READ) as view:
            pos = view.find(needle)
            while pos != -1:
                start = view.rfind(b"\n", 0, pos) + 1
                end = view.find(b"\n", pos)
                if end == -1:
                    return  # an unterminated last line is not a record yet
                try:
                    found = json.loads(view[start:end])
                except ValueError:
                    found = None
                if isinstance(found, dict):
                    yield found
                pos = view.find(needle, end)


def authorize(
    root: Path,
    mission: str,
    request_id: str,
    now: datetime | None = None,
    *,
    lease: Lease | None = None,
) -> Authorization:
    """May the action of approval request `request_id` run now? Check at commit time.

    ok only when: the request exists and is valid; a decision exists, approves, and
    its digest equals the digest of the request as it is now; the mission's approval
    policy can be derived (`policy_on_disk`: constraints.toml within the policy.toml
    floor; a missing or unreadable one refuses), the decision's times bind
    (`store.trust.policy.decision_times`) and, where the policy requires signatures, its
    signature is valid (`store.trust.signatures`); the plan
    version the request names still holds (`store.derivation.plan_binding`: no newer
    version removes or changes its step, or adds or changes a step with effects; refused
    as `stale (<rule>): ...`);
    neither the request's `expires_at` nor the decision's `valid_until` has passed; no
    attempt event has used this approval yet (one approval runs once); and, for a request
    filed with a waiter (`store.derivation.lease`), someone still waits for it: the caller holds its
    `lease`, or the waiter recorded that it received the decision, and it never withdrew
    it (`_waiter_refusal`).
    """
    moment = now or utcnow()
    if not safe_mission_id(mission) or not safe_request_id(request_id):
        return Authorization(False, "unsafe mission or request id")
    loaded = load_document(root, request_path(mission, request_id), ApprovalRequest)
    request, raw = loaded.record, loaded.raw
    if _missing(loaded):
        return Authorization(False, "no such request")
    if request is None or raw is None:
        first = loaded.problems[0].message if loaded.problems else "unreadable"
        return Authorization(False, f"invalid request: {first}")
    if request.id != request_id:
        return Authorization(False, f"invalid request: its id is {request.id!r}", request, raw)
    plan_stale = _plan_refusal(root, mission, request)
    decided = load_document(root, decision_path(mission, request_id), Decision)
    if _missing(decided):
        if plan_stale is not None:
            return Authorization(False, plan_stale, request, raw)
        if request.expires_at is not None and moment >= request.expires_at:
            return Authorization(
                False,
                f"expired: request expired at {rfc3339(request.expires_at)} without a decision",
                request,
                raw,
            )
        return Authorization(False, "not decided", request, raw)
    decision = decided.record
    if decision is None:
        first = decided.problems[0].message if decided.problems else "unreadable"
        return Authorization(False, f"invalid decision: {first}", request, raw)

    def deny(reason: str) -> Authorization:
        return Authorization(False, reason, request, raw, decision)

    if decision.request != request_id:
        return deny(f"invalid decision: it names request {decision.request!r}")
    if decision.decision == "reject":
        return deny(f"rejected: {decision.reason}")
    if decision.digest != request_digest(raw):
        return deny("stale: request changed after approval")
    unsigned = _signature_refusal(root, mission, request, decision, moment)
    if unsigned is not None:
        return deny(unsigned)
    try:
        use = find_approval_use(root, mission, request_id)
    except LogCorrupt as exc:
        return deny(f"cannot tell whether the approval was used: {exc}")
    if use is not None:
        used = f"already used by attempt {use.attempt} of step {use.step} (seq {use.seq})"
        return Authorization(False, used, request, raw, decision, used=use)
    unwaited = _waiter_refusal(root, mission, request_id, lease)
    if unwaited is not None:
        return deny(unwaited)
    if plan_stale is not None:
        return deny(plan_stale)
    if request.expires_at is not None and moment >= request.expires_at:
        return deny(f"expired: request expired at {rfc3339(request.expires_at)}")
    if decision.valid_until is not None and moment >= decision.valid_until:
        return deny(f"expired: approval was valid until {rfc3339(decision.valid_until)}")
    return Authorization(True, "approved", request, raw, decision)


def _waiter_refusal(root: Path, mission: str, request_id: str, lease: Lease | None) -> str | None:
    """For a request filed with a waiter (its lease file exists): why its approval must not
    run the call, or None. It runs only for the process holding the lease, or after the
    waiter recorded (a `waiter` event, `received`) that it saw the decision while waiting;
    never once the waiter withdrew it. A late approval cannot run a call nobody waits for."""
    if waiting(root, mission, request_id) is None:
        return None  # filed without a waiter
    try:
        states = waiter_states(root, mission, request_id)
    except LogCorrupt as exc:
        return f"cannot tell whether anyone waits for it: {exc}"
    if "withdrawn" in states:
        return "withdrawn: its waiter left before the decision; file a new request"
    mine = lease is not None and (lease.mission, lease.request_id) == (mission, request_id)
    if (mine and lease is not None and lease.held) or "received" in states:
        return None
    return (
        "nobody waiting: the process that filed it and waited for the decision is gone, "
        "or is not this one; an approval given now cannot run the call"
    )


def _signature_refusal(
    root: Path, mission: str, request: ApprovalRequest, decision: Decision, now: datetime
) -> str | None:
    """Why the policy in force (`policy_on_disk`) does not let the decision through, or
    None: no policy can be derived, its times (`store.trust.policy.decision_times`), its
    signature (`store.trust.signatures`)."""
    rules, files = policy_on_disk(root, mission, now)
    if rules.refusal is not None:
        return rules.refusal
    times = decision_times(request, decision, rules.valid_for_seconds, now)
    if times is not None:
        return times
    state = signature_state(mission, decision, policy(rules, files), now)
    return None if state.authorizes else f"signature: {state.describe()}"


def policy_on_disk(
    root: Path, mission: str, now: datetime | None = None
) -> tuple[EffectivePolicy, dict[str, bytes | Problem]]:
    """The approval rules in force for `mission` (`store.trust.policy.effective_policy`) and the
    root trust files read for them, all read confined, as `store.derivation.mission`
    indexes them."""
    files: dict[str, bytes | Problem] = {}

    def read(paths: Iterable[str]) -> None:
        for path in paths:
            found = confined.read_file(root, path, MAX_SIGNERS_BYTES)
            if not (isinstance(found, Problem) and found.code == "missing"):
                files[path] = found

    read((POLICY_FILE, WORKSPACE_FILE))
    floor = floor_of(files)
    signed = not isinstance(floor, Problem) and floor.require_signed_policy
    if not isinstance(floor, Problem) and floor.policy_signers:
        read((floor.policy_signers,))
    loaded = load_document(root, doc_path(mission, Kind.CONSTRAINTS), Constraints)
    history = _constraint_revisions(root, mission) if signed or loaded.record is None else {}
    rules: Constraints | Problem
    if loaded.record is not None:
        rules = loaded.record
    else:
        why = None
        if not _missing(loaded):
            why = loaded.problems[0].message if loaded.problems else "unreadable"
        kept = {number: found.record for number, found in history.items()}
        rules = constraints_missing(mission, kept, why)
    signing = None
    if signed:
        revisions = (_revision(found) for found in history.values())
        signing = Signing(
            _revision(loaded),
            tuple(r for r in revisions if r is not None),
            _policy_signatures(root, mission),
            now,
        )
    effective = effective_policy(mission, floor, rules, files, signing)
    read(effective.signer_files() - files.keys())
    return effective, files


def _revision(loaded: Loaded[Constraints]) -> Revision | None:
    if loaded.record is None or loaded.sha256 is None:
        return None
    return Revision(loaded.record.revision, loaded.record, loaded.sha256)


def _policy_signatures(root: Path, mission: str) -> tuple[str, ...]:
    """The texts of the mission's constraints signature files, read confined."""
    found: list[bytes | Problem] = []
    for folder in (mission_dir(mission), f"{mission_dir(mission)}/history"):
        entries = confined.list_folder(root, folder)
        for entry in entries if not isinstance(entries, Problem) else ():
            located = classify(f"{folder}/{entry.name}")
            if located is not None and located.kind is Kind.POLICY_SIG:
                found.append(confined.read_file(root, located.relpath, sshsig.MAX_ARMOR))
    return signature_texts(found)


def _constraint_revisions(root: Path, mission: str) -> dict[int, Loaded[Constraints]]:
    """The kept revisions of the mission's constraints.toml, read confined."""
    folder = f"{mission_dir(mission)}/history"
    entries = confined.list_folder(root, folder)
    found: dict[int, Loaded[Constraints]] = {}
    for entry in entries if not isinstance(entries, Problem) else ():
        located = classify(f"{folder}/{entry.name}")
        if located is not None and located.parts.get("name", "").startswith("constraints."):
            found[int(located.parts["revision"])] = load_document(
                root, located.relpath, Constraints
            )
    return found


def _plan_refusal(root: Path, mission: str, request: ApprovalRequest) -> str | None:
    """Why the plan no longer holds for `request` (`stale (<rule>): ...`), or None.

    Reads the mission's plan versions from the request's on, as `store.derivation.mission` does
    (confined, no symlink followed): one that does not load counts as unreadable."""
    folder = f"{mission_dir(mission)}/plan"
    entries = confined.list_folder(root, folder)
    if isinstance(entries, Problem):
        if entries.code == "missing":
            return None
        return f"cannot tell whether the plan changed: {entries.path}: {entries.message}"
    plans: dict[int, Plan | None] = {}
    for entry in entries:
        located = classify(f"{folder}/{entry.name}")
        if located is None or located.kind is not Kind.PLAN:
            continue
        version = int(located.parts["version"])
        if version >= request.plan_version:
            plans[version] = load_document(root, located.relpath, Plan).record
    binding = plan_binding(plans, request.plan_version, request.step)
    return binding.reason if binding.stale else None


def wait_for_decision(
    root: Path,
    mission: str,
    request_id: str,
    timeout: float,
    *,
    poll: float = 0.2,
    now: Callable[[], datetime] = utcnow,
    lease: Lease | None = None,
) -> Authorization:
    """`authorize()` once request `request_id` is decided, has expired, or `timeout` seconds
    passed (then its reason is still "not decided").

    Waits cheaply: one `lstat` of the decision's name every `poll` seconds (whatever holds
    that name means decided; `authorize` reads it confined). Never uses the approval:
    `AgentWriter.start_approved_attempt` does that at commit time.
    """
    auth = authorize(root, mission, request_id, now(), lease=lease)
    if auth.reason != "not decided" or auth.request is None:
        return auth
    expires = auth.request.expires_at
    decision = root / decision_path(mission, request_id)
    deadline = time.monotonic() + timeout
    while not os.path.lexists(decision):
        left = deadline - time.monotonic()
        if expires is not None:
            left = min(left, (expires - now()).total_seconds())
        if left <= 0:
            break
        time.sleep(min(poll, left))
    return authorize(root, mission, request_id, now(), lease=lease)


def _missing(loaded: Loaded[Any]) -> bool:
    """True when the document (or a folder on its way) does not exist."""
    return loaded.record is None and any(p.code == "missing" for p in loaded.problems)


# ---- the writer ------------------------------------------------------------------------------


class AgentWriter:
    """Writes one mission's agent-owned records. Safe to use from several processes."""

    def __init__(
        self,
        root: Path,
        mission: str,
        actor: str,
        *,
        fsync: bool = False,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if not safe_mission_id(mission):
            raise AgentError(f"unsafe mission id {mission!r}")
        if not actor:
            raise AgentError("actor must not be empty")
        self.root = Path(root)
        self.mission = mission
        self.actor = actor
        self.fsync = fsync
        self.clock = clock
        self.last_seq: dict[Kind, int] = {}

    @property
    def path(self) -> Path:
        """The mission's folder."""
        return self.root / mission_dir(self.mission)

    def _now(self, at: datetime | None) -> datetime:
        return at if at is not None else self.clock()

    @contextlib.contextmanager
    def locked(self, kind: Kind) -> Iterator[LockedLog]:
        """Hold the exclusive lock of the events or evidence log."""
        if kind not in (Kind.EVENTS, Kind.EVIDENCE):
            raise AgentError(f"{kind.value} is not a log")
        with LockedLog(self.root / log_path(self.mission, kind), kind, self.fsync) as log:
            yield log

    def tail(self, kind: Kind) -> Tail:
        """Where a log ends now (read without the lock)."""
        return log_tail(self.root, log_path(self.mission, kind))

    # -- events ---------------------------------------------------------------------------

    def event(self, type: str, fields: Mapping[str, Any], at: datetime | None = None) -> LogLine:
        """Append one event of `type`; None-valued fields are left out."""
        moment = self._now(at)
        with self.locked(Kind.EVENTS) as log:
            record, _ = log.append(moment, {"type": type, "actor": self.actor, **fields})
        self.last_seq[Kind.EVENTS] = record.seq
        return record

    def step(
        self,
        step: str,
        state: StepState,
        plan_version: int,
        reason: str = "",
        at: datetime | None = None,
    ) -> StepEvent:
        fields = {"step": step, "plan_version": plan_version, "state": state, "reason": reason}
        return cast(StepEvent, self.event("step", fields, at))

    def attempt(
        self,
        step: str,
        attempt: int,
        phase: Literal["started", "finished"],
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str = "",
        approval: str | None = None,
        effect_possible: bool = False,
        outcome: Literal["ok", "error", "unknown"] | None = None,
        external_ref: str | None = None,
        output_ref: str | None = None,
        at: datetime | None = None,
    ) -> AttemptEvent:
        fields = {
            "step": step,
            "attempt": attempt,
            "phase": phase,
            "tool": tool,
            "args": dict(args or {}),
            "idempotency_key": idempotency_key,
            "approval": approval,
            "effect_possible": effect_possible,
            "outcome": outcome,
            "external_ref": external_ref,
            "output_ref": output_ref,
        }
        return cast(AttemptEvent, self.event("attempt", fields, at))

    def usage(self, usd: float, tokens: int, steps: int, at: datetime | None = None) -> UsageEvent:
        """Cumulative use so far (not a delta)."""
        fields = {"usd": round(usd, 6), "tokens": tokens, "steps": steps}
        return cast(UsageEvent, self.event("usage", fields, at))

    def heartbeat(self, at: datetime | None = None) -> HeartbeatEvent:
        return cast(HeartbeatEvent, self.event("heartbeat", {}, at))

    def error(
        self, message: str, step: str | None = None, at: datetime | None = None
    ) -> ErrorEvent:
        return cast(ErrorEvent, self.event("error", {"message": message, "step": step}, at))

    def halt(self, reason: str, at: datetime | None = None) -> HaltEvent:
        return cast(HaltEvent, self.event("halt", {"reason": reason}, at))

    def waiter(
        self,
        request_id: str,
        state: Literal["received", "withdrawn"],
        reason: str = "",
        at: datetime | None = None,
    ) -> WaiterEvent:
        """Record that the waiter of request `request_id` (`store.derivation.lease`) saw its
        decision (`received`: its approval may run later, for another process) or left without
        one (`withdrawn`: it can no longer be approved)."""
        fields = {"request": request_id, "state": state, "reason": reason}
        return cast(WaiterEvent, self.event("waiter", fields, at))

    def start_approved_attempt(
        self,
        request_id: str,
        attempt: int,
        *,
        idempotency_key: str | None = None,
        now: datetime | None = None,
        at: datetime | None = None,
        lease: Lease | None = None,
    ) -> tuple[Authorization, AttemptEvent | None]:
        """`authorize` and, if ok, record the attempt's start, both under the events lock.

        The attempt carries the request's own step, tool and args (exactly what was
        approved) and references the approval, which from then on counts as used.
        `idempotency_key` defaults to `<mission>/<request>`. Called again with the key
        that used the approval (a resume after a crash between `authorize` and the
        effect), it records nothing and answers `resume`: already authorized for that
        attempt, do not repeat the effect. Another key stays refused as already used.
        """
        moment = self._now(at)
        key = idempotency_key or f"{self.mission}/{request_id}"
        with self.locked(Kind.EVENTS) as log:
            auth = authorize(self.root, self.mission, request_id, now, lease=lease)
            used = auth.used
            if used is not None and used.idempotency_key == key:
                said = (
                    f"already authorized for attempt {used.attempt} under {key} at {used.at}: "
                    "do not repeat the effect; record its outcome"
                )
                return replace(auth, reason=said, resume=True), None
            if not auth.ok or auth.request is None:
                return auth, None
            request = auth.request
            fields = {
                "type": "attempt",
                "actor": self.actor,
                "step": request.step,
                "attempt": attempt,
                "phase": "started",
                "tool": request.tool,
                "args": request.args,
                "idempotency_key": key,
                "approval": request_id,
                "effect_possible": request.risk != "read_only",
            }
            record, _ = log.append(moment, fields)
        self.last_seq[Kind.EVENTS] = record.seq
        return auth, cast(AttemptEvent, record)

    # -- evidence --------------------------------------------------------------------------

    def evidence(
        self,
        step: str,
        observed: str,
        method: str,
        proves: str,
        verdict: Literal["pass", "fail"] = "pass",
        *,
        id: str = "",
        artifact: bytes | str | None = None,
        artifact_name: str | None = None,
        observer: str = "",
        at: datetime | None = None,
    ) -> Evidence:
        """Append one observation; `id` defaults to `ev-<seq>`; `observer` names who made
        it when that was not this writer's actor (a CI job, another agent).

        With `artifact`, its bytes are written (write-once) to `artifacts/<artifact_name>`
        first and the line records `artifact_name` (the path under artifacts/), its sha256
        and size.
        """
        ref: dict[str, Any] | None = None
        if artifact is not None:
            if not artifact_name:
                raise AgentError("an artifact needs a name")
            data = artifact.encode("utf-8") if isinstance(artifact, str) else artifact
            ref = self.write_artifact(artifact_name, data).model_dump()
        fields = {
            "id": id,
            "step": step,
            "observed": observed,
            "method": method,
            "proves": proves,
            "verdict": verdict,
            "artifact": ref,
            "observer": observer or None,
        }
        moment = self._now(at)
        with self.locked(Kind.EVIDENCE) as log:
            record, _ = log.append(moment, fields)
        self.last_seq[Kind.EVIDENCE] = record.seq
        return cast(Evidence, record)

    def write_artifact(self, name: str, data: bytes) -> Artifact:
        """Write `artifacts/<name>` once; the same bytes again are fine, others refused.

        The returned reference's `path` is `name`, relative to the mission's artifacts/."""
        parts = name.split("/")
        if not all(_ARTIFACT_PART.match(part) and ".." not in part for part in parts):
            raise AgentError(f"unsafe artifact name {name!r}")
        relpath = f"{mission_dir(self.mission)}/artifacts/{name}"
        try:
            write_once(self.root / relpath, data)
        except AlreadyExists:
            if confined.read_file(self.root, relpath, len(data)) != data:
                raise AlreadyExists(f"artifacts/{name} exists with other content") from None
        return Artifact(path=name, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))

    # -- plans ------------------------------------------------------------------------------

    def plan_versions(self) -> list[int]:
        """The plan versions on disk, ascending."""
        folder = self.path / "plan"
        found = []
        if folder.is_dir():
            for entry in folder.iterdir():
                match = re.fullmatch(r"v([1-9][0-9]*)\.json", entry.name)
                if match:
                    found.append(int(match.group(1)))
        return sorted(found)

    def write_plan(
        self,
        steps: Sequence[Mapping[str, Any]],
        *,
        version: int | None = None,
        reason: str = "",
        assumptions: Iterable[str] = (),
        expected_evidence: Iterable[str] = (),
        author: str | None = None,
        at: datetime | None = None,
    ) -> Plan:
        """Write plan version `version` (default: the next one). Immutable once written:
        refuses an existing version, and a version whose predecessors are missing."""
        existing = self.plan_versions()
        number = version if version is not None else (existing[-1] + 1 if existing else 1)
        if number < 1:
            raise PlanError("plan versions count from 1")
        if number in existing:
            raise PlanError(f"plan v{number} exists already; plan versions are immutable")
        missing = [v for v in range(1, number) if v not in existing]
        if missing:
            raise PlanError(f"plan v{number} needs v{missing[0]} first: versions are contiguous")
        raw = _normalize(
            {
                "schema": 1,
                "version": number,
                "created_at": rfc3339(self._now(at)),
                "author": author or self.actor,
                "reason": reason,
                "assumptions": list(assumptions),
                "steps": [dict(s) for s in steps],
                "expected_evidence": list(expected_evidence),
            }
        )
        plan = cast(Plan, _validate(Plan, raw, f"plan v{number}"))
        try:
            write_once(self.root / plan_path(self.mission, number), pretty_json(raw))
        except AlreadyExists as exc:
            raise PlanError(f"plan v{number} exists already; plan versions are immutable") from exc
        return plan

    def load_plan(self, version: int) -> Plan:
        loaded = load_document(self.root, plan_path(self.mission, version), Plan)
        if loaded.record is None:
            message = loaded.problems[0].message if loaded.problems else "unreadable"
            raise AgentError(f"plan v{version}: {message}")
        return loaded.record

    # -- approval requests ------------------------------------------------------------------

    def request_approval(
        self,
        request_id: str,
        step: str,
        plan_version: int,
        tool: str,
        args: Mapping[str, Any],
        risk: Risk,
        summary: str = "",
        *,
        expires_at: datetime | None = None,
        valid_for: timedelta | None = None,
        at: datetime | None = None,
    ) -> ApprovalRequest:
        """Write `approvals/<id>.json` once. The step must exist in that plan version.

        `valid_for` sets `expires_at` relative to `requested_at`.
        """
        if not safe_request_id(request_id):
            raise AgentError(f"unsafe request id {request_id!r}")
        plan = self.load_plan(plan_version)
        if step not in {s.id for s in plan.steps}:
            raise AgentError(f"step {step!r} is not in plan v{plan_version}")
        moment = self._now(at)
        if expires_at is None and valid_for is not None:
            expires_at = moment + valid_for
        raw: dict[str, Any] = {
            "schema": 1,
            "id": request_id,
            "step": step,
            "plan_version": plan_version,
            "tool": tool,
            "args": dict(args),
            "risk": risk,
            "summary": summary,
            "requested_by": self.actor,
            "requested_at": rfc3339(moment),
        }
        if expires_at is not None:
            raw["expires_at"] = rfc3339(expires_at)
        raw = _normalize(raw)
        request = cast(ApprovalRequest, _validate(ApprovalRequest, raw, "request"))
        canonical_json(raw)  # must have a digest: refuses what canonical JSON cannot hold
        write_once(self.root / request_path(self.mission, request_id), pretty_json(raw))
        return request

    # -- handoff ----------------------------------------------------------------------------

    def write_handoff(
        self,
        summary: str = "",
        *,
        plan_version: int | None = None,
        current_step: str | None = None,
        verified: Iterable[str] = (),
        blockers: Iterable[str] = (),
        next_steps: Iterable[str] = (),
        resume_after_seq: int | None = None,
        at: datetime | None = None,
    ) -> Handoff:
        """Replace handoff.json atomically; `resume_after_seq` defaults to the last event."""
        if resume_after_seq is None:
            resume_after_seq = self.tail(Kind.EVENTS).seq
        raw: dict[str, Any] = {
            "schema": 1,
            "at": rfc3339(self._now(at)),
            "plan_version": plan_version,
            "current_step": current_step,
            "summary": summary,
            "verified": list(verified),
            "blockers": list(blockers),
            "next_steps": list(next_steps),
            "resume_after_seq": resume_after_seq,
        }
        raw = _normalize({k: v for k, v in raw.items() if v is not None})
        handoff = cast(Handoff, _validate(Handoff, raw, "handoff"))
        final = self.root / doc_path(self.mission, Kind.HANDOFF)
        with _open_folder(final.parent) as fd:
            durable.replace(fd, final.name, pretty_json(raw))
        return handoff
