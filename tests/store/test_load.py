"""load_document and the small loaders behind it, on valid and slightly-off input."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from store.format.layout import Kind
from store.format.load import (
    LogReader,
    decode_utf8,
    load_document,
    parse_json,
    parse_toml,
    read_bytes,
)
from store.format.problems import Problem
from store.format.records import (
    ApprovalRequest,
    Constraints,
    Decision,
    Handoff,
    Intent,
    Plan,
    Settings,
    request_digest,
)
from tests.factory import mission
from tests.store.conftest import stat_saying


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """One mission with every kind of document."""
    m = mission(tmp_path, "m")
    m.plan(2, steps=["s1", "s2", "s3"])
    m.request("r1")
    m.decision("r1")
    m.handoff(plan_version=2, current_step="s3", verified=["e1"])
    (tmp_path / "hud.toml").write_text('schema = 1\nstale_after_seconds = 30\ntheme = "light"\n')
    return tmp_path


@pytest.mark.parametrize(
    ("relpath", "model"),
    [
        ("hud.toml", Settings),
        ("missions/m/intent.toml", Intent),
        ("missions/m/constraints.toml", Constraints),
        ("missions/m/plan/v1.json", Plan),
        ("missions/m/plan/v2.json", Plan),
        ("missions/m/approvals/r1.json", ApprovalRequest),
        ("missions/m/approvals/r1.toml", Decision),
        ("missions/m/handoff.json", Handoff),
    ],
)
def test_valid_documents_load_cleanly(built: Path, relpath: str, model: type[Any]) -> None:
    loaded = load_document(built, relpath, model)
    data = (built / relpath).read_bytes()
    assert loaded.problems == []
    assert isinstance(loaded.record, model)
    assert loaded.sha256 == hashlib.sha256(data).hexdigest()
    assert loaded.text == data.decode()
    assert loaded.raw is not None and loaded.raw["schema"] == 1


def test_loaded_fields(built: Path) -> None:
    settings = load_document(built, "hud.toml", Settings).record
    plan = load_document(built, "missions/m/plan/v2.json", Plan).record
    budget = load_document(built, "missions/m/constraints.toml", Constraints).record
    assert settings is not None and settings.stale_after_seconds == 30
    assert plan is not None and [s.id for s in plan.steps] == ["s1", "s2", "s3"]
    assert plan.reason == "re-plan 2" and plan.created_at.tzinfo is not None
    assert budget is not None and budget.budget.usd == 10.0 and budget.budget.tokens == 100_000


def test_decision_digest_is_the_request_canonical_json(built: Path) -> None:
    request = load_document(built, "missions/m/approvals/r1.json", ApprovalRequest)
    decision = load_document(built, "missions/m/approvals/r1.toml", Decision).record
    assert request.raw is not None and decision is not None
    assert decision.digest == request_digest(request.raw)
    # canonical: key order and whitespace in the file do not matter
    shuffled = json.dumps(dict(reversed(list(request.raw.items()))), indent=4)
    assert request_digest(json.loads(shuffled)) == decision.digest


def test_missing_document(tmp_path: Path) -> None:
    loaded = load_document(tmp_path, "missions/m/intent.toml", Intent)
    assert loaded.record is None
    assert [p.code for p in loaded.problems] == ["missing"]


def test_folder_where_a_document_belongs(tmp_path: Path) -> None:
    (tmp_path / "missions/m/intent.toml").mkdir(parents=True)
    loaded = load_document(tmp_path, "missions/m/intent.toml", Intent)
    assert [p.code for p in loaded.problems] == ["not-a-file"]


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    (tmp_path / "missions/m").mkdir(parents=True)
    (tmp_path / "missions/m/handoff.json").write_text("[1, 2, 3]")
    loaded = load_document(tmp_path, "missions/m/handoff.json", Handoff)
    assert [(p.code, p.line) for p in loaded.problems] == [("schema", 1)]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2025-01-01T12:00:00Z", True),
        ("2025-01-01T12:00:00+02:00", True),
        ("2025-01-01T12:00:00", False),  # no zone
        ("yesterday", False),
        (1735732800, False),
    ],
)
def test_timestamps_need_a_zone(tmp_path: Path, value: object, ok: bool) -> None:
    (tmp_path / "missions/m").mkdir(parents=True)
    (tmp_path / "missions/m/handoff.json").write_text(json.dumps({"schema": 1, "at": value}))
    loaded = load_document(tmp_path, "missions/m/handoff.json", Handoff)
    assert (loaded.record is not None) is ok
    if not ok:
        assert loaded.problems[0].message.startswith("at:")


def test_toml_local_datetime_is_refused(tmp_path: Path) -> None:
    (tmp_path / "missions/m").mkdir(parents=True)
    (tmp_path / "missions/m/intent.toml").write_text(
        'schema = 1\ntitle = "t"\ncreated_at = 2025-01-01T12:00:00\n'
    )
    loaded = load_document(tmp_path, "missions/m/intent.toml", Intent)
    assert loaded.record is None
    assert loaded.problems[0].message.startswith("created_at:")


def test_rejection_needs_a_reason(built: Path) -> None:
    path = built / "missions/m/approvals/r1.toml"
    path.write_text(path.read_text().replace('"approve"', '"reject"'))
    loaded = load_document(built, "missions/m/approvals/r1.toml", Decision)
    assert loaded.record is None
    assert "reason" in loaded.problems[0].message


def test_replan_needs_a_reason_and_unique_steps(tmp_path: Path) -> None:
    m = mission(tmp_path, "m")
    m.plan(2, reason="")
    m.plan(3, steps=["s1", "s1"])
    for version, needle in [(2, "reason"), (3, "unique")]:
        loaded = load_document(tmp_path, f"missions/m/plan/v{version}.json", Plan)
        assert loaded.record is None
        assert needle in loaded.problems[0].message


def test_read_bytes_never_reads_past_the_cap(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 1000)
    assert read_bytes(tmp_path, "big", cap=1000) == b"x" * 1000
    problem = read_bytes(tmp_path, "big", cap=999)
    assert isinstance(problem, Problem) and problem.code == "too-large"


def test_read_bytes_reads_on_when_the_file_grew_after_its_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "grew").write_bytes(b"x" * 1000)
    monkeypatch.setattr(os, "stat", stat_saying(10, os.stat))
    assert read_bytes(tmp_path, "grew") == b"x" * 1000
    problem = read_bytes(tmp_path, "grew", cap=500)
    assert isinstance(problem, Problem) and problem.code == "too-large"


def test_decode_utf8_names_the_line() -> None:
    problem = decode_utf8("f", b"ok\nok\n\xc3\x28")
    assert isinstance(problem, Problem) and (problem.code, problem.line) == ("not-utf8", 3)
    assert decode_utf8("f", "ünï".encode()) == "ünï"


def test_parse_json_uses_the_given_line() -> None:
    problem = parse_json("log", b"{oops", line=42)
    assert isinstance(problem, Problem) and problem.line == 42
    assert parse_json("log", b'{"big": 1e308, "n": 12345678901234567890}') == {
        "big": 1e308,
        "n": 12345678901234567890,
    }


def test_parse_toml_keeps_finite_floats() -> None:
    assert parse_toml("t.toml", "a = 1.5\nb = 1e300\n") == {"a": 1.5, "b": 1e300}


def test_an_invalid_last_line_leaves_no_reference_cycle(tmp_path: Path) -> None:
    """A refused line's exception must not outlive its except block: it holds the reader's
    frame, and with it the whole chunk, until a cyclic collection (the HUD scans with the
    collector off)."""
    built = mission(tmp_path, "m")
    built.step("s1", "running")
    with (tmp_path / "missions/m/events.jsonl").open("a") as handle:
        handle.write('{"seq": "two"}\n')
    reader = LogReader(tmp_path, "missions/m/events.jsonl", Kind.EVENTS)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage
    try:
        batch = reader.poll()
        assert [p.code for p in batch.problems] == ["schema"]
        gc.collect()
        # the reader's own frames only: another thread (a test before this one in the
        # same worker) may leave garbage of its own meanwhile
        held = [
            found
            for found in gc.garbage
            if isinstance(found, FrameType) and "store/format" in found.f_code.co_filename
        ]
        assert held == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_no_pydantic_plugin_is_looked_up() -> None:
    """Plugins are entry points of any installed package, shown every validated value:
    the store runs none, and does not scan the installed packages' metadata for them (a
    fresh interpreter: pytest's plugins have looked already)."""
    code = (
        "import importlib.metadata, store, pydantic\n"
        "def looked_up(**_):\n"
        "    raise SystemExit('pydantic looked for plugins')\n"
        "importlib.metadata.entry_points = looked_up\n"
        "class Probe(pydantic.BaseModel):\n"
        "    x: int\n"
        "assert Probe.model_validate_json('{\"x\": 1}').x == 1\n"
        "from pydantic.plugin._loader import get_plugins\n"
        "print(list(get_plugins()))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.split() == ["[]"]
