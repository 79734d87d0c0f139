"""Fault injection: hypothesis builds state directories out of valid records, garbage,
huge and binary files, FIFOs, sockets, folders where files belong and symlinks (loops,
to devices, to outside, to inside), then checks what must always hold:

- nothing hangs (every check and scan finishes under a time limit),
- nothing raises,
- nothing is written outside the state directory (nor inside it),
- every hostile path is reported, with its path,
- the HUD's scan and `hud check` find the same problems.

`make test` runs a short profile; `make fuzz` (HYPOTHESIS_PROFILE=fuzz) a long one, plus
the real `hud check` in a subprocess under a timeout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.format.problems import Problem
from store.index.check import check
from store.index.workspace import Workspace
from tests.factory import mission
from tests.store.test_hostile_files import reported, within

settings.register_profile(
    "default-faults",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
PROFILE = settings.get_profile("fuzz" if FUZZ else "default-faults")

PLACES = [
    "hud.toml",
    "missions/m/intent.toml",
    "missions/m/constraints.toml",
    "missions/m/handoff.json",
    "missions/m/plan/v1.json",
    "missions/m/plan/v2.json",
    "missions/m/events.jsonl",
    "missions/m/evidence.jsonl",
    "missions/m/approvals/r1.json",
    "missions/m/approvals/r1.toml",
    "missions/m/approvals/r2.json",
    "missions/m/history/intent.r1.toml",
    "missions/m/artifacts/out.txt",
    "missions/m/artifacts/deep/x.bin",
    "missions/m/notes.txt",
    "missions/n/intent.toml",
    "missions/n/events.jsonl",
    "missions/m/plan",
    "missions/m/approvals",
    "missions/m/history",
    "missions/n",
    "stray",
]

HOSTILE = {"fifo", "socket", "dev-zero", "dev-null", "outside", "loop", "dangling"}
"""Kinds that must be reported wherever they stand."""

KINDS = sorted(
    HOSTILE | {"garbage", "binary", "huge-line", "empty", "folder", "inside-link", "valid-line"}
)


def _content(kind: str, draw: st.DrawFn) -> bytes:
    if kind == "garbage":
        return draw(st.binary(max_size=300)) + b"{[\"'=\n"
    if kind == "binary":
        return bytes(range(256)) * draw(st.integers(1, 4))
    if kind == "huge-line":
        return b'{"seq":1,"x":"' + b"a" * (1024 * 1024 + 5)
    if kind == "valid-line":
        return b'{"schema":1,"seq":1}\n'
    return b""


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str, bytes]]:
    """A list of (place, kind, content): what to put where, in order."""
    count = draw(st.integers(1, 6))
    out = []
    for _ in range(count):
        place = draw(st.sampled_from(PLACES))
        kind = draw(st.sampled_from(KINDS))
        out.append((place, kind, _content(kind, draw)))
    return out


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def plant(root: Path, outside: Path, place: str, kind: str, content: bytes) -> bool:
    """Put `kind` at `place` (replacing what is there); False when it cannot be made
    there (a folder on its way is not a folder any more)."""
    path = root / place
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _clear(path)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "socket":
            with socket.socket(socket.AF_UNIX) as server:
                server.bind(str(path))
        elif kind == "dev-zero":
            path.symlink_to("/dev/zero")
        elif kind == "dev-null":
            path.symlink_to("/dev/null")
        elif kind == "outside":
            path.symlink_to(outside)
        elif kind == "loop":
            path.symlink_to(path.name)
        elif kind == "dangling":
            path.symlink_to("no-such-target")
        elif kind == "inside-link":
            path.symlink_to(root / "missions")
        elif kind == "folder":
            path.mkdir()
        else:
            path.write_bytes(content)
    except (OSError, ValueError):
        return False
    return True


def _fingerprint(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (not following links) with its type and content hash."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[rel] = oct(path.lstat().st_mode)
    return found


def build(base: Path, tree: list[tuple[str, str, bytes]]) -> tuple[Path, Path, set[str]]:
    """A fresh state dir (one valid mission) with `tree` planted; the hostile paths."""
    root, outside = base / "state", base / "outside"
    for folder in (root, outside):
        if folder.exists():
            shutil.rmtree(folder)
    outside.mkdir()
    (outside / "secret.toml").write_text('schema = 1\ntitle = "secret"\n')
    built = mission(root, "m")
    built.step("s1", "running")
    built.request("r1")
    planted: dict[str, str] = {}
    for place, kind, content in tree:
        if plant(root, outside, place, kind, content):
            planted = {p: k for p, k in planted.items() if not p.startswith(place + "/")}
            planted[place] = kind
    hostile = {place for place, kind in planted.items() if kind in HOSTILE}
    return root, outside, hostile


def verify(root: Path, outside: Path, hostile: set[str]) -> None:
    before_outside, before_inside = _fingerprint(outside), _fingerprint(root)
    report = within(20, lambda: check(root, jobs=1))
    problems = report.all_problems()  # type: ignore[attr-defined]
    workspace = Workspace(root)
    within(20, workspace.scan)
    assert set(workspace.problems()) == set(problems)
    for place in hostile:
        if (root / place).is_symlink() or (root / place).exists():
            assert reported(problems, place), f"{place} not reported: {problems}"
    assert _fingerprint(outside) == before_outside
    assert _fingerprint(root) == before_inside


@PROFILE
@given(tree=trees())
def test_no_hang_no_crash_no_write_every_hostile_path_reported(
    tmp_path: Path, tree: list[tuple[str, str, bytes]]
) -> None:
    verify(*build(tmp_path, tree))


@pytest.mark.fuzz
@settings(PROFILE, max_examples=200)
@given(tree=trees())
def test_the_real_hud_check_never_hangs_nor_prints_a_traceback(
    tmp_path: Path, tree: list[tuple[str, str, bytes]]
) -> None:
    root, _outside, hostile = build(tmp_path, tree)
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "check", "--json", str(root)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads(done.stdout)
    problems = [Problem(**p) for p in data["problems"]]
    problems += [Problem(**p) for m in data["missions"].values() for p in m["problems"]]
    for place in hostile:
        if (root / place).is_symlink() or (root / place).exists():
            assert reported(problems, place), f"{place} not reported: {problems}"
