"""store.writers.human: ownership, atomic and write-once writes, optimistic edits, decisions."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from store.format.layout import Kind, Owner, classify, history_path, is_transient
from store.format.load import load_document
from store.format.records import Constraints, Decision, Intent, request_digest, validate
from store.writers.human import (
    AlreadyDecided,
    AlreadyExists,
    Conflict,
    HumanWriteError,
    HumanWriter,
    Invalid,
    OwnershipError,
    writer_for,
)

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
INTENT = "missions/m1/intent.toml"
CONSTRAINTS = "missions/m1/constraints.toml"
REQUEST: dict[str, Any] = {
    "schema": 1,
    "id": "r1",
    "step": "s1",
    "plan_version": 1,
    "tool": "deploy",
    "args": {"target": "prod", "ünïcode": "✓", "n": 3},
    "risk": "external_write",
    "summary": "ship it",
    "requested_by": "agent",
    "requested_at": "2025-03-01T11:00:00Z",
}


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def make_writer(root: Path, user: str = "alice") -> HumanWriter:
    return HumanWriter(root, user, "local /dev/pts/1", clock=lambda: NOW)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_writer(tmp_path).create_mission(
        "m1",
        {"title": "Ship", "objective": "ship the thing"},
        {"budget": {"usd": 10.0, "tokens": None}},
    )
    (tmp_path / "missions/m1/approvals").mkdir()
    return tmp_path


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# ---- ownership ----------------------------------------------------------------------------

MACHINE_OWNED = [
    "missions/m1/plan/v1.json",
    "missions/m1/events.jsonl",
    "missions/m1/evidence.jsonl",
    "missions/m1/approvals/r1.json",
    "missions/m1/handoff.json",
    "missions/m1/artifacts/out.toml",
]
ESCAPING_OR_UNKNOWN = [
    "missions/m1/notes.toml",
    "missions/m1/plan/v1.toml",
    "missions/m1/intent.json",
    "README.md",
    "../intent.toml",
    "missions/m1/../m2/intent.toml",
    "/etc/intent.toml",
    "missions/M1/intent.toml",
]


@pytest.mark.parametrize("relpath", MACHINE_OWNED + ESCAPING_OR_UNKNOWN)
def test_refuses_paths_not_owned_by_humans(root: Path, relpath: str) -> None:
    located = classify(relpath)
    if relpath in MACHINE_OWNED:
        assert located is not None and located.owner in (Owner.AGENT, Owner.SYSTEM)
    else:
        assert located is None
    before = files_under(root)
    writer = make_writer(root)
    with pytest.raises(OwnershipError, match="only human files"):
        writer.create_document(relpath, {"title": "x"})
    with pytest.raises(OwnershipError):
        writer.replace(relpath, 'schema = 1\ntitle = "x"\n', sha(""))
    assert files_under(root) == before


def test_every_machine_kind_is_covered() -> None:
    kinds = {located.kind for p in MACHINE_OWNED if (located := classify(p))}
    assert kinds == {
        Kind.PLAN,
        Kind.EVENTS,
        Kind.EVIDENCE,
        Kind.REQUEST,
        Kind.HANDOFF,
        Kind.ARTIFACT,
    }


def test_refuses_symlinked_folder_leaving_root(root: Path, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (root / "missions/evil").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OwnershipError, match="outside the state directory"):
        make_writer(root).create_document("missions/evil/intent.toml", {"title": "x"})
    with pytest.raises(OwnershipError):
        make_writer(root).create_mission("evil", {"title": "x"})
    assert list(outside.iterdir()) == []


def test_refuses_symlinked_target(root: Path, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside") / "c.toml"
    outside.write_text("schema = 1\n")
    target = root / CONSTRAINTS
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(OwnershipError, match="symlink"):
        make_writer(root).replace(CONSTRAINTS, "schema = 1\n# mine\n", sha(outside.read_bytes()))
    assert outside.read_text() == "schema = 1\n"


def test_write_once_documents_are_not_edited_in_place(root: Path) -> None:
    decision = make_writer(root).decide("m1", "r1", REQUEST, "approve")
    relpath = "missions/m1/approvals/r1.toml"
    text = (root / relpath).read_text()
    with pytest.raises(HumanWriteError, match="only intent and constraints"):
        make_writer(root).replace(relpath, text.replace("approve", "reject"), sha(text))
    assert decision.decision == "approve"


# ---- atomic writes ------------------------------------------------------------------------


def test_atomic_replace_leaves_no_temp_files(root: Path) -> None:
    writer = make_writer(root)
    text = (root / INTENT).read_text()
    for n in range(5):
        new = re.sub(r"title = .*", f'title = "Ship {n}"', text)
        text = writer.replace(INTENT, new, sha(text)).text
    writer.decide("m1", "r1", REQUEST, "approve")
    names = files_under(root)
    assert not [n for n in names if is_transient(n) or ".tmp" in n]
    assert all((located := classify(n)) and located.owner is Owner.HUMAN for n in names)
    assert len([n for n in names if "/history/" in n]) == 5


def test_failed_rename_removes_temp_and_keeps_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (root / INTENT).read_bytes()

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk on fire"):
        make_writer(root).replace(INTENT, before.decode() + "# note\n", sha(before))
    assert (root / INTENT).read_bytes() == before
    assert not [n for n in files_under(root) if ".tmp" in n]


def test_failed_link_removes_temp(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("no links here")

    monkeypatch.setattr(os, "link", broken)
    with pytest.raises(OSError, match="no links here"):
        make_writer(root).decide("m1", "r1", REQUEST, "approve")
    assert not [n for n in files_under(root) if ".tmp" in n or n.endswith("r1.toml")]


# ---- write-once -----------------------------------------------------------------------------


def test_second_decision_loses_and_learns_who_decided(root: Path) -> None:
    make_writer(root, "alice").decide("m1", "r1", REQUEST, "approve")
    on_disk = (root / "missions/m1/approvals/r1.toml").read_bytes()
    with pytest.raises(AlreadyDecided) as caught:
        make_writer(root, "bob").decide("m1", "r1", REQUEST, "reject", reason="no")
    message = str(caught.value)
    assert "already decided (approve) by alice at 2025-03-01T12:00:00+00:00" in message
    assert caught.value.decision is not None and caught.value.decision.decided_by == "alice"
    assert caught.value.text == on_disk.decode()
    assert (root / "missions/m1/approvals/r1.toml").read_bytes() == on_disk


def test_unreadable_existing_decision_still_refuses(root: Path) -> None:
    (root / "missions/m1/approvals/r1.toml").write_text("garbage = [")
    with pytest.raises(AlreadyDecided, match="unreadable") as caught:
        make_writer(root).decide("m1", "r1", REQUEST, "approve")
    assert caught.value.decision is None


def race(root: Path, request: dict[str, Any]) -> dict[str, Decision | AlreadyDecided]:
    """alice and bob decide `request` at the same moment, each with their own writer."""
    barrier = threading.Barrier(2)
    outcome: dict[str, Decision | AlreadyDecided] = {}

    def decide(user: str) -> None:
        writer = make_writer(root, user)
        barrier.wait()
        try:
            outcome[user] = writer.decide("m1", request["id"], request, "approve")
        except AlreadyDecided as exc:
            outcome[user] = exc

    threads = [threading.Thread(target=decide, args=(user,)) for user in ("alice", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcome


def test_decision_race_between_threads_has_one_winner(root: Path) -> None:
    for n in range(20):
        outcome = race(root, {**REQUEST, "id": f"race{n}"})
        winners = [user for user, o in outcome.items() if isinstance(o, Decision)]
        losers = [o for o in outcome.values() if isinstance(o, AlreadyDecided)]
        assert len(winners) == 1 and len(losers) == 1
        assert f"by {winners[0]} at" in str(losers[0])
        saved = tomllib.loads((root / f"missions/m1/approvals/race{n}.toml").read_text())
        assert saved["decided_by"] == winners[0]


def test_new_mission_is_write_once(root: Path) -> None:
    with pytest.raises(AlreadyExists, match="already exists") as caught:
        make_writer(root, "bob").create_mission("m1", {"title": "Other"})
    assert 'title = "Ship"' in caught.value.text
    assert 'created_by = "alice"' in (root / INTENT).read_text()


def test_created_mission_loads_cleanly(root: Path) -> None:
    intent = load_document(root, INTENT, Intent)
    constraints = load_document(root, CONSTRAINTS, Constraints)
    assert intent.problems == [] and constraints.problems == []
    assert intent.record is not None and intent.record.created_by == "alice"
    assert intent.record.created_at == NOW
    assert constraints.record is not None and constraints.record.budget.tokens is None


def test_create_document_validates_before_writing(root: Path) -> None:
    with pytest.raises(Invalid, match="title"):
        make_writer(root).create_document("missions/m2/intent.toml", {"title": ""})
    assert not (root / "missions/m2").exists()


# ---- decisions ------------------------------------------------------------------------------


def test_decision_binds_the_request_digest(root: Path) -> None:
    until = NOW + timedelta(hours=1)
    decision = make_writer(root).decide("m1", "r1", REQUEST, "approve", "looks right", until)
    assert decision.digest == request_digest(REQUEST)
    loaded = load_document(root, "missions/m1/approvals/r1.toml", Decision)
    assert loaded.problems == [] and loaded.record == decision
    assert loaded.raw is not None and loaded.raw["schema"] == 1
    assert decision.decided_by == "alice" and decision.origin == "local /dev/pts/1"
    assert decision.decided_at == NOW and decision.valid_until == until


@pytest.mark.parametrize("reason", ["", "   \n"])
def test_reject_without_reason_is_refused(root: Path, reason: str) -> None:
    with pytest.raises(Invalid, match="rejection needs a reason"):
        make_writer(root).decide("m1", "r1", REQUEST, "reject", reason)
    assert not (root / "missions/m1/approvals/r1.toml").exists()


def test_decision_for_another_request_is_refused(root: Path) -> None:
    with pytest.raises(Invalid, match="not 'r2'"):
        make_writer(root).decide("m1", "r2", REQUEST, "approve")


# ---- optimistic edits -----------------------------------------------------------------------

EDITED = """\
# Why this mission exists: see the runbook.
schema = 1
title   = "Ship"          # keep short
objective = '''
Ship the thing.
revision = 99
[not.a.table]
'''
non_goals = [
  "rewrite",  # never
]

# Scope of the work
[scope]
include = ["src"]
"""


def test_edit_keeps_comments_and_layout(root: Path) -> None:
    loaded = (root / INTENT).read_bytes()
    saved = make_writer(root, "bob").replace(INTENT, EDITED, sha(loaded))
    on_disk = (root / INTENT).read_text()
    assert saved.changed and saved.text == on_disk and saved.sha256 == sha(on_disk)
    stamps = ["revision = 2\n", 'edited_by = "bob"\n', "edited_at = 2025-03-01 12:00:00+00:00\n"]
    lines = on_disk.splitlines(keepends=True)
    assert [line for line in lines if line not in stamps] == EDITED.splitlines(keepends=True)
    at = lines.index(stamps[0])
    assert lines[at : at + 3] == stamps
    assert lines[at + 3 :] == ["\n", "# Scope of the work\n", "[scope]\n", 'include = ["src"]\n']
    record = validate(Intent, tomllib.loads(on_disk))
    assert record.objective == "Ship the thing.\nrevision = 99\n[not.a.table]\n"
    assert (record.revision, record.edited_by, record.edited_at) == (2, "bob", NOW)


def test_later_edit_rewrites_stamp_lines_in_place(root: Path) -> None:
    first = make_writer(root, "bob").replace(INTENT, EDITED, sha((root / INTENT).read_bytes()))
    moved = first.text.replace('edited_by = "bob"\n', "").replace(
        "[scope]\n", "[scope]\n# a comment\n"
    )
    moved = moved.replace("non_goals = [", 'edited_by = "someone"   # stamp\nnon_goals = [')
    carol = HumanWriter(root, "carol", "ssh 10.0.0.1", clock=lambda: NOW + timedelta(days=1))
    second = carol.replace(INTENT, moved, first.sha256)
    expected = (
        moved.replace("revision = 2", "revision = 3")
        .replace('edited_by = "someone"   # stamp', 'edited_by = "carol"')
        .replace("2025-03-01 12:00:00+00:00", "2025-03-02 12:00:00+00:00")
    )
    assert second.text == expected and second.revision == 3


def test_crlf_text_gets_crlf_stamps(root: Path) -> None:
    text = 'schema = 1\r\ntitle = "Ship"\r\n\r\n[scope]\r\ninclude = []\r\n'
    saved = make_writer(root).replace(INTENT, text, sha((root / INTENT).read_bytes()))
    assert "\r\nrevision = 2\r\n" in saved.text and "\n" not in saved.text.replace("\r\n", "")


def test_unchanged_text_writes_nothing(root: Path) -> None:
    path = root / INTENT
    before = path.stat()
    text = path.read_text()
    saved = make_writer(root).replace(INTENT, text, sha(text))
    after = path.stat()
    assert not saved.changed and saved.sha256 == sha(text) and saved.history is None
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not (root / "missions/m1/history").exists()


def test_conflict_carries_both_texts_and_retry_on_theirs(root: Path) -> None:
    loaded = (root / INTENT).read_text()
    theirs = make_writer(root, "bob").replace(
        INTENT, loaded.replace("ship the thing", "bob's objective"), sha(loaded)
    )
    mine = loaded.replace('"Ship"', '"Alice title"')
    with pytest.raises(Conflict, match="changed on disk since it was loaded") as caught:
        make_writer(root, "alice").replace(INTENT, mine, sha(loaded))
    conflict = caught.value
    assert conflict.theirs == theirs.text == (root / INTENT).read_text()
    assert conflict.yours == mine and conflict.theirs_sha256 == theirs.sha256
    on_top = conflict.theirs.replace('"Ship"', '"Alice title"')
    saved = make_writer(root, "alice").replace(INTENT, on_top, conflict.theirs_sha256)
    record = validate(Intent, tomllib.loads(saved.text))
    assert (record.title, record.objective, record.revision) == (
        "Alice title",
        "bob's objective",
        3,
    )


def test_conflict_when_file_was_deleted(root: Path) -> None:
    loaded = (root / CONSTRAINTS).read_text()
    (root / CONSTRAINTS).unlink()
    with pytest.raises(Conflict, match="was deleted") as caught:
        make_writer(root).replace(CONSTRAINTS, loaded + "# x\n", sha(loaded))
    assert caught.value.theirs == "" and caught.value.theirs_sha256 is None
    assert not (root / CONSTRAINTS).exists()


def test_history_keeps_each_previous_revision(root: Path) -> None:
    writer = make_writer(root)
    texts = [(root / CONSTRAINTS).read_text()]
    for usd in (20, 30, 40):
        new = re.sub(r"usd = .*", f"usd = {usd}", texts[-1])
        texts.append(writer.replace(CONSTRAINTS, new, sha(texts[-1])).text)
    for revision, text in enumerate(texts[:-1], 1):
        kept = root / history_path("m1", Kind.CONSTRAINTS, revision)
        assert kept.read_text() == text
        loaded = load_document(root, history_path("m1", Kind.CONSTRAINTS, revision), Constraints)
        assert loaded.record is not None and loaded.record.revision == revision
    assert validate(Constraints, tomllib.loads(texts[-1])).revision == 4
    assert sorted(os.listdir(root / "missions/m1/history")) == [
        "constraints.r1.toml",
        "constraints.r2.toml",
        "constraints.r3.toml",
    ]


def test_history_name_taken_by_other_bytes_uses_next_free(root: Path) -> None:
    history = root / "missions/m1/history"
    history.mkdir()
    (history / "intent.r1.toml").write_text('schema = 1\ntitle = "someone else"\n')
    (history / "intent.r2.toml").write_text('schema = 1\ntitle = "and again"\n')
    loaded = (root / INTENT).read_text()
    saved = make_writer(root).replace(INTENT, loaded + "# edit\n", sha(loaded))
    assert saved.history == "missions/m1/history/intent.r3.toml"
    assert (history / "intent.r3.toml").read_text() == loaded
    assert saved.revision == 4


def test_history_with_identical_bytes_is_reused(root: Path) -> None:
    loaded = (root / INTENT).read_text()
    (root / "missions/m1/history").mkdir()
    (root / "missions/m1/history/intent.r1.toml").write_text(loaded)
    saved = make_writer(root).replace(INTENT, loaded + "# edit\n", sha(loaded))
    assert saved.history == "missions/m1/history/intent.r1.toml" and saved.revision == 2


def test_invalid_toml_is_rejected_with_line_and_column(root: Path) -> None:
    before = (root / INTENT).read_bytes()
    bad = 'schema = 1\ntitle = "Ship"\nobjective = = "x"\n'
    with pytest.raises(Invalid) as caught:
        make_writer(root).replace(INTENT, bad, sha(before))
    assert (caught.value.line, caught.value.column) == (3, 13)
    assert str(caught.value).startswith(f"{INTENT}:3:13: invalid TOML")
    assert (root / INTENT).read_bytes() == before


def test_off_schema_edit_is_rejected_with_line(root: Path) -> None:
    before = (root / CONSTRAINTS).read_bytes()
    bad = 'schema = 1\n\n[budget]\nusd = 5\n\n[[rule]]\nid = "r"\nrule = "x"\nseverity = "fatal"\n'
    with pytest.raises(Invalid, match=r"rule\.0\.severity") as caught:
        make_writer(root).replace(CONSTRAINTS, bad, sha(before))
    assert caught.value.line == 9  # the nested key's own line, inside its table
    with pytest.raises(Invalid, match=r"budget\.usd") as caught:
        make_writer(root).replace(CONSTRAINTS, 'schema = 1\n\n[budget]\nusd = "5"\n', sha(before))
    assert caught.value.line == 4
    with pytest.raises(Invalid, match="nan"):
        make_writer(root).replace(CONSTRAINTS, "schema = 1\n[budget]\nusd = nan\n", sha(before))
    assert (root / CONSTRAINTS).read_bytes() == before


def test_multiline_stamp_value_cannot_be_stamped(root: Path) -> None:
    loaded = (root / INTENT).read_text()
    text = loaded.replace("schema = 1\n", "schema = 1\nedited_by = '''\nx'''\n")
    with pytest.raises(Invalid, match="cannot record who and when"):
        make_writer(root).replace(INTENT, text, sha(loaded))
    assert (root / INTENT).read_text() == loaded
    assert not (root / "missions/m1/history").exists()


# ---- read-only ------------------------------------------------------------------------------


def test_writer_for(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert writer_for(root, read_only=True) is None
    assert writer_for(root / "no-such-dir", read_only=False) is None
    writer = writer_for(root, read_only=False, user="dana", origin="ssh 10.1.2.3")
    assert writer is not None and (writer.user, writer.origin) == ("dana", "ssh 10.1.2.3")
    missions = str(root / "missions")
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != missions)
    assert writer_for(root, read_only=False) is None
