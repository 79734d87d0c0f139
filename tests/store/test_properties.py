"""Properties (hypothesis): loaders never raise; chunked log reads equal whole reads."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import jiter
import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import store.format.load
from store.derivation.derive import budget_use
from store.format.layout import Kind
from store.format.load import LogReader, load_document
from store.format.problems import Problem
from store.format.records import (
    GENESIS,
    ApprovalRequest,
    Constraints,
    Decision,
    Handoff,
    Intent,
    Plan,
    Settings,
)
from store.index.workspace import Workspace
from tests.factory import T0, chain, mission, stamp

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DOCUMENTS: list[tuple[str, type[Any]]] = [
    ("hud.toml", Settings),
    ("missions/m/intent.toml", Intent),
    ("missions/m/constraints.toml", Constraints),
    ("missions/m/history/intent.r1.toml", Intent),
    ("missions/m/plan/v1.json", Plan),
    ("missions/m/approvals/r1.json", ApprovalRequest),
    ("missions/m/approvals/r1.toml", Decision),
    ("missions/m/handoff.json", Handoff),
]
LOGS = [("missions/m/events.jsonl", Kind.EVENTS), ("missions/m/evidence.jsonl", Kind.EVIDENCE)]


@contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def put(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def check_loaded(loaded: Any) -> None:
    assert all(isinstance(p, Problem) for p in loaded.problems)
    if loaded.record is None:
        assert any(p.severity == "error" for p in loaded.problems)


# ---- arbitrary input never raises ------------------------------------------------------

FIELDS = sorted(
    {name for _, model in DOCUMENTS for name in model.model_fields}
    | {"schema", "steps", "budget", "args", "x"}
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["2025-01-01T00:00:00Z", "approve", "reject", "read_only", "running"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=20,
)
json_objects = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=8)


@FAST
@given(data=st.binary(max_size=300), which=st.sampled_from(DOCUMENTS))
def test_arbitrary_bytes_into_load_document(data: bytes, which: tuple[str, type[Any]]) -> None:
    relpath, model = which
    with scratch() as root:
        put(root, relpath, data)
        check_loaded(load_document(root, relpath, model))


@FAST
@given(text=st.text(max_size=200), which=st.sampled_from(DOCUMENTS))
def test_arbitrary_text_into_load_document(text: str, which: tuple[str, type[Any]]) -> None:
    relpath, model = which
    with scratch() as root:
        put(root, relpath, text.encode("utf-8", "surrogatepass"))
        check_loaded(load_document(root, relpath, model))


@FAST
@given(value=json_objects, which=st.sampled_from(DOCUMENTS))
def test_arbitrary_objects_into_load_document(
    value: dict[str, Any], which: tuple[str, type[Any]]
) -> None:
    relpath, model = which
    if relpath.endswith(".toml"):
        try:
            data = tomli_w.dumps(value).encode()
        except (TypeError, ValueError):
            data = json.dumps(value).encode()  # not TOML-able: a syntax error then
    else:
        data = json.dumps(value).encode()  # NaN and Infinity included
    with scratch() as root:
        put(root, relpath, data)
        loaded = load_document(root, relpath, model)
        check_loaded(loaded)
        if loaded.raw is not None:
            assert all_finite(loaded.raw)


def all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(all_finite(v) for v in value)
    return True


@FAST
@given(
    pieces=st.lists(st.binary(max_size=80), max_size=6),
    which=st.sampled_from(LOGS),
)
def test_arbitrary_bytes_into_log_reader(pieces: list[bytes], which: tuple[str, Kind]) -> None:
    relpath, kind = which
    with scratch() as root:
        put(root, relpath, b"")
        reader = LogReader(root, relpath, kind)
        for piece in pieces:
            with open(root / relpath, "ab") as handle:
                handle.write(piece)
            batch = reader.poll()
            assert all(isinstance(p, Problem) for p in batch.problems)
        reader.read_window(0, 100)
        assert reader.offset == sum(len(p) for p in pieces)


@FAST
@given(lines=st.lists(json_objects, max_size=5), which=st.sampled_from(LOGS))
def test_arbitrary_objects_into_log_reader(
    lines: list[dict[str, Any]], which: tuple[str, Kind]
) -> None:
    relpath, kind = which
    with scratch() as root:
        put(root, relpath, b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        reader = LogReader(root, relpath, kind)
        batch = reader.poll()
        assert len(batch.records) + len({p.line for p in batch.problems}) >= len(lines)
        assert reader.line_no == len(lines)


# ---- the whole workspace never raises on mangled files ----------------------------------

MANGLED = [
    "missions/m/intent.toml",
    "missions/m/constraints.toml",
    "missions/m/plan/v1.json",
    "missions/m/approvals/r1.json",
    "missions/m/approvals/r1.toml",
    "missions/m/handoff.json",
    "missions/m/events.jsonl",
    "missions/m/evidence.jsonl",
]


def build_valid(root: Path) -> None:
    built = mission(root, "m")
    built.step("s1", "running")
    built.usage(1.0, 100, 1)
    built.succeed("s1")
    built.request("r1")
    built.decision("r1")
    built.handoff(plan_version=1)


@st.composite
def mangles(draw: st.DrawFn) -> list[tuple[str, str, int, bytes]]:
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        edits.append(
            (
                draw(st.sampled_from(MANGLED)),
                draw(st.sampled_from(["cut", "insert", "replace"])),
                draw(st.integers(0, 400)),
                draw(st.binary(min_size=1, max_size=6) | st.sampled_from([b"1e999", b'"', b"\n"])),
            )
        )
    return edits


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=mangles())
def test_mangled_mission_never_crashes_the_workspace(
    edits: list[tuple[str, str, int, bytes]],
) -> None:
    with scratch() as root:
        build_valid(root)
        for rel, how, where, data in edits:
            path = root / rel
            old = path.read_bytes()
            at = where % (len(old) + 1)
            if how == "cut":
                new = old[:at]
            elif how == "insert":
                new = old[:at] + data + old[at:]
            else:
                new = old[:at] + data + old[at + len(data) :]
            path.write_bytes(new)
        workspace = Workspace(root, clock=lambda: T0 + timedelta(minutes=5))
        workspace.scan()
        problems = workspace.problems()
        assert all(isinstance(p, Problem) for p in problems)
        for mission_id, state in workspace.missions.items():
            workspace.status(mission_id)
            budget_use(state, T0)
            for request_id in state.requests:
                workspace.request_status(mission_id, request_id)
            for reader in (state.events, state.evidence):
                if reader is not None:
                    reader.read_window(0, 50)


# ---- chunked reads equal whole reads ---------------------------------------------------

texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30
)  # any character, newlines included (JSON escapes them)


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    """A valid events log, sometimes with a damaged line or an unterminated end."""
    records: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["step", "usage", "heartbeat", "error"]))
        base = {"at": stamp(T0 + timedelta(seconds=n)), "type": kind, "actor": draw(texts)}
        if kind == "step":
            base |= {"step": "s1", "plan_version": 1, "state": "running", "reason": draw(texts)}
        elif kind == "usage":
            base |= {"usd": n * 0.5, "tokens": n, "steps": n}
        elif kind == "error":
            base |= {"message": draw(texts)}
        records.append(base)
    data = chain(records)
    if data and draw(st.booleans()):  # damage: flip one byte somewhere
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :]
    if data and draw(st.booleans()):  # an agent mid-write
        data = data[: draw(st.integers(0, len(data)))]
    return data


def read_whole(root: Path, rel: str, data: bytes) -> tuple[list[Any], list[Problem], Any]:
    put(root, rel, data)
    reader = LogReader(root, rel, Kind.EVENTS)
    batch = reader.poll()
    return [r.model_dump() for r in batch.records], batch.problems, reader.pending_problem


def read_chunked(
    root: Path, rel: str, data: bytes, cuts: list[int]
) -> tuple[list[Any], list[Problem], Any]:
    put(root, rel, b"")
    reader = LogReader(root, rel, Kind.EVENTS)
    records: list[Any] = []
    problems: list[Problem] = []
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    for start, end in itertools.pairwise(bounds):
        with open(root / rel, "ab") as handle:
            handle.write(data[start:end])
        batch = reader.poll()
        assert not batch.reset
        records.extend(r.model_dump() for r in batch.records)
        problems.extend(batch.problems)
    return records, problems, reader.pending_problem


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=logs(), cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_chunked_log_reads_equal_a_whole_read(data: bytes, cuts: list[int]) -> None:
    with scratch() as root:
        whole = read_whole(root / "a", "events.jsonl", data)
        chunked = read_chunked(root / "b", "events.jsonl", data, cuts)
    assert chunked[0] == whole[0]
    assert chunked[1] == whole[1]
    assert chunked[2] == whole[2]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=logs(), cuts=st.lists(st.integers(0, 10_000), max_size=12), cap=st.integers(60, 250))
def test_chunked_reads_equal_whole_reads_with_over_long_lines(
    data: bytes, cuts: list[int], cap: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store.format.load, "MAX_LINE_BYTES", cap)
        with scratch() as root:
            whole = read_whole(root / "a", "events.jsonl", data)
            chunked = read_chunked(root / "b", "events.jsonl", data, cuts)
    assert chunked[0] == whole[0]
    assert chunked[1] == whole[1]


@FAST
@given(data=logs(), chunk=st.integers(1, 64))
def test_read_chunk_size_does_not_matter(data: bytes, chunk: int) -> None:
    with scratch() as root:
        whole = read_whole(root / "a", "events.jsonl", data)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(store.format.load, "READ_CHUNK", chunk)
            small = read_whole(root / "b", "events.jsonl", data)
    assert small == whole


# ---- the duplicate-key shortcut is sound -------------------------------------------------

Pairs = list[tuple[str, Any]]
"""A JSON object as written: its keys in order, repeats allowed; a nested object is Pairs."""


@st.composite
def log_objects(draw: st.DrawFn) -> tuple[Kind, Pairs]:
    """A schema-valid log line of any kind but attempt, as key-value pairs."""
    step = draw(st.text(min_size=1, max_size=8) | st.sampled_from(["s1", 'a"b', "c\\d"]))
    line: Pairs = [("seq", 2), ("at", stamp(T0)), ("prev", "0" * 64)]
    kind = draw(st.sampled_from(["step", "usage", "heartbeat", "error", "halt", "evidence"]))
    if kind == "evidence":
        line += [("id", "e1"), ("step", step), ("observed", draw(texts)), ("method", "m")]
        line += [("proves", "p"), ("verdict", "pass")]
        if draw(st.booleans()):
            path = draw(st.text(min_size=1, max_size=8))
            artifact: Pairs = [("path", path), ("sha256", "0" * 64), ("bytes", 3)]
            line.append(("artifact", artifact))
        return Kind.EVIDENCE, line
    line += [("type", kind), ("actor", draw(texts))]
    if kind == "step":
        line += [("step", step), ("plan_version", 1), ("state", "running")]
        if draw(st.booleans()):
            line.append(("reason", draw(texts)))
    elif kind == "usage":
        line += [("usd", draw(st.sampled_from([0, 1.5]))), ("tokens", 3), ("steps", 1)]
    elif kind == "error":
        line += [("message", draw(texts)), ("step", draw(st.none() | st.just(step)))]
    elif kind == "halt":
        line.append(("reason", draw(texts)))
    return Kind.EVENTS, line


def repeat_a_key(pairs: Pairs, draw: st.DrawFn) -> Pairs:
    """`pairs` with one key written twice (same value), here or in the nested object."""
    index = draw(st.integers(0, len(pairs) - 1))
    key, value = pairs[index]
    if isinstance(value, list) and value and draw(st.booleans()):  # (`{}` has no key)
        return [*pairs[:index], (key, repeat_a_key(value, draw)), *pairs[index + 1 :]]
    at = draw(st.integers(0, len(pairs)))
    return [*pairs[:at], (key, value), *pairs[at:]]


def add_unknown(pairs: Pairs, draw: st.DrawFn) -> Pairs:
    """`pairs` with a field the format does not define, here or in the nested object."""
    for index, (key, value) in enumerate(pairs):
        if isinstance(value, list) and draw(st.booleans()):
            return [*pairs[:index], (key, add_unknown(value, draw)), *pairs[index + 1 :]]
    at = draw(st.integers(0, len(pairs)))
    unknown = (draw(st.sampled_from(["x", "args"])), draw(st.sampled_from([1, None, "1", {}])))
    return [*pairs[:at], unknown, *pairs[at:]]


def write_json(pairs: Pairs, comma: str, colon: str, ascii_only: bool) -> str:
    def value(item: Any) -> str:
        if isinstance(item, list):
            return write_json(item, comma, colon, ascii_only)
        return json.dumps(item, ensure_ascii=ascii_only)

    items = (json.dumps(key, ensure_ascii=ascii_only) + colon + value(v) for key, v in pairs)
    return "{" + comma.join(items) + "}"


@settings(max_examples=300, deadline=None)
@given(
    line=log_objects(),
    repeat=st.booleans(),
    unknown=st.booleans(),
    comma=st.sampled_from([",", ", ", " ,\t"]),
    colon=st.sampled_from([":", " :", ": ", "\t:\r"]),
    ascii_only=st.booleans(),
    data=st.data(),
)
def test_a_repeated_or_unknown_key_is_never_plainly_unique(
    line: tuple[Kind, Pairs],
    repeat: bool,
    unknown: bool,
    comma: str,
    colon: str,
    ascii_only: bool,
    data: st.DataObject,
) -> None:
    kind, pairs = line
    if unknown:
        pairs = add_unknown(pairs, data.draw)
    if repeat:
        pairs = repeat_a_key(pairs, data.draw)
    text = write_json(pairs, comma, colon, ascii_only).encode()
    record = store.format.load.log_adapter(kind).validate_json(text)
    plain = store.format.load.plainly_unique(text, record)
    if repeat or unknown:  # a repeat is never missed; an unknown field needs its warning
        assert not plain
    elif comma == "," and colon == ":" and b'\\"' not in text:
        fields = dict(pairs)
        error_step = fields.get("type") == "error" and fields["step"] is not None
        assert plain is not error_step  # the shortcut takes every plain line but these


def free_form(draw: st.DrawFn, depth: int = 0) -> Pairs:
    """An attempt's `args`: any keys (repeats drawn apart), nested objects and lists."""
    keys = st.sampled_from(["a", "b", "ab", "é", 'q"', "\\"])
    values = st.integers(0, 3) | st.sampled_from(["x", 'y"', None, True])
    pairs: Pairs = []
    for _ in range(draw(st.integers(0, 3))):
        nested = depth < 2 and draw(st.booleans())
        pairs.append((draw(keys), free_form(draw, depth + 1) if nested else draw(values)))
    return pairs


def spelled(text: str, draw: st.DrawFn) -> str:
    """`text` as a JSON string, each character written plainly or as its `\\uXXXX`."""
    out = []
    for char in text:
        escaped = ord(char) < 0x10000 and draw(st.booleans())
        out.append(f"\\u{ord(char):04x}" if escaped else json.dumps(char)[1:-1])
    return '"' + "".join(out) + '"'


def write_spelled(pairs: Pairs, draw: st.DrawFn) -> str:
    """`pairs` as a JSON object, each key spelled its own way (`spelled`)."""

    def value(item: Any) -> str:
        return write_spelled(item, draw) if isinstance(item, list) else json.dumps(item)

    return "{" + ",".join(spelled(key, draw) + ":" + value(v) for key, v in pairs) + "}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=log_objects(), attempt=st.booleans(), repeat=st.booleans(), data=st.data())
def test_the_duplicate_key_guard_agrees_with_the_full_parse(
    line: tuple[Kind, Pairs], attempt: bool, repeat: bool, data: st.DataObject
) -> None:
    """Whatever a line's keys and however they are spelled (`"a"` and `"\\u0061"` are one
    key), at any depth (an attempt's free-form `args`): a read reports the line's repeated
    key exactly when the full parse (jiter) finds one, and delivers its record exactly when
    it finds none; `plainly_unique` never vouches for a line the full parse refuses."""
    kind, pairs = line
    first = {"schema": 1, "seq": 1, "at": stamp(T0), "prev": GENESIS}
    if kind is Kind.EVIDENCE:
        first |= {"id": "e0", "step": "s", "observed": "o", "method": "m", "proves": "p"}
        first["verdict"] = "pass"
    else:
        first |= {"type": "heartbeat", "actor": "a"}
    head = json.dumps(first).encode()
    pairs = [(k, hashlib.sha256(head).hexdigest() if k == "prev" else v) for k, v in pairs]
    if attempt and kind is Kind.EVENTS:
        pairs = [p for p in pairs[:5] if p[0] != "type"]  # seq, at, prev, actor
        pairs += [("type", "attempt"), ("step", "s1"), ("attempt", 1), ("phase", "started")]
        pairs += [("tool", "t"), ("args", free_form(data.draw))]
    if repeat:
        pairs = repeat_a_key(pairs, data.draw)
    text = write_spelled(pairs, data.draw).encode()
    try:
        jiter.from_json(text, catch_duplicate_keys=True)
        repeated = False
    except ValueError as error:
        repeated = "duplicate key" in str(error)
    record = store.format.load.log_adapter(kind).validate_json(text)
    assert not (repeated and store.format.load.plainly_unique(text, record))
    with scratch() as root:
        put(root, "log.jsonl", head + b"\n" + text + b"\n")
        batch = LogReader(root, "log.jsonl", kind).poll()
    said = [p for p in batch.problems if "duplicate key" in p.message]
    assert [(p.line, p.code) for p in said] == ([(2, "bad-json")] if repeated else [])
    assert len(batch.records) == (1 if repeated else 2)


# ---- the common-line shortcut changes nothing a read finds --------------------------------

HOSTILE = [
    "bad-json",
    "truncated",
    "not-an-object",
    "wrong-type",
    "missing-field",
    "unknown-field",
    "repeated-key",
    "quote-in-string",
    "over-long",
    "not-utf8",
    "control-character",
    "bidi-character",
    "huge-number",
    "broken-link",
    "seq-gap",
    "no-schema-marker",
]


@st.composite
def hostile_lines(draw: st.DrawFn) -> list[bytes]:
    """Events log lines, each written well or in one of the ways a line goes wrong; the
    next line chains to the bytes as written, or (sometimes) to what was meant."""
    lines: list[bytes] = []
    prev = GENESIS
    for seq in range(1, draw(st.integers(1, 8)) + 1):
        kind = draw(st.sampled_from(["step", "usage"]))
        record: dict[str, Any] = {"schema": 1} if seq == 1 else {}
        record |= {"seq": seq, "at": stamp(T0 + timedelta(seconds=seq)), "prev": prev}
        record |= {"type": kind, "actor": draw(texts)}
        if kind == "step":
            record |= {"step": "s1", "plan_version": 1, "state": "running"}
        else:
            record |= {"usd": 0.5, "tokens": seq, "steps": seq}
        how = draw(st.sampled_from(["well", *HOSTILE]))
        if how == "wrong-type":
            record[draw(st.sampled_from(["seq", "at", "actor", "type"]))] = draw(
                st.sampled_from(["1", 1, None, [], True])
            )
        elif how == "missing-field":
            del record[draw(st.sampled_from(["seq", "at", "prev", "type", "actor"]))]
        elif how == "unknown-field":
            record["x"] = draw(st.sampled_from([1, "y", None, {"a": 1}]))
        elif how == "quote-in-string":
            record["actor"] += '"'
        elif how == "over-long":
            record["actor"] = "x" * 400  # over the cap the test sets
        elif how == "broken-link":
            record["prev"] = "f" * 64
        elif how == "seq-gap":
            record["seq"] = draw(st.sampled_from([seq - 1, seq + 1, 0, 2**63]))
        elif how == "no-schema-marker":
            record.pop("schema", None)
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        if how == "bad-json":
            line = line[:-1] + b",}"
        elif how == "truncated":
            line = line[: draw(st.integers(0, len(line) - 1))]
        elif how == "not-an-object":
            line = draw(st.sampled_from([b"[1]", b"1", b'"x"', b"null"]))
        elif how == "repeated-key":
            line = line[:-1] + b',"actor":"z"}'
        elif how == "not-utf8":
            line = line.replace(b'"actor":"', b'"actor":"\xff', 1)
        elif how == "control-character":
            line = line.replace(b'"actor":"', b'"actor":"\x1b[31m\x01', 1)
        elif how == "bidi-character":
            line = line.replace(b'"actor":"', '"actor":"\u202e'.encode(), 1)
        elif how == "huge-number":
            line = line.replace(b'"seq":', b'"seq":1e999,"x":', 1)
        lines.append(line)
        meant = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        prev = hashlib.sha256(draw(st.sampled_from([line, meant]))).hexdigest()
    return lines


def read_log(root: Path, data: bytes, delivered: bool) -> tuple[Any, ...]:
    """All a reader finds in `data`: records (with their lines when `delivered` to a
    callback), problems, and where it stands."""
    put(root, "events.jsonl", data)
    seen: list[tuple[Any, int | None]] = []

    def on_record(record: Any, line: int) -> None:
        seen.append((record.model_dump(), line))

    reader = LogReader(root, "events.jsonl", Kind.EVENTS, on_record if delivered else None)
    batch = reader.poll()
    records = seen or [(r.model_dump(), None) for r in batch.records]
    where = (reader.line_no, reader.last_seq, reader.last_hash, reader.unverified_from)
    return records, batch.problems, where, list(reader.line_starts), reader.pending_problem


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=hostile_lines(), unterminated=st.booleans(), delivered=st.booleans())
def test_the_common_line_shortcut_finds_what_the_full_path_finds(
    lines: list[bytes], unterminated: bool, delivered: bool
) -> None:
    """`LogReader._lines` takes a line with nothing to report on a shortcut; the full path
    (`_irregular`, which parses with jiter) is the one truth: with the shortcut off, every
    line goes that way, and a read finds the same records, problems and chain."""
    data = b"\n".join(lines) + (b"" if unterminated else b"\n")
    with pytest.MonkeyPatch.context() as patch, scratch() as root:
        patch.setattr(store.format.load, "MAX_LINE_BYTES", 300)
        fast = read_log(root / "fast", data, delivered)
        patch.setattr(store.format.load, "plainly_unique", lambda line, record: False)
        full = read_log(root / "full", data, delivered)
    assert fast == full
