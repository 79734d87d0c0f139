"""Personal tokens of `hud web`: only their hash at rest, a name and a role each, the
file checked as authorized_keys is (StrictModes), a wrong token matching no one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hud.web.sessions import Sessions
from hud.web.tokens import PREFIX, Holder, Tokens, add, digest


def test_a_token_is_kept_only_as_its_hash(tmp_path: Path) -> None:
    path = tmp_path / "web" / "tokens"
    token = add(path, "bob@desk", "approver")
    assert token.startswith(PREFIX) and len(token) > 40
    text = path.read_text()
    assert token not in text and text == f"bob@desk approver {digest(token)}\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    tokens = Tokens.read(path)
    assert tokens.holder(token) == Holder("bob@desk", "approver")
    assert tokens.holder(token[:-1]) is None and tokens.holder("") is None
    assert tokens.holder(digest(token)) is None  # the file's content is no token


def test_each_person_once_with_a_plain_name_and_a_role(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    alice = add(path, "alice", "reviewer")
    bob = add(path, "bob", "operator")
    assert alice != bob
    tokens = Tokens.read(path)
    assert tokens.holder(alice) == Holder("alice", "reviewer")
    assert tokens.holder(bob) == Holder("bob", "operator")
    with pytest.raises(ValueError, match="already has a token"):
        add(path, "alice", "approver")
    with pytest.raises(ValueError, match="not a plain name"):
        add(path, "eve\nmallory approver sha256:" + "0" * 64, "reviewer")
    with pytest.raises(ValueError, match="not a role"):
        add(path, "carol", "admin")  # type: ignore[arg-type]


def test_bad_lines_are_skipped_and_said(tmp_path: Path) -> None:
    good = "good-token"
    text = "\n".join(
        [
            "# comment",
            f"bob approver {digest(good)}",
            f"eve admin {digest('x')}",  # no such role
            f"eve approver {digest('x')[:-1]}",  # not a digest
            f"bad name reviewer {digest('x')}",
            "",
        ]
    )
    tokens = Tokens(text)
    assert tokens.holder(good) == Holder("bob", "approver")
    assert tokens.holder("x") is None
    assert [p.split(":")[0] for p in tokens.problems] == ["line 3", "line 4", "line 5"]


def test_a_line_without_its_newline_gets_one(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"bob approver {digest('b')}")
    path.chmod(0o600)
    carol = add(path, "carol", "reviewer")
    tokens = Tokens.read(path)
    assert tokens.holder("b") == Holder("bob", "approver")
    assert tokens.holder(carol) == Holder("carol", "reviewer")


@pytest.mark.parametrize("how", ["group-writable", "symlink", "fifo", "folder-writable"])
def test_a_file_others_could_change_is_refused_whole(tmp_path: Path, how: str) -> None:
    folder = tmp_path / "conf"
    folder.mkdir(mode=0o700)
    path = folder / "tokens"
    real = folder / "real"
    real.write_text(f"bob approver {digest('b')}\n")
    real.chmod(0o600)
    if how == "group-writable":
        real.rename(path)
        path.chmod(0o620)
    elif how == "symlink":
        path.symlink_to(real)
    elif how == "fifo":
        os.mkfifo(path)
    else:
        real.rename(path)
        folder.chmod(0o777)
    tokens = Tokens.read(path)
    assert tokens.refused is not None and tokens.holder("b") is None
    with pytest.raises(ValueError):
        add(path, "carol", "reviewer")


def test_sessions_end_on_time_and_are_bounded() -> None:
    sessions = Sessions(lifetime=10, limit=2)
    bob = Holder("bob", "approver")
    first = sessions.start(bob, now=0)
    assert sessions.get(first.id, now=9.9) == first
    assert sessions.get(first.id, now=10) is None
    assert sessions.get(first.id, now=0) is None  # gone for good
    a, b = sessions.start(bob, now=1), sessions.start(bob, now=2)
    c = sessions.start(bob, now=3)  # the one closest to its end makes room
    assert sessions.get(a.id, now=3) is None and sessions.get(b.id, now=3) == b
    assert sessions.get(c.id, now=3) == c
    assert sessions.get(None, now=3) is None and sessions.get("forged", now=3) is None
