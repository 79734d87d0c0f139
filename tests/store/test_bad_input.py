"""Bad input: each kind is a Problem with its path, line and code, never an exception."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import store.format.load
from store.derivation.derive import RequestStatus
from store.format.layout import Kind
from store.format.load import LogReader, load_document
from store.format.problems import Problem
from store.format.records import Constraints, Handoff, Intent, Plan, request_snapshot
from store.index.check import check
from store.index.workspace import Workspace
from tests.factory import T0, Mission, chain, mission, stamp

Open = Callable[[Path], Workspace]
EVENTS = "missions/m/events.jsonl"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path


def codes(problems: list[Problem]) -> list[str]:
    return [p.code for p in problems]


def open_workspace_problems(root: Path) -> list[Problem]:
    """The problems a fresh scan finds; `hud check` must find the same ones."""
    workspace = Workspace(root)
    workspace.scan()
    found = workspace.problems()
    assert set(found) == set(check(root).all_problems())
    return found


def only(problems: list[Problem], code: str) -> Problem:
    """The one problem with `code` (fails if there is none or several)."""
    found = [p for p in problems if p.code == code]
    assert len(found) == 1, problems
    return found[0]


def write(root: Path, rel: str, data: bytes | str) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return rel


def step_lines(count: int) -> list[dict[str, Any]]:
    return [
        {"at": stamp(T0), "type": "step", "actor": "a", "step": "s1", "plan_version": 1}
        | {"state": "running"}
        for _ in range(count)
    ]


def read_log(root: Path, rel: str = EVENTS) -> tuple[list[Any], list[Problem]]:
    batch = LogReader(root, rel, Kind.EVENTS).poll()
    return batch.records, batch.problems


# ---- documents ------------------------------------------------------------------------


def test_empty_json_document(root: Path) -> None:
    rel = write(root, "missions/m/handoff.json", b"")
    loaded = load_document(root, rel, Handoff)
    assert loaded.record is None
    problem = only(loaded.problems, "empty")
    assert (problem.path, problem.line, problem.severity) == (rel, None, "error")


def test_whitespace_only_toml_document_is_empty(root: Path) -> None:
    rel = write(root, "missions/m/intent.toml", "\n  \n")
    assert codes(load_document(root, rel, Intent).problems) == ["empty"]


def test_truncated_json(root: Path) -> None:
    rel = write(root, "missions/m/handoff.json", '{\n  "schema": 1,\n  "at": "2025-01')
    problem = only(load_document(root, rel, Handoff).problems, "bad-json")
    assert problem.line == 3
    assert "truncated" in problem.hint


def test_invalid_utf8(root: Path) -> None:
    rel = write(root, "missions/m/intent.toml", b'schema = 1\ntitle = "caf\xe9"\n')
    loaded = load_document(root, rel, Intent)
    problem = only(loaded.problems, "not-utf8")
    assert problem.line == 2
    assert loaded.record is None and loaded.sha256 is not None


def test_invalid_utf8_in_a_log_line(root: Path) -> None:
    data = chain(step_lines(2)).replace(b'"actor":"a"', b'"actor":"\xff"', 1)
    write(root, EVENTS, data)
    records, problems = read_log(root)
    assert only(problems, "bad-json").line == 1
    assert [r.seq for r in records] == [2]


def test_document_over_the_size_cap(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store.format.load, "MAX_DOCUMENT_BYTES", 100)
    rel = write(root, "missions/m/plan/v1.json", b"{" + b" " * 200 + b"}")
    loaded = load_document(root, rel, Plan)
    problem = only(loaded.problems, "too-large")
    assert (problem.path, problem.line) == (rel, None)
    assert "100" in problem.message


def test_toml_syntax_error_names_its_line(root: Path) -> None:
    rel = write(root, "missions/m/intent.toml", 'schema = 1\ntitle = "ok"\nobjective = \n')
    problem = only(load_document(root, rel, Intent).problems, "bad-toml")
    assert problem.line == 3


def test_wrong_types_name_the_field(root: Path) -> None:
    text = 'schema = 1\n[budget]\nusd = "ten"\ntokens = 1.5\n'
    rel = write(root, "missions/m/constraints.toml", text)
    loaded = load_document(root, rel, Constraints)
    assert loaded.record is None
    fields = {p.message.split(":")[0] for p in loaded.problems if p.code == "schema"}
    assert {"budget.tokens", "budget.usd.float"} <= fields  # a union reports each branch
    assert all(p.line is None and p.path == rel for p in loaded.problems)


def test_strings_are_not_coerced_to_numbers(root: Path) -> None:
    rel = write(root, "missions/m/handoff.json", json.dumps({"schema": "1", "at": stamp(T0)}))
    problem = only(load_document(root, rel, Handoff).problems, "schema")
    assert problem.message.startswith("schema:")


def test_unknown_fields_are_warnings_at_any_depth(root: Path) -> None:
    plan = {
        "schema": 1,
        "version": 1,
        "created_at": stamp(T0),
        "author": "a",
        "steps": [{"id": "s1", "title": "t", "colour": "red"}],
        "priority": 3,
    }
    rel = write(root, "missions/m/plan/v1.json", json.dumps(plan))
    loaded = load_document(root, rel, Plan)
    assert loaded.record is not None
    assert sorted(p.message for p in loaded.problems) == [
        "unknown field 'priority'",
        "unknown field 'steps.colour'",
    ]
    assert {(p.code, p.severity) for p in loaded.problems} == {("unknown-field", "warn")}


def test_unknown_field_in_a_log_line_is_a_warning(root: Path) -> None:
    lines = step_lines(2)
    lines[1]["mood"] = "happy"
    write(root, EVENTS, chain(lines))
    records, problems = read_log(root)
    assert len(records) == 2
    problem = only(problems, "unknown-field")
    assert (problem.line, problem.severity) == (2, "warn")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-2.5E+999"])
def test_json_nan_and_infinity(root: Path, number: str) -> None:
    text = '{"schema": 1,\n"at": "2025-01-01T00:00:00Z",\n"summary": "x",\n"extra": ' + number + "}"
    rel = write(root, "missions/m/handoff.json", text)
    problem = only(load_document(root, rel, Handoff).problems, "bad-json")
    assert problem.line == 4


def test_out_of_range_number_in_request_args(root: Path) -> None:
    built = mission(root, "m")
    raw = built.request("r1")
    built.decision("r1")
    text = json.dumps(raw).replace('"prod"', "1e400")
    write(root, "missions/m/approvals/r1.json", text)
    workspace = Workspace(root)
    workspace.scan()  # used to raise ValueError computing the digest of args
    assert "bad-json" in codes(workspace.problems())
    assert workspace.request_status("m", "r1") is RequestStatus.STALE


def test_out_of_range_number_in_log_attempt_args(root: Path) -> None:
    attempt = {"at": stamp(T0), "type": "attempt", "actor": "a", "step": "s1", "attempt": 1}
    attempt |= {"phase": "started", "tool": "t", "args": {"n": 1.0}}
    data = chain([*step_lines(1), attempt, *step_lines(1)]).replace(b"1.0", b"1e999")
    write(root, EVENTS, data)
    records, problems = read_log(root)
    assert only(problems, "bad-json").line == 2
    assert [r.seq for r in records] == [1, 3]
    assert "seq-gap" not in codes(problems)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+nan"])
def test_toml_nan_and_infinity(root: Path, value: str) -> None:
    rel = write(root, "missions/m/constraints.toml", f"schema = 1\n[budget]\nusd = {value}\n")
    assert codes(load_document(root, rel, Constraints).problems) == ["bad-toml"]


def test_json_nested_ten_thousand_deep(root: Path) -> None:
    deep = '{"schema": 1, "at": "2025-01-01T00:00:00Z", "x": ' + "[" * 10_000 + "]" * 10_000
    rel = write(root, "missions/m/handoff.json", deep + "}")
    problem = only(load_document(root, rel, Handoff).problems, "bad-json")
    assert "deeply" in problem.hint


def test_log_line_nested_ten_thousand_deep(root: Path) -> None:
    write(root, EVENTS, b"[" * 10_000 + b"]" * 10_000 + b"\n")
    _, problems = read_log(root)
    assert only(problems, "bad-json").line == 1


def test_toml_nested_ten_thousand_deep(root: Path) -> None:
    rel = write(root, "missions/m/intent.toml", "a = " + "[" * 10_000 + "]" * 10_000 + "\n")
    problem = only(load_document(root, rel, Intent).problems, "bad-toml")
    assert "deeply" in problem.message


def test_json_duplicate_keys(root: Path) -> None:
    text = '{"schema": 1,\n"at": "2025-01-01T00:00:00Z",\n"summary": "a",\n"summary": "b"}'
    rel = write(root, "missions/m/handoff.json", text)
    problem = only(load_document(root, rel, Handoff).problems, "bad-json")
    assert problem.line == 4
    assert "once" in problem.hint


def test_toml_duplicate_keys(root: Path) -> None:
    rel = write(root, "missions/m/intent.toml", 'schema = 1\ntitle = "a"\ntitle = "b"\n')
    assert codes(load_document(root, rel, Intent).problems) == ["bad-toml"]


def test_log_line_duplicate_keys(root: Path) -> None:
    write(root, EVENTS, chain(step_lines(1)).replace(b'"actor":"a"', b'"actor":"a","actor":"b"'))
    _, problems = read_log(root)
    assert only(problems, "bad-json").line == 1


# ---- symlinks and folder names ---------------------------------------------------------


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("outside")


def test_symlinked_document_outside_the_state_dir(root: Path, outside: Path) -> None:
    (outside / "intent.toml").write_text('schema = 1\ntitle = "secret"\n')
    (root / "missions" / "m").mkdir(parents=True)
    os.symlink(outside / "intent.toml", root / "missions" / "m" / "intent.toml")
    loaded = load_document(root, "missions/m/intent.toml", Intent)
    assert loaded.record is None
    assert only(loaded.problems, "symlink-escape").path == "missions/m/intent.toml"


def test_symlinked_log_outside_the_state_dir(root: Path, outside: Path) -> None:
    (outside / "events.jsonl").write_bytes(chain(step_lines(3)))
    (root / "missions" / "m").mkdir(parents=True)
    os.symlink(outside / "events.jsonl", root / EVENTS)
    records, problems = read_log(root)
    assert records == []
    assert only(problems, "symlink-escape").path == EVENTS


@pytest.mark.parametrize(
    "link",
    ["missions/m/intent.toml", "missions/m/events.jsonl", "missions/m/plan/v1.json"],
)
def test_symlink_inside_the_state_dir_is_not_followed(root: Path, link: str) -> None:
    """A link can be swapped between a check and a read: none is followed, even inside."""
    mission(root, "m").step("s1", "running")
    (root / link).rename(root / "kept")
    os.symlink(root / "kept", root / link)
    problems = open_workspace_problems(root)
    problem = only(problems, "symlink")
    assert (problem.path, problem.severity) == (link, "error")
    assert "not followed" in problem.message


def test_symlinked_folder_on_the_way_is_refused(root: Path) -> None:
    """A layout folder swapped for a link (to a copy inside) is reported, not entered."""
    mission(root, "m")
    (root / "missions/m/plan").rename(root / "plan-copy")
    os.symlink(root / "plan-copy", root / "missions/m/plan")
    problems = open_workspace_problems(root)
    assert only(problems, "symlink").path == "missions/m/plan"
    assert load_document(root, "missions/m/plan/v1.json", Intent).problems[0].code == "symlink"


def test_symlinked_mission_folder_outside_is_an_error(
    root: Path, outside: Path, open_workspace: Open
) -> None:
    mission(outside, "elsewhere")
    mission(root, "m")
    os.symlink(outside / "missions" / "elsewhere", root / "missions" / "evil")
    workspace = open_workspace(root)
    assert sorted(workspace.missions) == ["m"]
    problem = only(workspace.problems(), "symlink-escape")
    assert (problem.path, problem.severity) == ("missions/evil", "error")


def test_stray_symlink_outside_is_an_error_not_a_warning(
    root: Path, outside: Path, open_workspace: Open
) -> None:
    mission(root, "m")
    (outside / "notes").write_text("x")
    os.symlink(outside / "notes", root / "missions/m/notes")
    problem = only(open_workspace(root).problems(), "symlink-escape")
    assert (problem.path, problem.severity) == ("missions/m/notes", "error")


@pytest.mark.parametrize("name", ["a..b", "has space", "UPPER", "-dash", "x" * 65])
def test_unsafe_mission_folder_names(root: Path, name: str, open_workspace: Open) -> None:
    folder = root / "missions" / name
    folder.mkdir(parents=True)
    (folder / "intent.toml").write_text('schema = 1\ntitle = "t"\n')
    mission(root, "ok")
    workspace = open_workspace(root)
    assert sorted(workspace.missions) == ["ok"]
    problem = only(workspace.problems(), "unsafe-mission-id")
    assert (problem.path, problem.severity) == (f"missions/{name}", "error")
    assert only(check(root).all_problems(), "unsafe-mission-id").path == f"missions/{name}"


def test_file_in_dotted_mission_folder_applied_alone(root: Path) -> None:
    """A watcher reports the file, not the folder: it must not create a mission `a..b`."""
    write(root, "missions/a..b/intent.toml", 'schema = 1\ntitle = "t"\n')
    workspace = Workspace(root)
    workspace.apply(["missions/a..b/intent.toml"])
    assert workspace.missions == {}
    assert codes(workspace.problems()) == ["unsafe-mission-id"]


# ---- logs -------------------------------------------------------------------------------


@pytest.mark.parametrize("edited", [1, 3, 5])
def test_edited_middle_line_breaks_the_chain_at_the_next_seq(root: Path, edited: int) -> None:
    """Editing line k changes its hash, so line k+1's prev no longer matches: seq k+1."""
    lines = chain(step_lines(6)).split(b"\n")
    lines[edited - 1] = lines[edited - 1].replace(b'"running"', b'"verifying"')
    write(root, EVENTS, b"\n".join(lines))
    records, problems = read_log(root)
    problem = only(problems, "chain-broken")
    assert problem.line == edited + 1
    assert f"seq {edited + 1}" in problem.message
    assert len(records) == 6  # every line is still read


def test_removed_middle_line_breaks_chain_and_seq(root: Path) -> None:
    lines = chain(step_lines(5)).split(b"\n")
    del lines[2]
    write(root, EVENTS, b"\n".join(lines))
    _, problems = read_log(root)
    assert (only(problems, "chain-broken").line, only(problems, "seq-gap").line) == (3, 3)
    assert "seq 4 follows seq 2" in only(problems, "seq-gap").message


def test_seq_gap(root: Path) -> None:
    lines = step_lines(4)
    lines[2]["seq"] = 7  # chained correctly: only the seq is wrong
    write(root, EVENTS, chain(lines))
    records, problems = read_log(root)
    assert codes(problems) == ["seq-gap"]
    assert problems[0].line == 3 and "expected 3" in problems[0].message
    assert [r.seq for r in records] == [1, 2, 7, 4]  # 4 after 7: reported once, not again


def test_first_line_without_schema(root: Path) -> None:
    data = chain(step_lines(2)).replace(b'{"schema":1,', b"{", 1)
    write(root, EVENTS, data)
    _, problems = read_log(root)
    assert only(problems, "schema").line == 1
    assert "chain-broken" in codes(problems)  # line 1 changed, so line 2's prev is off


def test_first_line_prev_must_be_genesis(root: Path) -> None:
    data = chain(step_lines(1)).replace(b"0" * 64, b"1" * 64)
    write(root, EVENTS, data)
    _, problems = read_log(root)
    problem = only(problems, "chain-broken")
    assert problem.line == 1 and "64 zeros" in problem.message


def test_log_line_that_is_not_an_object(root: Path) -> None:
    write(root, EVENTS, b"[1, 2]\n")
    assert codes(read_log(root)[1]) == ["schema"]


def test_blank_line_in_a_log(root: Path) -> None:
    lines = chain(step_lines(2)).split(b"\n")
    write(root, EVENTS, lines[0] + b"\n\n" + lines[1] + b"\n")
    records, problems = read_log(root)
    problem = only(problems, "empty")
    assert (problem.line, problem.message) == (2, "line is empty")
    assert len(records) == 2


def test_plan_v3_without_v2(root: Path, open_workspace: Open) -> None:
    built = mission(root, "m")
    built.plan(3)
    problem = only(open_workspace(root).problems(), "plan-gap")
    assert problem.path == "missions/m/plan/v3.json"
    assert "v2" in problem.message


def test_decision_for_a_request_that_does_not_exist(root: Path, open_workspace: Open) -> None:
    built = mission(root, "m")
    built.decision("ghost", digest="sha256:" + "0" * 64)
    problem = only(open_workspace(root).problems(), "orphan-decision")
    assert problem.path == "missions/m/approvals/ghost.toml"


def test_decision_whose_digest_no_longer_matches(root: Path, open_workspace: Open) -> None:
    built = mission(root, "m")
    built.request("r1")
    built.decision("r1")
    assert open_workspace(root).request_status("m", "r1") is RequestStatus.APPROVED
    built.request("r1", args={"target": "prod", "force": True})  # changed after approval
    workspace = open_workspace(root)
    problem = only(workspace.problems(), "stale-decision")
    assert problem.path == "missions/m/approvals/r1.toml"
    assert workspace.request_status("m", "r1") is RequestStatus.STALE


def test_decision_whose_request_copy_was_edited(root: Path, open_workspace: Open) -> None:
    built = mission(root, "m")
    built.request("r1")
    raw = json.loads((built.dir / "approvals/r1.json").read_bytes())
    built.decision("r1", request_json=request_snapshot({**raw, "args": {"target": "dev"}}))
    workspace = open_workspace(root)
    problem = only(workspace.problems(), "decision-snapshot-mismatch")
    assert problem.path == "missions/m/approvals/r1.toml" and problem.severity == "warn"
    assert workspace.request_status("m", "r1") is RequestStatus.APPROVED  # the digest binds

    built.request("r2")
    raw = json.loads((built.dir / "approvals/r2.json").read_bytes())
    built.decision("r2", request_json=request_snapshot(raw))
    codes = [p.code for p in open_workspace(root).problems()]
    assert codes.count("decision-snapshot-mismatch") == 1  # r2's copy is the request


def test_decision_naming_another_request(root: Path, open_workspace: Open) -> None:
    built = mission(root, "m")
    built.request("r1")
    built.request("r2")
    built.decision("r1")
    (root / "missions/m/approvals/r1.toml").rename(root / "missions/m/approvals/r2.toml")
    problem = only(open_workspace(root).problems(), "decision-request-mismatch")
    assert problem.path == "missions/m/approvals/r2.toml"


def test_unterminated_last_line_warns_then_completes(root: Path) -> None:
    data = chain(step_lines(3))
    cut = len(data) - 20
    write(root, EVENTS, data[:cut])
    reader = LogReader(root, EVENTS, Kind.EVENTS)
    first = reader.poll()
    assert [r.seq for r in first.records] == [1, 2]
    pending = reader.pending_problem
    assert pending is not None
    assert (pending.code, pending.line, pending.severity) == ("unterminated-line", 3, "warn")
    with open(root / EVENTS, "ab") as handle:
        handle.write(data[cut:])
    second = reader.poll()
    assert [r.seq for r in second.records] == [3]
    assert second.problems == [] and reader.pending_problem is None


def test_unterminated_line_is_only_a_warning_for_the_workspace(
    state_dir: Path, alpha: Mission, open_workspace: Open
) -> None:
    with open(alpha.dir / "events.jsonl", "ab") as handle:
        handle.write(b'{"seq":3,"at":')
    problem = only(open_workspace(state_dir).problems(), "unterminated-line")
    assert (problem.path, problem.line, problem.severity) == (alpha.rel("events.jsonl"), 3, "warn")


def test_truncated_log_is_detected_and_reread(root: Path) -> None:
    write(root, EVENTS, chain(step_lines(5)))
    reader = LogReader(root, EVENTS, Kind.EVENTS)
    assert len(reader.poll().records) == 5
    write(root, EVENTS, chain(step_lines(2)))  # same inode, shorter
    batch = reader.poll()
    assert batch.reset
    assert batch.problems == [] and batch.notice is not None
    assert (batch.notice.code, batch.notice.severity) == ("log-truncated", "warn")
    assert [r.seq for r in batch.records] == [1, 2]
    assert reader.line_no == 2


def test_replaced_log_is_detected_and_reread(root: Path) -> None:
    write(root, EVENTS, chain(step_lines(2)))
    reader = LogReader(root, EVENTS, Kind.EVENTS)
    reader.poll()
    write(root, "missions/m/new.jsonl", chain(step_lines(4)))
    os.replace(root / "missions/m/new.jsonl", root / EVENTS)  # new inode, longer
    batch = reader.poll()
    assert batch.reset
    assert batch.problems == [] and batch.notice is not None
    assert batch.notice.code == "log-replaced"
    assert [r.seq for r in batch.records] == [1, 2, 3, 4]


def test_log_rewritten_in_place_is_detected_and_reread(root: Path) -> None:
    """Same inode, not shorter: the last line read no longer matches its hash."""
    write(root, EVENTS, chain(step_lines(3)))
    reader = LogReader(root, EVENTS, Kind.EVENTS)
    reader.poll()
    lines = step_lines(4)
    lines[2]["reason"] = "edited"
    with open(root / EVENTS, "r+b") as handle:  # rewrite without a new inode
        handle.write(chain(lines))
    batch = reader.poll()
    assert batch.reset
    assert batch.notice is not None and batch.notice.code == "log-replaced"
    assert [r.seq for r in batch.records] == [1, 2, 3, 4]


def test_over_long_log_line(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store.format.load, "MAX_LINE_BYTES", 300)
    lines = step_lines(4)
    lines[1]["reason"] = "x" * 400
    write(root, EVENTS, chain(lines))
    records, problems = read_log(root)
    assert codes(problems) == ["line-too-long"]  # the chain and seq go on after it
    assert problems[0].line == 2
    assert [r.seq for r in records] == [1, 3, 4]


def test_every_bad_input_at_once_is_still_checked(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole workspace keeps working with every kind of bad input in it."""
    good = mission(root, "good")
    good.step("s1", "running")
    write(root, "missions/bad/intent.toml", b"\xff\xfe")
    write(root, "missions/bad/constraints.toml", "schema = 1\n[budget\n")
    write(root, "missions/bad/plan/v1.json", "[" * 10_000)
    write(root, "missions/bad/plan/v3.json", '{"a": 1, "a": 2}')
    write(root, "missions/bad/handoff.json", "")
    write(root, "missions/bad/events.jsonl", b'{"seq": NaN}\n\x00\x01\n{"seq":')
    write(root, "missions/bad/evidence.jsonl", b"\n\n")
    write(root, "missions/bad/approvals/r1.json", '{"schema": 1, "id": 5}')
    write(root, "missions/bad/approvals/r9.toml", "decision = ")
    write(root, "missions/a..b/intent.toml", "")
    os.symlink(outside, root / "missions" / "link")
    report = check(root)
    assert report.errors > 5
    assert report.missions["good"].problems == []
    assert {"bad-json", "bad-toml", "not-utf8", "empty", "plan-gap", "symlink-escape"} <= set(
        codes(report.all_problems())
    )
