"""LogReader: incremental reads, callbacks, line index and windows, resets, problem cap."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import store.format.load
from store.format.layout import Kind
from store.format.load import LogReader
from store.format.problems import Problem
from store.format.records import Evidence, StepEvent
from tests.factory import T0, chain, mission, stamp
from tests.store.conftest import stat_saying

EVENTS = "missions/m/events.jsonl"


def steps(count: int, **extra: Any) -> list[dict[str, Any]]:
    base = {"at": stamp(T0), "type": "step", "actor": "a", "step": "s1", "plan_version": 1}
    return [base | {"state": "running", "reason": f"line {n + 1}"} | extra for n in range(count)]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / EVENTS
    path.parent.mkdir(parents=True)
    path.write_bytes(chain(steps(5)))
    return path


def reader_for(root: Path, **options: Any) -> LogReader:
    return LogReader(root, EVENTS, Kind.EVENTS, **options)


def test_poll_reads_only_appended_bytes(tmp_path: Path, log: Path) -> None:
    reader = reader_for(tmp_path)
    assert [r.seq for r in reader.poll().records] == [1, 2, 3, 4, 5]
    assert reader.offset == log.stat().st_size
    assert reader.poll().records == []  # nothing new

    whole = chain(steps(7))
    with open(log, "ab") as handle:
        handle.write(whole[log.stat().st_size :])
    batch = reader.poll()
    assert [r.seq for r in batch.records] == [6, 7]
    assert batch.problems == [] and not batch.reset
    assert reader.offset == len(whole)


def test_records_go_to_the_callback_with_line_numbers(tmp_path: Path, log: Path) -> None:
    seen: list[tuple[int, int]] = []
    reader = reader_for(tmp_path, on_record=lambda record, line: seen.append((line, record.seq)))
    batch = reader.poll()
    assert batch.records == []  # not kept when a callback takes them
    assert seen == [(n, n) for n in range(1, 6)]


def test_records_are_typed_by_kind(tmp_path: Path) -> None:
    built = mission(tmp_path, "m")
    built.step("s1", "running")
    built.evidence("s1")
    events = LogReader(tmp_path, "missions/m/events.jsonl", Kind.EVENTS).poll().records
    evidence = LogReader(tmp_path, "missions/m/evidence.jsonl", Kind.EVIDENCE).poll().records
    assert isinstance(events[0], StepEvent) and isinstance(evidence[0], Evidence)
    assert evidence[0].verdict == "pass"


def test_chain_across_polls(tmp_path: Path) -> None:
    """The chain is checked across poll boundaries, not only within one read."""
    built = mission(tmp_path, "m")
    reader = reader_for(tmp_path)
    for n in range(4):
        built.step("s1", "running", reason=str(n))
        batch = reader.poll()
        assert len(batch.records) == 1 and batch.problems == []
    assert reader.line_no == 4 and reader.last_seq == 4


def test_reset_callback_on_replacement(tmp_path: Path, log: Path) -> None:
    resets: list[bool] = []
    reader = reader_for(tmp_path, on_reset=lambda: resets.append(True))
    reader.poll()
    replacement = log.with_name("new")
    replacement.write_bytes(chain(steps(1)))
    os.replace(replacement, log)
    batch = reader.poll()
    assert resets == [True] and batch.reset
    assert reader.line_no == 1


def test_deleted_log_resets_without_a_problem(tmp_path: Path, log: Path) -> None:
    reader = reader_for(tmp_path)
    reader.poll()
    log.unlink()
    batch = reader.poll()
    assert batch.reset and batch.problems == []
    assert reader.line_no == 0 and reader.inode is None


def test_missing_log_is_quiet(tmp_path: Path) -> None:
    batch = reader_for(tmp_path).poll()
    assert (batch.records, batch.problems, batch.reset) == ([], [], False)


def test_chain_break_is_reported_once(tmp_path: Path, log: Path) -> None:
    lines = log.read_bytes().split(b"\n")
    for index in (1, 3):  # two edited lines: only the first break is listed
        lines[index] = lines[index].replace(b"line", b"LINE")
    log.write_bytes(b"\n".join(lines))
    problems = reader_for(tmp_path).poll().problems
    assert [(p.code, p.line) for p in problems] == [("chain-broken", 3)]


def test_problems_are_capped(tmp_path: Path, log: Path) -> None:
    log.write_bytes(b"not json\n" * (store.format.load.MAX_LOG_PROBLEMS + 50))
    reader = reader_for(tmp_path)
    problems = reader.poll().problems
    assert len(problems) == store.format.load.MAX_LOG_PROBLEMS + 1
    assert problems[-1].code == "too-many-problems"
    assert reader.line_no == store.format.load.MAX_LOG_PROBLEMS + 50


def test_read_window(tmp_path: Path, log: Path) -> None:
    reader = reader_for(tmp_path)
    reader.poll()
    window = reader.read_window(1, 3)
    assert [line for line, _ in window] == [2, 3, 4]
    assert [record.reason for _, record in window] == ["line 2", "line 3", "line 4"]
    assert [line for line, _ in reader.read_window(3, 100)] == [4, 5]
    assert reader.read_window(5, 10) == []


def test_read_window_with_an_unterminated_last_line(tmp_path: Path, log: Path) -> None:
    """Regression: the held-back bytes were subtracted from every window's end."""
    with open(log, "ab") as handle:
        handle.write(b'{"seq":6,"at":"2025-')
    reader = reader_for(tmp_path)
    reader.poll()
    assert reader.pending_problem is not None
    for first, count in [(0, 2), (1, 1), (2, 3), (0, 5)]:
        window = reader.read_window(first, count)
        assert len(window) == min(count, 5 - first)
        assert all(isinstance(item, StepEvent) for _, item in window), window


def test_read_window_shows_bad_lines_as_problems(tmp_path: Path, log: Path) -> None:
    lines = log.read_bytes().split(b"\n")
    lines[2] = b"{broken"
    log.write_bytes(b"\n".join(lines))
    reader = reader_for(tmp_path)
    reader.poll()
    window = dict(reader.read_window(0, 5))
    assert isinstance(window[3], Problem) and window[3].line == 3
    assert isinstance(window[4], StepEvent)


def test_read_window_refuses_what_the_reader_refuses(tmp_path: Path, log: Path) -> None:
    """A window validates first and parses whole only what may hide a duplicate key (as the
    reader does): a repeated key, bad JSON and a schema miss are each a Problem."""
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"actor":"a"', b'"actor":"a","actor":"b"')
    lines[2] = b"{broken"
    lines[3] = lines[3].replace(b'"state":"running"', b'"state":42')
    log.write_bytes(b"\n".join(lines))
    reader = reader_for(tmp_path)
    reader.poll()
    window = dict(reader.read_window(0, 5))
    codes = {line: getattr(item, "code", "") for line, item in window.items()}
    assert codes[2] == codes[3] == "bad-json" and codes[4] == "schema"
    assert "duplicate" in window[2].message
    assert isinstance(window[1], StepEvent) and isinstance(window[5], StepEvent)
    read_by_reader = {(p.line, p.code) for p in reader.problems}
    assert {(2, "bad-json"), (3, "bad-json"), (4, "schema")} <= read_by_reader


@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
def test_small_read_chunks_give_the_same_result(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(store.format.load, "READ_CHUNK", chunk)
    reader = reader_for(tmp_path)
    batch = reader.poll()
    assert [r.seq for r in batch.records] == [1, 2, 3, 4, 5]
    assert batch.problems == []
    newlines = [i + 1 for i, byte in enumerate(log.read_bytes()) if byte == ord("\n")]
    assert list(reader.line_starts) == [0, *newlines[:4]]


def test_bytes_appended_after_the_fstat_are_read_too(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.format.load, "PROBE_CHUNK", 7)
    monkeypatch.setattr(os, "fstat", stat_saying(100, os.fstat))
    reader = reader_for(tmp_path)
    assert [r.seq for r in reader.poll().records] == [1, 2, 3, 4, 5]
    assert reader.offset == log.stat().st_size


@pytest.mark.parametrize("chunk", [50, 200, 4096])
def test_over_long_line_does_not_depend_on_read_chunks(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Regression: the tail of a long line split across reads became a line of its own."""
    monkeypatch.setattr(store.format.load, "MAX_LINE_BYTES", 300)
    monkeypatch.setattr(store.format.load, "READ_CHUNK", chunk)
    lines = steps(4)
    lines[1]["reason"] = "x" * 500
    log.write_bytes(chain(lines))
    reader = reader_for(tmp_path)
    batch = reader.poll()
    assert [(p.code, p.line) for p in batch.problems] == [("line-too-long", 2)]
    assert [r.seq for r in batch.records] == [1, 3, 4]
    assert len(reader.line_starts) == 4  # one entry per line, the long one too
    window = dict(reader.read_window(0, 4))
    assert isinstance(window[2], Problem) and window[2].code == "line-too-long"
    assert isinstance(window[3], StepEvent) and window[3].seq == 3


def test_over_long_line_arriving_in_pieces(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.format.load, "MAX_LINE_BYTES", 300)
    lines = steps(3)
    lines[1]["reason"] = "y" * 1000
    data = chain(lines)
    log.write_bytes(b"")
    reader = reader_for(tmp_path)
    for start in range(0, len(data), 97):
        with open(log, "ab") as handle:
            handle.write(data[start : start + 97])
        reader.poll()
        assert len(reader.partial) <= 300 + 97  # never holds the whole long line
    assert [(p.code, p.line) for p in reader.problems] == [("line-too-long", 2)]
    assert reader.last_seq == 3 and reader.line_no == 3


def _dup_log(tmp_path: Path, body: bytes) -> list[str]:
    """Read a one-line events log whose line is `body`; return the problem codes."""
    folder = tmp_path / "missions" / "m"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_bytes(body + b"\n")
    reader = LogReader(tmp_path, "missions/m/events.jsonl", Kind.EVENTS)
    reader.poll()
    return [p.code for p in reader.problems]


@pytest.mark.parametrize(
    "tail",
    [
        b',"state":"failed"}',  # a plain duplicate, compact
        b',"state" :"failed"}',  # whitespace before the colon
        b',"reason":"a\\":b","state"\t:"failed"}',  # `":` inside a string, tab before colon
    ],
)
def test_duplicate_key_in_a_log_line_is_found_without_fail(tmp_path: Path, tail: bytes) -> None:
    prev = "0" * 64
    line = (
        b'{"schema":1,"seq":1,"at":"2026-01-01T00:00:00Z","prev":"' + prev.encode() + b'",'
        b'"type":"step","actor":"a","step":"s","plan_version":1,"state":"running"'
    ) + tail
    assert "bad-json" in _dup_log(tmp_path, line)
