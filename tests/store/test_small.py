"""SMALL v1.0.0: the reference CLI's verdicts on every fixture of tests/fixtures/small,
bad input, incremental progress, and the writer for the human-owned files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.format.records import Settings, validate
from store.format.row import MissionStatus
from store.index.check import check
from store.index.workspace import Workspace
from store.sources.small import lint
from store.sources.small import workspace as small_workspace
from store.sources.small.workspace import SmallWorkspace
from store.sources.small.write import round_trip_update
from store.sources.small.yaml import parse_yaml
from store.writers.human import Conflict, HumanWriter, Invalid, OwnershipError
from tests.small_support import (
    DRIFTED,
    EMPTY_CURRENT_TASK,
    NO_WORKSPACE,
    SMALL_NOW,
    UNREADABLE,
    VALID,
    check_verdicts,
    copy_fixture,
    small_fixture,
    spy_parse_yaml,
)

SETTINGS = validate(Settings, {"schema": 1})


def load(root: Path) -> SmallWorkspace:
    small = SmallWorkspace(root)
    small.apply(".small")
    return small


def codes(small: SmallWorkspace) -> list[str]:
    return [p.code for p in small.problems()]


def errors(small: SmallWorkspace) -> list[str]:
    return [p.code for p in small.problems() if p.severity == "error"]


# ---- the fixtures' verdicts (tests/fixtures/small/README.md) -------------------------------


def test_no_workspace_file_is_valid_but_for_verify() -> None:
    small = load(small_fixture(NO_WORKSPACE))
    assert small.verdicts() == {
        "schema": "valid",
        "lint": "valid",
        "strict": "valid",
        "verify": "invalid",
    }
    assert codes(small) == ["small-workspace-missing"]
    assert small.id == "small:no-workspace-file"
    assert [t.id for t in small.tasks] == ["task-1", "task-2"]


def test_valid_workspace_is_valid_including_strict() -> None:
    small = load(small_fixture(VALID))
    assert small.problems() == []
    assert set(small.verdicts().values()) == {"valid"}
    assert len(small.entries) == 16
    assert len(small.tasks) == 7
    assert small.current_task_id == "task-5"
    assert small.entries[0].timestamp == "2026-03-30T09:00:00.412000000Z"
    spike = small.entries[1]  # an earlier run's task: outside S2's replayId scope
    assert spike.task_id == "spike-1" and spike.task_id not in {t.id for t in small.tasks}
    summary = small.summary(SMALL_NOW, SETTINGS)
    assert summary is not None
    assert summary.status is MissionStatus.BLOCKED
    assert summary.current_step == "task-5" and summary.step_state == "blocked"
    assert summary.problems == 0


def test_drifted_workspace_fails_each_strict_rule_once() -> None:
    small = load(small_fixture(DRIFTED))
    strict = {p.code: p.message for p in small.problems()}
    assert list(strict) == ["small-S1", "small-S2", "small-S3", "small-S4"]
    assert "task-2 (Add the new names" in strict["small-S1"]
    assert "unknown progress task ids: task-3" in strict["small-S2"]
    assert "'task-3'" in strict["small-S3"]
    assert ".small/drafts/" in strict["small-S4"]
    assert small.verdicts()["strict"] == "invalid"
    assert small.verdicts()["verify"] == "valid"


def test_empty_current_task_id_is_invalid() -> None:
    small = load(small_fixture(EMPTY_CURRENT_TASK))
    problems = small.problems()
    assert {p.code for p in problems} == {"small-schema", "small-current-task"}
    assert all(p.path == ".small/handoff.small.yml" and p.line == 5 for p in problems)
    assert small.verdicts()["lint"] == "invalid"
    assert small.verdicts()["strict"] == "valid"


def test_a_file_that_cannot_be_read_fails_every_check() -> None:
    small = load(small_fixture(UNREADABLE))
    [problem] = small.problems()
    assert (problem.code, problem.path, problem.line) == (
        "small-duplicate-key",
        ".small/intent.small.yml",
        10,
    )
    assert set(small.verdicts().values()) == {"invalid"}


@pytest.mark.parametrize(
    ("name", "exit_code", "verdict"),
    [
        (VALID, 0, "schema valid, lint valid, strict valid, verify valid"),
        (NO_WORKSPACE, 1, "schema valid, lint valid, strict valid, verify invalid"),
        (DRIFTED, 1, "schema valid, lint valid, strict invalid, verify valid"),
        (EMPTY_CURRENT_TASK, 1, "schema invalid, lint invalid, strict valid, verify invalid"),
        (UNREADABLE, 1, "schema invalid, lint invalid, strict invalid, verify invalid"),
    ],
)
def test_hud_check_verdicts(
    name: str, exit_code: int, verdict: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_verdicts(small_fixture(name), capsys) == (exit_code, verdict)


def test_a_state_directory_that_is_the_small_folder_itself() -> None:
    root = small_fixture(NO_WORKSPACE) / ".small"
    workspace = Workspace(root)
    workspace.scan()
    assert workspace.small.id == "small:no-workspace-file"
    assert workspace.unknown == {}
    assert [p.path for p in workspace.problems()] == ["workspace.small.yml"]
    report = check(root)
    assert list(report.missions) == ["small:no-workspace-file"]


# ---- bad input: problems with hints, never a crash -----------------------------------------


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """A valid workspace written as the spec's example is: no-workspace-file plus the file."""
    root = copy_fixture(NO_WORKSPACE, tmp_path)
    (root / ".small" / "workspace.small.yml").write_text(
        'small_version: "1.0.0"\nkind: repo-root\n'
    )
    return root


def edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / ".small" / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_copy_of_spec_with_a_workspace_file_is_valid(spec: Path) -> None:
    assert load(spec).problems() == []


def test_unquoted_small_version_is_a_warning_with_a_hint(spec: Path) -> None:
    edit(spec, "intent.small.yml", 'small_version: "1.0.0"', "small_version: 1.0.0")
    small = load(spec)
    [problem] = small.problems()
    assert problem.code == "small-version-unquoted" and problem.severity == "warn"
    assert problem.line == 1 and '"1.0.0"' in problem.hint
    assert set(small.verdicts().values()) == {"valid"}  # the reference reads a string too


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("small_version: 1.0", 'the number 1.0, not the string "1.0.0"'),
        ("small_version: 1", 'the number 1, not the string "1.0.0"'),
        ('small_version: "2.0.0"', "must be exactly"),
        ("# no small_version", "got: nothing"),
    ],
)
def test_wrong_small_version_is_an_error(spec: Path, written: str, message: str) -> None:
    edit(spec, "intent.small.yml", 'small_version: "1.0.0"', written)
    small = load(spec)
    version = [p for p in small.problems() if p.code == "small-version"]
    assert len(version) == 1 and message in version[0].message
    assert version[0].hint
    assert small.verdicts()["lint"] == "invalid"


def test_a_v0_1_file_is_named_as_such(spec: Path) -> None:
    edit(spec, "plan.small.yml", 'small_version: "1.0.0"', 'small_version: "0.1"')
    small = load(spec)
    [v01] = [p for p in small.problems() if p.code == "small-v0.1"]
    assert "v0.1 is deprecated" in v01.message and "migrate" in v01.hint
    assert v01.path == ".small/plan.small.yml" and v01.line == 1


def test_unquoted_timestamps_stay_strings_and_are_reported(spec: Path) -> None:
    edit(
        spec,
        "progress.small.yml",
        'timestamp: "2026-03-02T09:15:00.000000000Z"',
        "timestamp: 2026-03-02T09:15:00.000000001Z",
    )
    small = load(spec)
    assert small.entries[0].timestamp == "2026-03-02T09:15:00.000000001Z"  # nanoseconds kept
    [problem] = small.problems()
    assert problem.code == "small-timestamp-unquoted" and problem.severity == "warn"
    assert problem.line == 5 and "datetime" in problem.message and "quote" in problem.hint
    assert set(small.verdicts().values()) == {"valid"}


def test_unknown_keys_are_reported_by_schema_and_lint(spec: Path) -> None:
    path = spec / ".small" / "intent.small.yml"
    path.write_text(path.read_text() + "notes: extra\n")
    edit(spec, "progress.small.yml", '    commit: "5e0c7d2"', '    commit: "5e0c7d2"\n    by: me')
    small = load(spec)
    found = {(p.code, p.path, p.line) for p in small.problems()}
    assert ("small-unknown-key", ".small/intent.small.yml", 15) in found
    assert ("small-schema", ".small/intent.small.yml", 15) in found
    assert ("small-schema", ".small/progress.small.yml", 9) in found
    assert small.verdicts()["schema"] == "invalid"


def test_constraint_and_task_lint(spec: Path) -> None:
    """The reference's array rules: each problem at its line, an object's together."""
    edit(spec, "constraints.small.yml", 'rule: "No customer data in .small artifacts"', 'rule: " "')
    edit(spec, "constraints.small.yml", 'severity: "error"', 'severity: "fatal"')
    edit(spec, "plan.small.yml", 'title: "Map the export job\'s checkpoints"', 'title: ""')
    lint = [
        (p.path.split("/")[-1], p.line, p.message, p.hint)
        for p in load(spec).problems()
        if p.code == "small-lint"
    ]
    assert lint == [
        ("constraints.small.yml", 5, "constraints[0].rule must be a non-empty string",
         "give the constraint a rule"),
        ("constraints.small.yml", 6, 'constraints[0].severity must be "error" or "warn"',
         'use severity: "error" or severity: "warn"'),
        ("plan.small.yml", 5, "tasks[0].title must be a non-empty string",
         "give the task a title"),
    ]  # fmt: skip

    edit(spec, "plan.small.yml", "tasks:\n", "tasks: []\nold_tasks:\n")
    messages = {p.message for p in load(spec).problems()}
    assert "plan.tasks must be a non-empty array" in messages


def test_missing_files(spec: Path) -> None:
    (spec / ".small" / "plan.small.yml").unlink()
    (spec / ".small" / "workspace.small.yml").unlink()
    small = load(spec)
    assert sorted(codes(small)) == ["small-missing", "small-workspace-missing"]
    assert small.verdicts()["verify"] == "invalid"
    assert small.tasks == []


@pytest.mark.parametrize(
    ("content", "code", "line"),
    [
        (b"small_version: '1.0.0'\nentries: [\n", "small-yaml", 3),
        (b"small_version: '1.0.0'\n\xff\xfe\n", "small-not-utf8", 2),
        (b"", "small-lint", None),
        (b"- just\n- a list\n", "small-lint", 1),
        (b"a: &a [*a, *a]\n", "small-yaml", None),
        (b"a: 1\na: 2\n", "small-duplicate-key", 2),
    ],
)
def test_unreadable_progress_is_a_problem(
    spec: Path, content: bytes, code: str, line: int | None
) -> None:
    (spec / ".small" / "progress.small.yml").write_bytes(content)
    small = load(spec)
    found = [p for p in small.problems() if p.code == code]
    assert found and found[0].line == line and found[0].hint
    assert small.entries == []
    assert small.summary(SMALL_NOW, SETTINGS) is not None


def test_progress_entry_lint(spec: Path) -> None:
    (spec / ".small" / "progress.small.yml").write_text(
        """small_version: "1.0.0"
owner: "agent"
entries:
  - task_id: "task-1"
    timestamp: "2025-01-04T10:00:00.000000002Z"
    evidence: "first"
  - task_id: "task-1"
    timestamp: "2025-01-04T10:00:00.000000001Z"
    evidence: "earlier than the previous one"
  - task_id: "task-1"
    timestamp: "2025-01-04T10:00:05Z"
    evidence: "no fractional seconds"
  - task_id: "task-1"
    timestamp: "2025-01-04T10:00:06.5Z"
    notes: "notes alone are no evidence"
  - task_id: ""
    timestamp: "2025-01-04T10:00:07.5Z"
    commit: "abc1234"
"""
    )
    small = load(spec)
    found = [(p.code, p.line) for p in small.problems() if p.code != "small-schema"]
    assert found == [
        ("small-timestamp", 8),
        ("small-timestamp", 11),
        ("small-evidence", 13),
        ("small-task-id", 16),
    ]
    assert "strictly increasing" in small.problems()[0].message


def test_strict_s1_to_s4(spec: Path) -> None:
    edit(spec, "plan.small.yml", 'status: "pending"', 'status: "blocked"')  # task-2: no entry
    edit(spec, "handoff.small.yml", 'current_task_id: "task-2"', 'current_task_id: "task-9"')
    path = spec / ".small" / "progress.small.yml"
    path.write_text(
        path.read_text()
        + '  - task_id: "task-22"\n    timestamp: "2026-03-03T10:00:00.1Z"\n'
        + '    evidence: "x"\n'
        + "    replayId: 47b4395364321165533753915cb95d5aa91ee0a13e0d65291fc3dd137fddab1a\n"
        + '  - task_id: "meta/init"\n    timestamp: "2026-03-03T10:00:01.1Z"\n    evidence: "y"\n'
    )
    (spec / ".small" / "notes.md").write_text("scratch")
    (spec / ".small" / "archive").mkdir()
    small = load(spec)
    strict = {p.code: p for p in small.problems() if p.code.startswith("small-S")}
    assert set(strict) == {"small-S1", "small-S2", "small-S3", "small-S4"}
    assert "task-2 (Write the resumable exporter) [no progress entry]" in strict["small-S1"].message
    assert "task-22 (closest: task-2)" in strict["small-S2"].message
    assert "'task-9'" in strict["small-S3"].message
    assert ".small/archive/" in strict["small-S4"].message
    assert ".small/notes.md" in strict["small-S4"].message
    assert "small fix --runtime-layout" in strict["small-S4"].hint
    assert small.verdicts() == {
        "schema": "valid",
        "lint": "valid",
        "strict": "invalid",
        "verify": "valid",
    }


def test_wrong_owner(spec: Path) -> None:
    edit(spec, "handoff.small.yml", 'owner: "agent"', 'owner: "human"')
    [owner] = [p for p in load(spec).problems() if p.code == "small-owner"]
    assert owner.line == 2 and 'owner: "agent"' in owner.hint


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_are_problems_never_a_crash(data: bytes) -> None:
    doc = parse_yaml("progress.small.yml", data)
    if doc.problems:
        assert all(p.path == "progress.small.yml" for p in doc.problems)
    lint.file_problems("progress", "progress.small.yml", doc)


# ---- live: only the changed file, appended entries only ------------------------------------


def test_appended_entries_are_parsed_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_fixture(VALID, tmp_path)
    small = load(root)
    generation = small.generation
    parsed: list[int] = []
    real = small_workspace.parse_yaml

    def spy(relpath: str, data: bytes, **kw: int) -> object:
        parsed.append(len(data))
        return real(relpath, data, **kw)

    monkeypatch.setattr(small_workspace, "parse_yaml", spy)
    path = root / ".small" / "progress.small.yml"
    with path.open("a") as handle:
        handle.write(
            "    - command: echo appended\n"
            "      evidence: appended while open\n"
            "      status: completed\n"
            "      task_id: task-7\n"
            '      timestamp: "2026-04-02T08:00:00.000000001Z"\n'
        )
    assert small.apply(".small/progress.small.yml") == {small.id}
    assert len(parsed) == 1 and parsed[0] < 300 < path.stat().st_size  # the appended text
    assert small.generation == generation
    assert len(small.entries) == 17
    assert small.entries[-1].command == "echo appended"
    assert small.entries[-1].line == 106
    assert small.problems() == []

    with path.open("a") as handle:  # out of order: reported at its line
        handle.write(
            "    - evidence: late\n      task_id: task-7\n"
            '      timestamp: "2026-04-02T07:00:00.000000001Z"\n'
        )
    small.apply(".small/progress.small.yml")
    [late] = small.problems()
    assert late.code == "small-timestamp" and late.line == 113  # its timestamp line


def test_a_rewrite_of_progress_reparses_it(tmp_path: Path) -> None:
    root = copy_fixture(VALID, tmp_path)
    small = load(root)
    generation = small.generation
    path = root / ".small" / "progress.small.yml"
    path.write_text(path.read_text().replace("small init", "small  init", 1))
    small.apply(".small/progress.small.yml")
    assert small.generation == generation + 1
    assert small.entries[0].command == "small  init"


def test_a_change_reparses_only_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_fixture(VALID, tmp_path)
    workspace = Workspace(root, clock=lambda: SMALL_NOW)
    workspace.scan()
    seen = spy_parse_yaml(monkeypatch)
    handoff = root / ".small" / "handoff.small.yml"
    handoff.write_text(
        handoff.read_text().replace("current_task_id: task-5", "current_task_id: task-6")
    )
    assert workspace.apply([".small/handoff.small.yml"]) == {"small:valid"}
    assert seen == [".small/handoff.small.yml"]
    assert workspace.external_summaries()["small:valid"].current_step == "task-6"


# ---- writing what humans own ---------------------------------------------------------------

COMMENTED = """# What we are doing, and why (kept by every save)
small_version: "1.0.0"  # quoted, always
owner: 'human'
intent: "Add resumable exports to the ledger service"
scope:
  include:
    - "ledger/export/"  # the code
  exclude: []
success_criteria:
  - "An interrupted export resumes where it stopped"
"""


@pytest.fixture
def writer(spec: Path) -> HumanWriter:
    return HumanWriter(spec, "ana", "local")


def sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_replace_small_keeps_comments_and_quotes_small_version(
    spec: Path, writer: HumanWriter
) -> None:
    path = spec / ".small" / "intent.small.yml"
    edited = COMMENTED.replace('small_version: "1.0.0"', "small_version: 1.0.0")
    saved = writer.replace_small(".small/intent.small.yml", edited, sha(path))
    text = path.read_text()
    assert saved.changed and text == COMMENTED  # quoted again, comments and quotes kept
    assert saved.sha256 == sha(path)
    assert [p.name for p in path.parent.iterdir() if ".tmp" in p.name] == []
    assert load(spec).problems() == []


def test_round_trip_update_keeps_comments_and_quoted_version() -> None:
    def add(data: dict[str, list[str]]) -> None:
        data["success_criteria"].append("Strict check passes")

    text = round_trip_update(COMMENTED.replace('"1.0.0"', "1.0.0"), add)
    lines = text.splitlines()
    assert lines[1].split() == ["small_version:", '"1.0.0"', "#", "quoted,", "always"]
    expected = (COMMENTED + "  - Strict check passes\n").splitlines()
    assert lines[:1] + lines[2:] == expected[:1] + expected[2:]


@pytest.mark.parametrize(
    "relpath",
    [
        ".small/plan.small.yml",
        ".small/progress.small.yml",
        ".small/handoff.small.yml",
        ".small/workspace.small.yml",
        ".small/../.small/intent.small.yml",
        "intent.small.yml",
        "missions/a/intent.toml",
    ],
)
def test_replace_small_refuses_every_other_file(writer: HumanWriter, relpath: str) -> None:
    with pytest.raises(OwnershipError):
        writer.replace_small(relpath, COMMENTED, "0" * 64)


def test_replace_small_refuses_invalid_text_with_its_line(spec: Path, writer: HumanWriter) -> None:
    path = spec / ".small" / "intent.small.yml"
    before = path.read_bytes()
    with pytest.raises(Invalid) as caught:
        writer.replace_small(
            ".small/intent.small.yml", COMMENTED.replace("'human'", "agent"), sha(path)
        )
    assert caught.value.line == 3 and "owner" in str(caught.value)
    with pytest.raises(Invalid) as caught:
        writer.replace_small(".small/intent.small.yml", "intent: [\n", sha(path))
    assert caught.value.line == 2
    assert path.read_bytes() == before


def test_replace_small_conflict_names_both_sides(spec: Path, writer: HumanWriter) -> None:
    path = spec / ".small" / "constraints.small.yml"
    loaded = sha(path)
    path.write_text(path.read_text().replace("No customer data", "Never customer data"))
    mine = path.read_text().replace("Never customer data", "No customer data at all")
    with pytest.raises(Conflict) as caught:
        writer.replace_small(".small/constraints.small.yml", mine, loaded)
    assert "Never customer data" in caught.value.theirs and caught.value.yours == mine
    assert caught.value.theirs_sha256 == sha(path)


def test_replace_small_keeps_the_file_mode(spec: Path, writer: HumanWriter) -> None:
    path = spec / ".small" / "intent.small.yml"
    path.chmod(0o640)
    writer.replace_small(".small/intent.small.yml", COMMENTED, sha(path))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_replace_small_when_the_state_directory_is_the_small_folder(spec: Path) -> None:
    root = spec / ".small"
    writer = HumanWriter(root, "ana", "local")
    path = root / "intent.small.yml"
    assert writer.replace_small("intent.small.yml", COMMENTED, sha(path)).changed
    with pytest.raises(OwnershipError):
        writer.replace_small(".small/intent.small.yml", COMMENTED, sha(path))


def test_a_project_folder_with_small_has_no_unknown_files(spec: Path) -> None:
    (spec / "README.md").write_text("# project\n")
    (spec / "src").mkdir()
    (spec / "src" / "main.go").write_text("package main\n")
    workspace = Workspace(spec, clock=lambda: SMALL_NOW)
    workspace.scan()
    assert workspace.unknown == {}
    assert workspace.problems() == []
    assert list(workspace.external_summaries()) == ["small:no-workspace-file"]
