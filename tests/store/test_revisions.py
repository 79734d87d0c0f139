"""store.writers.revisions: current + history/*.toml with who and when; diffs; budget edits."""

from __future__ import annotations

import hashlib
import os
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from store.format.layout import Kind
from store.writers.human import HumanWriter
from store.writers.revisions import diff_lines, revisions
from store.writers.toml_edit import set_table_value

T1 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
T2 = datetime(2025, 3, 2, 8, 30, tzinfo=UTC)
T3 = datetime(2025, 3, 3, 17, 5, tzinfo=UTC)
INTENT = "missions/m1/intent.toml"
CONSTRAINTS = "missions/m1/constraints.toml"


def writer(root: Path, user: str, at: datetime) -> HumanWriter:
    return HumanWriter(root, user, "local", clock=lambda: at)


def edit(root: Path, relpath: str, user: str, at: datetime, old: str, new: str) -> None:
    text = (root / relpath).read_text()
    sha = hashlib.sha256(text.encode()).hexdigest()
    writer(root, user, at).replace(relpath, text.replace(old, new), sha)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    writer(tmp_path, "alice", T1).create_mission(
        "m1", {"title": "Ship", "objective": "ship it"}, {"budget": {"usd": 10.0}}
    )
    return tmp_path


def test_a_new_mission_has_one_revision_of_each_document(root: Path) -> None:
    found = revisions(root, "m1")
    assert [(r.kind, r.number, r.current, r.action, r.by, r.at) for r in found] == [
        (Kind.INTENT, 1, True, "created", "alice", T1),
        (Kind.CONSTRAINTS, 1, True, "", "", None),
    ]
    assert found[0].relpath == INTENT and found[0].name == "intent r1 (current)"
    assert 'objective = "ship it"' in (found[0].text or "")


def test_edits_are_listed_oldest_first_with_who_and_when(root: Path) -> None:
    edit(root, INTENT, "bob", T2, "ship it", "ship it safely")
    edit(root, INTENT, "carol", T3, "safely", "safely, by Friday")
    edit(root, CONSTRAINTS, "bob", T2, "usd = 10.0", "usd = 20.0")
    found = revisions(root, "m1")
    assert [(r.kind.value, r.number, r.current, r.action, r.by, r.at) for r in found] == [
        ("intent", 1, False, "created", "alice", T1),
        ("intent", 2, False, "edited", "bob", T2),
        ("intent", 3, True, "edited", "carol", T3),
        ("constraints", 1, False, "", "", None),
        ("constraints", 2, True, "edited", "bob", T2),
    ]
    assert [r.relpath for r in found][:2] == [
        "missions/m1/history/intent.r1.toml",
        "missions/m1/history/intent.r2.toml",
    ]
    # "was the intent changed, by whom, when, and how?"
    first, _, last = found[:3]
    diff = diff_lines(first, last)
    assert diff[:2] == ["--- intent r1", "+++ intent r3 (current)"]
    assert '-objective = "ship it"' in diff
    assert '+objective = "ship it safely, by Friday"' in diff


def test_history_names_beat_the_revision_field_and_bad_files_are_problems(root: Path) -> None:
    history = root / "missions/m1/history"
    history.mkdir()
    (history / "intent.r7.toml").write_text('schema = 1\ntitle = "x"\nrevision = 3\n')
    (history / "intent.r8.toml").write_text("title = = broken\n")
    (history / "intent.r9.toml").write_bytes(b"\xff\xfe")
    (history / "notes.txt").write_text("not a revision")
    (history / "intent.r10.toml").symlink_to("/etc/hostname")
    found = {r.relpath.rsplit("/", 1)[-1]: r for r in revisions(root, "m1")}
    assert "notes.txt" not in found
    assert found["intent.r7.toml"].number == 7
    assert found["intent.r8.toml"].problem is not None
    assert found["intent.r8.toml"].problem.line == 1
    assert found["intent.r8.toml"].text == "title = = broken\n"
    assert found["intent.r9.toml"].text is None
    assert found["intent.r9.toml"].problem is not None
    assert found["intent.r10.toml"].text is None  # a symlink out of the directory is not read
    order = [r.number for r in revisions(root, "m1") if r.kind is Kind.INTENT]
    assert order == [7, 8, 9, 10, 1]  # history by number, then the current file


def test_a_mission_without_documents_has_no_revisions(tmp_path: Path) -> None:
    (tmp_path / "missions/m2").mkdir(parents=True)
    assert revisions(tmp_path, "m2") == []
    assert revisions(tmp_path, "absent") == []


def test_string_timestamps_are_read_too(root: Path) -> None:
    (root / INTENT).write_text(
        'schema = 1\ntitle = "x"\nrevision = 4\n'
        'edited_by = "dan"\nedited_at = "2025-03-03T17:05:00Z"\n'
    )
    current = revisions(root, "m1")[0]
    assert (current.number, current.by, current.at) == (4, "dan", T3)


# ---- minimal [budget] edits ---------------------------------------------------------------------

CONSTRAINTS_TEXT = """\
schema = 1  # keep me

# limits agreed with finance
[budget]
usd = 10.0   # dollars
tokens = 100_000
label = "a # not a comment"

# approvals
[approval]
auto = ["read_only"]
"""


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in new.splitlines() if line not in old.splitlines()]


def test_changing_a_limit_rewrites_only_its_line_and_keeps_the_comment() -> None:
    new = set_table_value(CONSTRAINTS_TEXT, "budget", "usd", 25)
    assert new is not None
    assert changed_lines(CONSTRAINTS_TEXT, new) == ["usd = 25   # dollars"]
    assert len(new.splitlines()) == len(CONSTRAINTS_TEXT.splitlines())
    new = set_table_value(CONSTRAINTS_TEXT, "budget", "label", "b # still not")
    assert new is not None and tomllib.loads(new)["budget"]["label"] == "b # still not"


def test_a_missing_limit_is_added_at_the_end_of_its_table() -> None:
    new = set_table_value(CONSTRAINTS_TEXT, "budget", "steps", 40)
    assert new is not None
    lines = new.splitlines()
    assert lines[lines.index('label = "a # not a comment"') + 1] == "steps = 40"
    assert lines[lines.index("steps = 40") + 2] == "# approvals"
    assert tomllib.loads(new)["approval"] == {"auto": ["read_only"]}


def test_a_limit_is_removed_and_a_missing_table_is_appended() -> None:
    new = set_table_value(CONSTRAINTS_TEXT, "budget", "tokens", None)
    assert new is not None and "tokens" not in new
    assert changed_lines(new, CONSTRAINTS_TEXT) == ["tokens = 100_000"]
    assert set_table_value(CONSTRAINTS_TEXT, "budget", "steps", None) == CONSTRAINTS_TEXT
    appended = set_table_value("schema = 1\n", "budget", "deadline", T2)
    assert appended == "schema = 1\n\n[budget]\ndeadline = 2025-03-02 08:30:00+00:00\n"


def test_crlf_is_kept() -> None:
    text = "schema = 1\r\n[budget]\r\nusd = 1\r\n"
    assert set_table_value(text, "budget", "usd", 2) == "schema = 1\r\n[budget]\r\nusd = 2\r\n"
    assert set_table_value(text, "budget", "steps", 3) == text + "steps = 3\r\n"


@pytest.mark.parametrize(
    "text",
    [
        "schema = 1\nbudget.usd = 1\n",  # dotted keys
        "schema = 1\nbudget = { usd = 1 }\n",  # inline table
        "schema = 1\n[budget]\nusd = [\n  1,\n]\n",  # a multi-line value
        "schema = 1\nbudget = 3\n",  # not a table
        "schema = = 1\n",  # not TOML
    ],
)
def test_no_safe_edit_means_none(text: str) -> None:
    assert set_table_value(text, "budget", "usd", 5) is None


def test_revisions_do_not_follow_a_history_folder_symlink(root: Path, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "intent.r5.toml").write_text('schema = 1\ntitle = "secret"\n')
    os.symlink(outside, root / "missions/m1/history")
    leaked = [r for r in revisions(root, "m1") if r.number == 5]
    assert all(r.text is None and r.problem is not None for r in leaked)
