"""File -> record or Problem. Never raises on file content.

Documents (TOML and JSON) are read whole, under a size cap. Logs (JSONL) are read
incrementally by `LogReader`: only appended bytes are read, an unterminated last
line is held back until its newline arrives, truncation or replacement of the file
is detected, and `seq` contiguity and the sha256 chain are verified as lines arrive.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tomllib
from array import array
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, get_args, get_origin

import jiter
from pydantic import BaseModel, TypeAdapter, ValidationError

from store.format.confined import NotCaptured, Readable, open_file, read_file
from store.format.layout import Kind
from store.format.problems import Problem
from store.format.records import (
    GENESIS,
    Artifact,
    ErrorEvent,
    Event,
    Evidence,
    HaltEvent,
    HeartbeatEvent,
    LogLine,
    StepEvent,
    Timestamp,
    UsageEvent,
    validate,
)

T = TypeVar("T", bound=BaseModel)

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024
MAX_LOG_PROBLEMS = 100
READ_CHUNK = 4 * 1024 * 1024
PROBE_CHUNK = 64 * 1024
"""Reads past the size fstat gave (bytes appended since) take this much at a time: a
READ_CHUNK buffer costs more than reading a small log, and most probes find nothing."""

_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
_JSON_POS = re.compile(r"at line (\d+) column (\d+)")
# Where a number too large for a double (which jiter turns into inf) can hide: an
# exponent of three digits or more, or a run of 200+ digits (2-digit exponents need
# a mantissa of 210+ digits to overflow). Only used to say which line it is on.
_HUGE_NUMBER = re.compile(rb"[eE][+-]?[0-9]{3}|[0-9]{200}")

EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)
EVIDENCE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Evidence)


@dataclass(slots=True)
class Loaded(Generic[T]):
    """The outcome of loading one document: a record, or problems, or both (warnings)."""

    relpath: str
    record: T | None
    raw: dict[str, Any] | None = None
    text: str | None = None
    sha256: str | None = None
    problems: list[Problem] = field(default_factory=list)


def read_bytes(root: Path, relpath: str, cap: int | None = None) -> bytes | Problem:
    """The file's bytes, or a Problem (missing, a symlink, not a regular file, over the cap).

    `cap` defaults to MAX_DOCUMENT_BYTES as it is at call time (tests lower it)."""
    return read_file(root, relpath, MAX_DOCUMENT_BYTES if cap is None else cap)


def decode_utf8(relpath: str, data: bytes) -> str | Problem:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return Problem(
            relpath,
            line,
            "not-utf8",
            f"invalid UTF-8 at byte {exc.start}",
            "save the file as UTF-8",
        )


def parse_json(relpath: str, data: bytes, line: int | None = None) -> Any | Problem:
    """JSON with duplicate keys, NaN/Infinity and runaway nesting rejected."""
    try:
        value = jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)
    except ValueError as exc:
        message = str(exc)
        at = _JSON_POS.search(message)
        where = line if line is not None else (int(at.group(1)) if at else None)
        if not data.strip():
            what = "file is empty" if line is None else "line is empty"
            return Problem(relpath, where, "empty", what, "an agent may be mid-write")
        if "duplicate key" in message:
            hint = "each key may appear once per object"
        elif "recursion limit" in message:
            hint = "the document nests too deeply"
        elif "EOF" in message:
            hint = "the JSON is truncated; an agent may be mid-write"
        else:
            hint = "fix the JSON syntax; NaN and Infinity are not JSON"
        return Problem(relpath, where, "bad-json", f"invalid JSON: {message}", hint)
    if not all_finite(value):
        return out_of_range(relpath, data, line)
    return value


def _quote_shape(model: type[BaseModel]) -> tuple[int, tuple[str, ...]]:
    """Where `model`'s records get their S' (see `plainly_unique`): the count of fields JSON
    can only write as a string (never null, never a number; strict mode reads a time from
    a string only) that a valid record always has, and the optional ones by name."""
    strings = [
        (name, info.is_required())
        for name, info in model.model_fields.items()
        if info.annotation in (str, Timestamp)
        or (
            get_origin(info.annotation) is Literal
            and all(type(value) is str for value in get_args(info.annotation))
        )
    ]
    return sum(required for _, required in strings), tuple(n for n, r in strings if not r)


# Log line models with no free-form object (attempt `args` may hold anything).
_QUOTE_SHAPES: dict[type[BaseModel], tuple[int, tuple[str, ...]]] = {
    model: _quote_shape(model)
    for model in (StepEvent, UsageEvent, HeartbeatEvent, ErrorEvent, HaltEvent, Evidence, Artifact)
}


def plainly_unique(line: bytes, record: BaseModel) -> bool:
    """True when a validated log line certainly has no duplicate key, without parsing it.

    Sound for any input: every `"` in JSON delimits a string or is escaped inside one, so
    a line with K keys and S string values holds at least 2(K + S) quotes. The record
    shows D distinct keys (the fields given) and S' values JSON can only write as strings;
    when the line holds exactly 2(D + S') quotes, K + S <= D + S', and as K >= D and
    S >= S', K = D: no key repeats. Attempts (free-form `args`), unknown fields and lines
    whose counts differ (a string holding a quote, a string in an optional field) get
    False and take the full parse (jiter, which names the duplicate). Parsing every line
    instead costs a scan a third more instructions per line (docs/architecture.md).
    """
    return line.count(b'"') == _quotes(record)


def _quotes(record: BaseModel) -> int | None:
    """2(D + S') for `record` and the record nested in it (see `plainly_unique`), or None."""
    shape = _QUOTE_SHAPES.get(type(record))
    if shape is None or record.__pydantic_extra__:
        return None
    given = record.__pydantic_fields_set__
    shown, optional = shape
    for name in optional:
        shown += name in given
    count = 2 * (len(given) + shown)
    if type(record) is Evidence and record.artifact is not None:
        nested = _quotes(record.artifact)
        return None if nested is None else count + nested
    return count


def all_finite(value: Any) -> bool:
    """False if a float anywhere in `value` is NaN or infinite (jiter reads 1e400 as inf)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return False
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return True


def out_of_range(relpath: str, data: bytes, line: int | None) -> Problem:
    if line is None:
        at = _HUGE_NUMBER.search(data)
        line = data[: at.start()].count(b"\n") + 1 if at else None
    return Problem(
        relpath,
        line,
        "bad-json",
        "invalid JSON: a number is too large (it would be Infinity)",
        "use finite numbers; NaN and Infinity are not JSON",
    )


def parse_toml(relpath: str, text: str) -> dict[str, Any] | Problem:
    try:
        value = tomllib.loads(text, parse_float=_finite_float)
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_POS.search(str(exc))
        return Problem(
            relpath,
            int(at.group(1)) if at else None,
            "bad-toml",
            f"invalid TOML: {exc}",
            "fix the TOML syntax at that line (see https://toml.io)",
        )
    except ValueError as exc:
        return Problem(relpath, None, "bad-toml", f"invalid TOML: {exc}", "use finite numbers")
    except RecursionError:
        return Problem(
            relpath, None, "bad-toml", "invalid TOML: nested too deeply", "flatten the document"
        )
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("nan and inf are not allowed")
    return value


def validation_problems(
    relpath: str, error: ValidationError, line: int | None = None
) -> list[Problem]:
    """One Problem per pydantic error, naming the field."""
    problems = []
    for item in error.errors(include_url=False):
        loc = ".".join(str(part) for part in item["loc"]) or "(record)"
        problems.append(
            Problem(
                relpath,
                line,
                "schema",
                f"{loc}: {item['msg']}",
                "see docs/format.md for the fields and their types",
            )
        )
    return problems


def unknown_field_problems(relpath: str, record: BaseModel, line: int | None) -> list[Problem]:
    """Warnings for fields the format does not define, at any depth."""
    found: list[str] = []
    _collect_extra(record, "", found)
    return [
        Problem(
            relpath,
            line,
            "unknown-field",
            f"unknown field {name!r}",
            "check the spelling against docs/format.md; unknown fields are ignored",
            "warn",
        )
        for name in found
    ]


def _collect_extra(value: BaseModel, prefix: str, found: list[str]) -> None:
    found.extend(prefix + name for name in value.__pydantic_extra__ or ())
    for name, item in value.__dict__.items():  # the fields, in order
        if isinstance(item, BaseModel):
            _collect_extra(item, f"{prefix}{name}.", found)
        elif isinstance(item, list) and item and isinstance(item[0], BaseModel):
            for element in item:
                _collect_extra(element, f"{prefix}{name}.", found)


Known = Mapping[str, tuple[type[BaseModel], Loaded[Any]]]
"""Documents already parsed, by path: the model each was loaded as, and what it loaded as."""
_KNOWN: ContextVar[tuple[str, Known, dict[str, Any]] | None] = ContextVar("known", default=None)


@contextmanager
def known_documents(root: Path, known: Known, fresh: dict[str, Any]) -> Iterator[None]:
    """While in effect (in this context only), `load_document` of a path of `root` that
    `known` holds, as the same model, gives what it holds instead of reading the file:
    the caller vouches that the file is what it was parsed from (`store.cache.documents`);
    a document read from its file puts its parsed value in `fresh`, by path (for the
    cache, after its holder let it go)."""
    token = _KNOWN.set((str(root), known, fresh))
    try:
        yield
    finally:
        _KNOWN.reset(token)


def load_document(root: Path, relpath: str, model: type[T]) -> Loaded[T]:
    """Load a `.toml` or `.json` document as `model`, or say what is wrong."""
    known = _KNOWN.get()
    if known is not None and known[0] == str(root):
        found = known[1].get(relpath)
        if found is not None and found[0] is model:
            return found[1]
    data = read_bytes(root, relpath)
    if isinstance(data, Problem):
        return Loaded(relpath, None, problems=[data])
    loaded = parse_document(relpath, data, model)
    if known is not None and known[0] == str(root) and loaded.raw is not None:
        known[2][relpath] = loaded.raw
    return loaded


def parse_document(relpath: str, data: bytes, model: type[T]) -> Loaded[T]:
    """A document's bytes (`.toml` or `.json`, by `relpath`) as `model`, or what is wrong."""
    digest = hashlib.sha256(data).hexdigest()
    text = decode_utf8(relpath, data)
    if isinstance(text, Problem):
        return Loaded(relpath, None, sha256=digest, problems=[text])
    if not text.strip():
        empty = Problem(relpath, None, "empty", "file is empty", "an agent may be mid-write")
        return Loaded(relpath, None, text=text, sha256=digest, problems=[empty])
    is_toml = relpath.endswith(".toml")
    parsed = parse_toml(relpath, text) if is_toml else parse_json(relpath, data)
    if isinstance(parsed, Problem):
        return Loaded(relpath, None, text=text, sha256=digest, problems=[parsed])
    if not isinstance(parsed, dict):
        problem = Problem(relpath, 1, "schema", "top level must be an object", "")
        return Loaded(relpath, None, text=text, sha256=digest, problems=[problem])
    try:
        record = validate(model, parsed) if is_toml else model.model_validate_json(data)
    except ValidationError as exc:
        problems = validation_problems(relpath, exc)
        return Loaded(relpath, None, raw=parsed, text=text, sha256=digest, problems=problems)
    problems = unknown_field_problems(relpath, record, None)
    return Loaded(relpath, record, raw=parsed, text=text, sha256=digest, problems=problems)


def verify_prefix(
    opened: Readable, length: int, digest: str, start: int = 0, whole: Any = None
) -> bool:
    """True when the file's bytes [start, length) still hash to `digest` (IO: off the
    event loop); `whole`, a sha256 object, is fed them too."""
    hashed = sha256()
    offset = start
    while offset < length and (chunk := opened.pread(min(READ_CHUNK, length - offset), offset)):
        hashed.update(chunk)
        if whole is not None:
            whole.update(chunk)
        offset += len(chunk)
    return offset == length and hashed.hexdigest() == digest


def check_history(root: Path, relpath: str) -> Problem | None:
    """What keeps a kept revision (`history/*.toml`) from being read as TOML, if anything."""
    data = read_bytes(root, relpath)
    if isinstance(data, Problem):
        return data
    text = decode_utf8(relpath, data)
    if isinstance(text, Problem):
        return text
    parsed = parse_toml(relpath, text)
    return parsed if isinstance(parsed, Problem) else None


# ---- logs ---------------------------------------------------------------------------------


@dataclass(slots=True)
class LogBatch:
    """What one `LogReader.poll` found: new records and new problems.

    `reset` is True when the file was truncated or replaced and the reader started
    again from the top: callers drop what they had from this log first.
    """

    records: list[Any] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    reset: bool = False
    notice: Problem | None = None
    """Why the reader started again (`log-truncated`, `log-replaced`, `log-rewritten`): an
    event seen while watching, not a problem of the bytes (a fresh read cannot see it)."""


def log_adapter(kind: Kind) -> TypeAdapter[Any]:
    return EVENT_ADAPTER if kind is Kind.EVENTS else EVIDENCE_ADAPTER


class LogReader:
    """Incremental reader of one hash-chained JSONL log.

    Keyed by inode and offset. Each `poll` reads only bytes appended since the last
    one. Records go to `on_record(record, line_no)` when given (so a huge log is
    never held in memory), else into the batch. `line_starts` indexes each line's
    byte offset so a viewer can read any window of the log again (`read_window`).
    An unterminated last line is held back (and reported as a warning) until its
    newline arrives. After the first broken chain link or seq gap the reader
    keeps reading records but does not report every later line again.
    """

    def __init__(
        self,
        root: Path,
        relpath: str,
        kind: Kind,
        on_record: Callable[[Any, int], None] | None = None,
        on_reset: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.relpath = relpath
        self.adapter = log_adapter(kind)
        self.validate = self.adapter.validator.validate_json
        self.on_record = on_record
        self.on_reset = on_reset
        self.generation = 0
        """How many times the reader started again from the top."""
        self._reset_state()

    def _reset_state(self) -> None:
        self.inode: int | None = None
        self.offset = 0
        self.line_no = 0
        self.last_seq = 0
        self.last_hash = GENESIS
        self.partial = b""
        self.oversized: Any = None  # sha256 of an over-long line, fed until its newline
        self.oversized_start = 0
        self.line_starts = array("Q")
        self.chain_broken_at: int | None = None
        self.unverified_from: int | None = None
        """The first line the hash chain no longer vouches for, None while it holds: the
        line before the one whose `prev` does not match (its bytes are not what the next
        line chained), so it and every later line are unverified (`vouches_for`)."""
        self.seq_broken_at: int | None = None
        self.problems: list[Problem] = []
        self.digest = sha256()
        """sha256 of every byte read, [0, offset): what `verify_prefix` compares."""
        self.mtime_ns = 0
        self.verified: tuple[int, int, int] | None = None
        """(inode, size, mtime_ns) when the bytes read were last found unchanged on disk."""
        self.rewrite_seen = False
        """Bytes before `offset` changed (seen by `verify_prefix`): start again."""
        self.trusted: tuple[int, str] | None = None
        """(length, sha256) of a prefix taken on trust (`resume`), not read here: `digest`
        covers only the bytes after it, until the scrub hashes the prefix again."""

    def resume(
        self,
        inode: int,
        mtime_ns: int,
        offset: int,
        lines: int,
        last_seq: int,
        head: str,
        digest: str,
        line_starts: array[int],
    ) -> None:
        """Start at the end of a prefix verified before (`store.cache`): `lines` clean
        lines in `offset` bytes hashing to `digest`, the last one to `head`. The next
        poll reads from there; the prefix is `trusted` until `confirm`."""
        self._reset_state()
        self.inode, self.mtime_ns, self.offset = inode, mtime_ns, offset
        self.line_no, self.last_seq, self.last_hash = lines, last_seq, head
        self.line_starts = line_starts
        self.trusted = (offset, digest)

    def spans(self) -> list[tuple[int, int, str]]:
        """(start, end, sha256) of the bytes read: one span, or two after `resume` (the
        trusted prefix, then what was read since)."""
        whole = (0, self.offset, self.digest.copy().hexdigest())
        if self.trusted is None:
            return [whole]
        length, digest = self.trusted
        return [(0, length, digest), (length, self.offset, whole[2])]

    def intact(self, opened: Readable) -> bool:
        """True when the bytes read are still on disk, byte for byte (IO)."""
        return all(verify_prefix(opened, end, digest, start) for start, end, digest in self.spans())

    def confirm(self, offset: int, digest: Any) -> None:
        """The scrub hashed the whole prefix again, [0, `offset`) to the sha256 object
        `digest`: nothing is taken on trust any more (if nothing was read since)."""
        if self.trusted is not None and offset == self.offset:
            self.trusted = None
            self.digest = digest

    def _restart(self) -> None:
        self.generation += 1
        self._reset_state()
        if self.on_reset is not None:
            self.on_reset()

    @property
    def file_problems(self) -> tuple[Problem, ...]:
        """The problems of the file itself, no line's (it is not read: not a regular
        file, a symlink, unreadable), which stand until it can be read."""
        return tuple(problem for problem in self.problems if problem.line is None)

    @property
    def pending_problem(self) -> Problem | None:
        """A warning while a last line is unterminated (an agent may be mid-write)."""
        if self.oversized is not None:
            held = f"over {MAX_LINE_BYTES:,} bytes so far"
        elif self.partial:
            held = f"{len(self.partial)} bytes held back"
        else:
            return None
        return Problem(
            self.relpath,
            self.line_no + 1,
            "unterminated-line",
            f"last line has no newline yet ({held})",
            "an agent may be mid-write; if it crashed, its last line is incomplete",
            "warn",
        )

    def poll(self) -> LogBatch:
        """Read what was appended since the last poll.

        A log that cannot be opened as a regular file (a symlink, a FIFO, a folder, no
        permission) is dropped and its Problem stands until it can be read again, then
        goes."""
        batch = LogBatch()
        opened = open_file(self.root, self.relpath)
        if isinstance(opened, Problem):
            batch.reset = self.inode is not None
            if batch.reset or self.problems:
                self._restart()
            if opened.code != "missing":
                self.problems.append(opened)
                batch.problems.append(opened)
            return batch
        if self.inode is None and self.problems:  # the last poll could not open it: its
            self._restart()  # problem goes now that it can be read
            batch.reset = True
        with opened:
            try:
                self._read_from(opened, batch)
            except NotCaptured:
                pass  # replaced while read ahead from its old end: the next step reads it
            except OSError as exc:
                problem = Problem(self.relpath, None, "unreadable", f"cannot read: {exc}", "")
                self._report(batch, [problem])
        return batch

    def resume_offset(self, info: os.stat_result) -> int:
        """Where the next poll starts reading a log of this `fstat`: at the last complete
        line (to see that it is still there), or 0 when the log is new, shrank, was
        replaced or rewritten."""
        if (
            self.inode is None
            or info.st_ino != self.inode
            or info.st_size < self.offset
            or self.rewrite_seen
        ):
            return 0
        return self.line_starts[-1] if self.line_starts else self.offset

    @property
    def held_back(self) -> int:
        """Bytes from the last complete line's start to where reading goes on: a poll
        reads them again (to see the line is still there) before any new byte."""
        return self.offset - self.line_starts[-1] if self.line_starts else 0

    def _read_from(self, opened: Readable, batch: LogBatch) -> None:
        info = opened.info
        truncated = info.st_size < self.offset
        replaced = self.inode is not None and (
            info.st_ino != self.inode or (not truncated and self._rewritten(opened))
        )
        if self.inode is not None and (replaced or truncated or self.rewrite_seen):
            code, message = (
                ("log-rewritten", "bytes already read were changed in place")
                if self.rewrite_seen
                else ("log-replaced", "log was replaced")
                if replaced
                else ("log-truncated", "log shrank (truncated)")
            )
            self._restart()
            batch.reset = True
            batch.notice = Problem(
                self.relpath,
                None,
                code,
                f"{message}; read again from the start",
                "logs are append-only: an agent must never rewrite or truncate one",
                "warn",
            )
        self.inode, self.mtime_ns = info.st_ino, info.st_mtime_ns
        seen = info.st_size - self.offset  # what fstat saw; then read on to the end
        while chunk := opened.pread(
            min(READ_CHUNK, seen if seen > 0 else PROBE_CHUNK), self.offset
        ):
            seen -= len(chunk)
            self.offset += len(chunk)
            self.digest.update(chunk)
            self._feed(chunk, batch)

    def needs_verifying(self, info: os.stat_result) -> bool:
        """True when a log of this `fstat` changed without growing (same size, another
        mtime): bytes already read may have changed, so `verify_prefix` runs at once."""
        return (
            info.st_ino == self.inode
            and info.st_size == self.offset
            and info.st_mtime_ns != self.mtime_ns
        )

    def _rewritten(self, opened: Readable) -> bool:
        """True when the last complete line read is no longer there, byte for byte: the
        log was rewritten in place, or replaced by a new file that reused the inode."""
        if not self.line_starts:
            return False
        start = self.line_starts[-1]
        end = (
            self.oversized_start if self.oversized is not None else self.offset - len(self.partial)
        )
        if end - start > MAX_LINE_BYTES + 1:  # an over-long line: not worth reading again
            return False
        data = opened.pread(end - start, start)
        return data[-1:] != b"\n" or sha256(data[:-1]).hexdigest() != self.last_hash

    def _feed(self, chunk: bytes, batch: LogBatch) -> None:
        start = self.offset - len(chunk) - len(self.partial)
        data = self.partial + chunk if self.partial else chunk
        lines = data.split(b"\n")
        self.partial = lines.pop()
        rest = iter(lines)
        if self.oversized is not None and lines:  # an over-long line ends here
            end = next(rest)
            self.oversized.update(end)
            self.line_starts.append(self.oversized_start)
            self._too_long(self.oversized.hexdigest(), batch)
            self.oversized = None
            start += len(end) + 1
        start = self._lines(rest, start, batch)
        if self.oversized is not None:
            self.oversized.update(self.partial)
            self.partial = b""
        elif len(self.partial) > MAX_LINE_BYTES:  # hash it as it comes, hold none of it
            self.oversized = sha256(self.partial)
            self.oversized_start = start
            self.partial = b""

    def _lines(self, lines: Iterator[bytes], start: int, batch: LogBatch) -> int:
        """Check complete lines (JSON, schema, seq, chain); returns the offset after them.

        The common line, with nothing to report, is checked here; any other line goes to
        `_irregular`.
        """
        for line in lines:
            self.line_starts.append(start)
            start += len(line) + 1
            if len(line) > MAX_LINE_BYTES:
                self._too_long(sha256(line).hexdigest(), batch)
                continue
            self.line_no += 1
            digest = sha256(line).hexdigest()
            prev, self.last_hash = self.last_hash, digest
            try:
                record = self.validate(line)
            except ValidationError as exc:  # not kept past this block: it holds this frame
                self._invalid(line, exc, batch)
                continue
            if (
                record.prev == prev
                and record.seq == self.last_seq + 1
                and self.line_no > 1
                and plainly_unique(line, record)
            ):
                self.last_seq += 1
                self._deliver(record, batch)
            elif self._irregular(line, record, prev, batch):
                self._deliver(record, batch)
        return start

    def _deliver(self, record: Any, batch: LogBatch) -> None:
        if self.on_record is None:
            batch.records.append(record)
        else:
            self.on_record(record, self.line_no)

    def _too_long(self, digest: str, batch: LogBatch) -> None:
        """A line over MAX_LINE_BYTES: not parsed, counted as one seq; the chain goes on."""
        self.line_no += 1
        self.last_hash = digest
        self.last_seq += 1
        self._problem(
            batch,
            "line-too-long",
            f"line over {MAX_LINE_BYTES:,} bytes; not read",
            "keep log lines small: large outputs belong under artifacts/",
        )

    def _problem(self, batch: LogBatch, code: str, message: str, hint: str) -> None:
        self._report(batch, [Problem(self.relpath, self.line_no, code, message, hint)])

    def _report(self, batch: LogBatch, problems: list[Problem]) -> None:
        """Record problems, at most MAX_LOG_PROBLEMS per log, then one summary."""
        for problem in problems:
            if len(self.problems) < MAX_LOG_PROBLEMS:
                self.problems.append(problem)
                batch.problems.append(problem)
            elif len(self.problems) == MAX_LOG_PROBLEMS:
                more = Problem(
                    self.relpath,
                    problem.line,
                    "too-many-problems",
                    f"more than {MAX_LOG_PROBLEMS} problems; later ones are not listed",
                    "fix the first ones and re-run",
                )
                self.problems.append(more)
                batch.problems.append(more)

    def _irregular(self, line: bytes, record: LogLine, expected_prev: str, batch: LogBatch) -> bool:
        """Report what is wrong with a schema-valid line (or say the first line lacks its
        schema marker); False when it is not a record."""
        if not plainly_unique(line, record):  # the rare line that needs the full parse
            parsed = parse_json(self.relpath, line, self.line_no)
            if isinstance(parsed, Problem) or not all_finite(parsed):
                bad = parsed if isinstance(parsed, Problem) else None
                self._report(batch, [bad or out_of_range(self.relpath, line, self.line_no)])
                self._advance_seq(record.seq, batch)
                return False
        if record.__pydantic_extra__:
            self._report(batch, unknown_field_problems(self.relpath, record, self.line_no))
        if self.line_no == 1 and record.schema_version != 1:
            self._problem(batch, "schema", 'first line lacks "schema": 1', 'add "schema": 1')
        if record.prev != expected_prev and self.chain_broken_at is None:
            self._chain_broken(record.seq, batch)
        seq = record.seq
        if seq == self.last_seq + 1:
            self.last_seq = seq
        else:
            self._advance_seq(seq, batch)
        return True

    def _invalid(self, line: bytes, error: ValidationError, batch: LogBatch) -> None:
        """A line the schema refused: say why (bad JSON first), and keep counting seq."""
        parsed = parse_json(self.relpath, line, self.line_no)
        if isinstance(parsed, Problem):
            self._report(batch, [parsed])
        elif type(parsed) is not dict:
            self._problem(batch, "schema", "a log line must be a JSON object", "")
        else:
            self._report(batch, validation_problems(self.relpath, error, self.line_no))
            self._advance_seq(parsed.get("seq"), batch)

    def _chain_broken(self, seq: int, batch: LogBatch) -> None:
        self.chain_broken_at = seq
        self.unverified_from = max(1, self.line_no - 1)
        self._problem(
            batch,
            "chain-broken",
            f"hash chain broken at seq {seq}: prev does not match line {self.line_no - 1}"
            f" (lines {self.unverified_from} on are unverified)"
            if self.line_no > 1
            else f"hash chain broken at seq {seq}: first line's prev must be 64 zeros"
            " (every line is unverified)",
            "a line before this one was edited or removed; logs are append-only",
        )

    def vouches_for(self, line: int) -> bool:
        """Whether the hash chain vouches for line `line` (1-based) as it was read."""
        return self.unverified_from is None or line < self.unverified_from

    def _advance_seq(self, seq: object, batch: LogBatch) -> None:
        if not isinstance(seq, int) or isinstance(seq, bool):
            return
        if seq != self.last_seq + 1 and self.seq_broken_at is None:
            self.seq_broken_at = seq
            self._problem(
                batch,
                "seq-gap",
                f"seq {seq} follows seq {self.last_seq}; expected {self.last_seq + 1}",
                "seq must count 1, 2, 3 ... with no gaps or repeats",
            )
        self.last_seq = seq

    def read_window(self, first: int, count: int) -> list[tuple[int, Any]]:
        """Lines `first`..`first+count-1` (0-based) as (line_no, record or Problem)."""
        span = self.window(first, count)
        return span.read() if span is not None else []

    def window(self, first: int, count: int) -> Window | None:
        """Where lines `first`..`first+count-1` are in the file (no IO: a `Window` reads
        them, off the event loop); None when there are none."""
        stop = min(first + count, len(self.line_starts))
        if first >= stop:
            return None
        if stop < len(self.line_starts):
            end = self.line_starts[stop]
        elif self.oversized is not None:  # up to the end of the last complete line
            end = self.oversized_start
        else:
            end = self.offset - len(self.partial)
        return Window(
            self.root, self.relpath, self.adapter, first, stop - first, self.line_starts[first], end
        )


@dataclass(frozen=True, slots=True)
class Window:
    """A run of complete log lines by their byte span, to read (IO) where it suits."""

    root: Path
    relpath: str
    adapter: TypeAdapter[Any]
    first: int
    count: int
    start: int
    end: int

    def read(self) -> list[tuple[int, Any]]:
        """The lines as (line_no, record or Problem); [] if the file cannot be read."""
        opened = open_file(self.root, self.relpath)
        if isinstance(opened, Problem):
            return []
        with opened:
            try:
                data = opened.pread(self.end - self.start, self.start)
            except (OSError, NotCaptured):
                return []
        lines = data.split(b"\n")[: self.count]
        return [
            (self.first + n, self._record(line, self.first + n)) for n, line in enumerate(lines, 1)
        ]

    def _record(self, line: bytes, line_no: int) -> Any:
        """The line's record or its Problem, found as `LogReader` finds it: validated first,
        fully parsed only when refused or when it may hold a duplicate key
        (`plainly_unique`)."""
        if len(line) > MAX_LINE_BYTES:
            too_long = f"line over {MAX_LINE_BYTES:,} bytes; not read"
            return Problem(self.relpath, line_no, "line-too-long", too_long, "")
        try:
            record = self.adapter.validate_json(line)
        except ValidationError as exc:
            parsed = parse_json(self.relpath, line, line_no)
            if isinstance(parsed, Problem):
                return parsed
            return validation_problems(self.relpath, exc, line_no)[0]
        if plainly_unique(line, record):
            return record
        parsed = parse_json(self.relpath, line, line_no)
        return parsed if isinstance(parsed, Problem) else record
