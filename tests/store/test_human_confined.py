"""store.writers.human against a hostile state directory: confined writes, unsafe ids, stale temps.

An agent may swap any folder for a symlink while the HUD writes, put a FIFO or a link
to /dev/zero where the writer reads, name a request `a..b`, or leave temp files of
killed writes. Every write must stay inside the state directory, never block, refuse
unsafe ids, and clean up after killed writers.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from store.format.layout import classify, is_transient, safe_mission_id, safe_request_id
from store.index.approval_checks import id_blocker
from store.writers.human import AlreadyDecided, HumanWriteError, HumanWriter, OwnershipError
from tests.factory import mission
from tests.store.conftest import deadline

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
INTENT = "missions/m1/intent.toml"
SMALL_INTENT = ".small/intent.small.yml"
SMALL_TEXT = """small_version: "1.0.0"
owner: "human"
intent: "Ship the exporter"
scope:
  include: ["src/"]
  exclude: []
success_criteria:
  - "exports resume"
"""
RACE_ITERATIONS = 200
OVER_THE_CAP = 64 * 1024 * 1024 + 1


def request(request_id: str) -> dict[str, Any]:
    return {
        "schema": 1,
        "id": request_id,
        "step": "s1",
        "plan_version": 1,
        "tool": "deploy",
        "args": {"target": "prod"},
        "risk": "external_write",
        "summary": "ship it",
        "requested_by": "agent",
        "requested_at": "2025-03-01T11:00:00Z",
    }


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_writer(root: Path) -> HumanWriter:
    return HumanWriter(root, "alice", "local", clock=lambda: NOW)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    make_writer(state).create_mission("m1", {"title": "Ship"})
    (state / "missions/m1/approvals").mkdir()
    (state / "missions/m1/history").mkdir()
    (state / ".small").mkdir()
    (state / SMALL_INTENT).write_text(SMALL_TEXT)
    return state


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def everything_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# ---- 1. every write is confined ---------------------------------------------------------------

# Swaps a folder with a symlink to a folder outside STATE_DIR, atomically and as fast as
# it can (renameat2 RENAME_EXCHANGE), until killed: at any moment the folder's path is
# either the real folder or the symlink.
SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
real, link = (os.fsencode(arg) for arg in sys.argv[1:3])
print("swapping", flush=True)
while libc.renameat2(-100, real, -100, link, 2) == 0:
    pass
raise OSError(ctypes.get_errno(), "renameat2")
"""


@contextlib.contextmanager
def swapping(folder: Path, target: Path) -> Iterator[None]:
    """Swap `folder` for a symlink to `target` and back, over and over, while in the block."""
    link = folder.with_name(f"{folder.name}-swap")
    link.symlink_to(target, target_is_directory=True)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(folder), str(link)], stdout=subprocess.PIPE, text=True
    )
    assert swapper.stdout is not None and swapper.stdout.readline() == "swapping\n"
    try:
        yield
    finally:
        swapper.kill()
        swapper.wait()
        if folder.is_symlink():  # stopped mid-swap: put the real folder back
            libc = ctypes.CDLL(None, use_errno=True)
            assert libc.renameat2(-100, bytes(folder), -100, bytes(link), 2) == 0
        link.unlink()


def decide(root: Path, n: int) -> None:
    make_writer(root).decide("m1", f"r{n}", request(f"r{n}"), "approve")


def decisions(root: Path) -> Callable[[int], None]:
    return lambda n: decide(root, n)


def new_missions(root: Path) -> Callable[[int], None]:
    return lambda n: make_writer(root).create_mission(f"new{n}", {"title": f"New {n}"})


def edits(relpath: str, edit: Callable[[str, int], str]) -> Callable[[Path], Callable[[int], None]]:
    """Saves of `relpath`, each on top of the last one saved (the swapped folder may hide
    the file from a plain read)."""

    def saves(root: Path) -> Callable[[int], None]:
        loaded = (root / relpath).read_text()
        last = {"text": loaded, "sha256": sha(loaded.encode())}

        def save(n: int) -> None:
            writer = make_writer(root)
            text = edit(last["text"], n)
            if relpath == SMALL_INTENT:
                saved = writer.replace_small(relpath, text, last["sha256"])
            else:
                saved = writer.replace(relpath, text, last["sha256"])
            last.update(text=saved.text, sha256=saved.sha256)

        return save

    return saves


def retitle(text: str, n: int) -> str:
    return re.sub(r'title = ".*"', f'title = "Ship {n}"', text)


def reword(text: str, n: int) -> str:
    return re.sub(r'intent: ".*"', f'intent: "Ship the exporter {n}"', text)


# (the folder swapped, what the outside folder holds so that a write following the
# symlink would succeed, the writes raced against it)
RACES: dict[str, tuple[str, list[str], Callable[[Path], Callable[[int], None]]]] = {
    "approvals": ("missions/m1/approvals", [], decisions),
    "mission": ("missions/m1", ["approvals"], decisions),
    "missions": ("missions", [], new_missions),
    "history": ("missions/m1/history", [], edits(INTENT, retitle)),
    "small": (".small", [], edits(SMALL_INTENT, reword)),
}


@pytest.mark.parametrize("race", RACES)
def test_a_folder_swapped_for_a_symlink_mid_write_never_leaks_a_write(
    root: Path, outside: Path, race: str
) -> None:
    folder, holds, writes = RACES[race]
    for name in holds:
        (outside / name).mkdir()
    write = writes(root)
    outcomes = {"written": 0, "refused": 0}
    with swapping(root / folder, outside):
        for n in range(RACE_ITERATIONS):
            try:
                write(n)
            except HumanWriteError as refused:
                assert type(refused) in (OwnershipError, HumanWriteError), refused
                outcomes["refused"] += 1
            else:
                outcomes["written"] += 1
    assert everything_under(outside) == holds, outcomes  # not a byte, not a temp file
    assert outcomes["refused"] > 0 and outcomes["written"] > 0, outcomes  # it did race


@pytest.mark.parametrize(
    ("swapped", "relpath"),
    [
        ("missions/m1/approvals", "missions/m1/approvals/r1.toml"),
        ("missions/m1", "missions/m1/approvals/r1.toml"),
        ("missions", "missions/m1/approvals/r1.toml"),
    ],
)
def test_a_symlinked_folder_on_the_way_is_named_and_refused(
    root: Path, outside: Path, swapped: str, relpath: str
) -> None:
    (root / swapped).rename(outside / "real")
    (root / swapped).symlink_to(outside / "real", target_is_directory=True)
    before = everything_under(outside)
    with pytest.raises(OwnershipError) as caught:
        make_writer(root).decide("m1", "r1", request("r1"), "approve")
    message = str(caught.value)
    assert f"{relpath} not written: {swapped}: symlink points outside" in message
    assert everything_under(outside) == before


def test_a_symlink_inside_the_state_directory_is_refused_too(root: Path) -> None:
    (root / "missions/m1/history").rmdir()
    (root / "missions/m1/history").symlink_to("approvals", target_is_directory=True)
    loaded = (root / INTENT).read_bytes()
    with pytest.raises(OwnershipError, match="missions/m1/history: is a symlink"):
        make_writer(root).replace(INTENT, loaded.decode() + "# edit\n", sha(loaded))
    assert (root / INTENT).read_bytes() == loaded
    assert os.listdir(root / "missions/m1/approvals") == []


def test_a_file_where_a_folder_belongs_is_refused(root: Path) -> None:
    (root / "missions/m1/approvals").rmdir()
    (root / "missions/m1/approvals").write_text("not a folder")
    with pytest.raises(OwnershipError, match="missions/m1/approvals: is a file, not a folder"):
        make_writer(root).decide("m1", "r1", request("r1"), "approve")


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_dev_zero_link(path: Path) -> None:
    path.symlink_to("/dev/zero")


def make_over_the_cap(path: Path) -> None:
    with path.open("wb") as sparse:
        sparse.truncate(OVER_THE_CAP)


NOT_READABLE = {
    "fifo": (make_fifo, "is a FIFO (named pipe), not a regular file"),
    "link to /dev/zero": (make_dev_zero_link, "symlink points outside the state directory"),
    "over the cap": (make_over_the_cap, "over the 67,108,864 byte cap"),
}


@pytest.mark.parametrize("kind", NOT_READABLE)
@pytest.mark.parametrize("where", ["intent", "history slot", "small intent"])
def test_what_the_writer_reads_first_is_refused_never_blocks(
    root: Path, where: str, kind: str
) -> None:
    make, message = NOT_READABLE[kind]
    loaded = (root / INTENT).read_bytes()
    relpath = {
        "intent": INTENT,
        "history slot": "missions/m1/history/intent.r1.toml",
        "small intent": SMALL_INTENT,
    }[where]
    (root / relpath).unlink(missing_ok=True)
    make(root / relpath)
    writer = make_writer(root)
    with deadline(5), pytest.raises(HumanWriteError) as caught:
        if where == "small intent":
            writer.replace_small(SMALL_INTENT, SMALL_TEXT + "# edit\n", sha(b""))
        else:
            writer.replace(INTENT, loaded.decode() + "# edit\n", sha(loaded))
    assert f"{relpath}: " in str(caught.value) and message in str(caught.value)
    if where == "history slot":
        assert (root / INTENT).read_bytes() == loaded


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_an_unreadable_file_in_a_decisions_place_still_means_decided(root: Path, kind: str) -> None:
    make, _ = NOT_READABLE[kind]
    make(root / "missions/m1/approvals/r1.toml")
    with deadline(5), pytest.raises(AlreadyDecided, match="unreadable") as caught:
        make_writer(root).decide("m1", "r1", request("r1"), "approve")
    assert caught.value.decision is None


# ---- 2. one id check ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "relpath",
    [
        "missions/m1/approvals/a..b.json",
        "missions/m1/approvals/a..b.toml",
        "missions/a..b/intent.toml",
        "missions/a..b/approvals/r1.json",
        "missions/m1/approvals/r1.json\n",
    ],
)
def test_classify_never_yields_an_unsafe_id(relpath: str) -> None:
    assert classify(relpath) is None


def test_an_id_may_end_in_one_dot() -> None:
    located = classify("missions/m1/approvals/a..json")  # the id is "a.", then ".json"
    assert located is not None and located.parts == {"request": "a."}
    assert safe_request_id("a.") and not safe_request_id("a..") and not safe_request_id("r1\n")
    assert safe_mission_id("m" * 64) and not safe_mission_id("m" * 65)


def test_the_writer_refuses_unsafe_ids(root: Path) -> None:
    writer = make_writer(root)
    with pytest.raises(OwnershipError, match=re.escape("unsafe request id 'a..b'")):
        writer.decide("m1", "a..b", request("a..b"), "approve")
    with pytest.raises(OwnershipError, match=re.escape("unsafe mission id 'a..b'")):
        writer.create_mission("a..b", {"title": "x"})
    assert not (root / "missions/m1/approvals/a..b.toml").exists()
    assert not (root / "missions/a..b").exists()


def test_an_unsafe_request_is_not_decidable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mission(tmp_path, "m1").request("a..b", risk="read_only", tool="ls", args={})
    assert main(["decide", str(tmp_path), "m1", "a..b", "approve"]) == 1
    assert "unsafe request id 'a..b'" in capsys.readouterr().err
    assert not (tmp_path / "missions/m1/approvals/a..b.toml").exists()
    assert "must file the request under a safe id" in (id_blocker("m1", "a..b") or "")
    assert id_blocker("m1", "r1") is None


# ---- 3. temp files of killed writes -------------------------------------------------------------

# Decides one request, but stops for good between the fsynced temp file and its link:
# the test kills it there.
KILLED_MID_WRITE = """
import os, sys, time
from pathlib import Path
from store.writers.human import HumanWriter

def stuck(*args, **kwargs):
    print("in the write window", flush=True)
    time.sleep(60)

os.link = stuck
request = {"schema": 1, "id": sys.argv[2], "step": "s1", "plan_version": 1, "tool": "t",
           "args": {}, "risk": "read_only", "summary": "", "requested_by": "agent",
           "requested_at": "2025-03-01T11:00:00Z"}
HumanWriter(Path(sys.argv[1]), "killed", "local").decide("m1", sys.argv[2], request, "approve")
"""
KILLS = 5


def temp_files(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if is_transient(name))


def age(folder: Path, names: list[str], seconds: float = 120) -> None:
    then = time.time() - seconds
    for name in names:
        os.utime(folder / name, (then, then), follow_symlinks=False)


def test_temp_files_of_killed_writes_go_on_the_next_write(root: Path) -> None:
    approvals = root / "missions/m1/approvals"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", KILLED_MID_WRITE, str(root), f"k{n}"],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parents[2],
        )
        for n in range(KILLS)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline() == "in the write window\n"
        child.send_signal(signal.SIGKILL)
        child.wait()
    left = temp_files(approvals)
    assert len(left) == KILLS
    decide(root, 1)
    assert temp_files(approvals) == left  # under a minute old: a writer may still be at it
    age(approvals, left)
    decide(root, 2)
    assert temp_files(approvals) == []
    assert sorted(os.listdir(approvals)) == ["r1.toml", "r2.toml"]


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_only_old_temp_files_of_gone_processes_are_removed(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = root / "missions/m1"
    dead, live, others = dead_pid(), os.getpid(), 4242
    kill = os.kill

    def not_yours(pid: int, signum: int) -> None:
        if pid == others:
            raise PermissionError(1, "Operation not permitted")
        kill(pid, signum)

    monkeypatch.setattr(os, "kill", not_yours)
    (outside / "target").write_text("outside")
    old = {
        f".intent.toml.tmp-{dead}-0123abcd": "removed: old, its process gone",
        f".intent.toml.tmp-{live}-0123abcd": "kept: its process is alive",
        f".intent.toml.tmp-{others}-0123abcd": "kept: another user's live process",
        f".intent.toml.tmp-{dead}-0123abcx": "kept: not a name write_temp gives",
        ".intent.toml.tmp": "kept: not a name write_temp gives",
        "notes.txt": "kept: not a temp file",
    }
    for name in old:
        (folder / name).write_text(name)
    (folder / f".x.tmp-{dead}-0000aaaa").symlink_to(outside / "target")
    (folder / f".y.tmp-{dead}-0000aaaa").mkdir()
    age(folder, [*old, f".x.tmp-{dead}-0000aaaa", f".y.tmp-{dead}-0000aaaa"])
    (folder / f".young.tmp-{dead}-0000aaaa").write_text("kept: under a minute old")
    edits(INTENT, retitle)(root)(1)
    kept = set(os.listdir(folder))
    assert f".intent.toml.tmp-{dead}-0123abcd" not in kept
    for name in [*list(old)[1:], f".x.tmp-{dead}-0000aaaa", f".y.tmp-{dead}-0000aaaa"]:
        assert name in kept, name
    assert f".young.tmp-{dead}-0000aaaa" in kept
    assert (outside / "target").read_text() == "outside"
