"""Hostile files where records belong: every one is a problem with its path, never a
hang, a crash or a read past the format's caps, in a scan and in `hud check` alike."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from store.format.problems import Problem
from store.index.check import check
from store.index.workspace import Workspace
from tests.factory import mission

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

Make = Callable[[Path, Path], None]
"""Turn `path` (in the state directory) into something hostile; `outside` is a folder
beside the state directory."""


def fifo(path: Path, _outside: Path) -> None:
    os.mkfifo(path)


def folder(path: Path, _outside: Path) -> None:
    path.mkdir()


def to_dev_zero(path: Path, _outside: Path) -> None:
    path.symlink_to("/dev/zero")


def to_dev_urandom(path: Path, _outside: Path) -> None:
    path.symlink_to("/dev/urandom")


def to_outside_file(path: Path, outside: Path) -> None:
    (outside / "secret").write_text("secret")
    path.symlink_to(outside / "secret")


def to_outside_folder(path: Path, outside: Path) -> None:
    path.symlink_to(outside, target_is_directory=True)


def to_itself(path: Path, _outside: Path) -> None:
    path.symlink_to(path.name)  # a loop


def a_socket(path: Path, _outside: Path) -> None:
    """Bound by its name from inside its folder: a socket's path has a length cap (108
    bytes) that a worker's deeper temp folder can pass."""
    with contextlib.chdir(path.parent), socket.socket(socket.AF_UNIX) as server:
        server.bind(path.name)


MAKERS: dict[str, Make] = {
    "fifo": fifo,
    "folder": folder,
    "dev-zero": to_dev_zero,
    "dev-urandom": to_dev_urandom,
    "outside-file": to_outside_file,
    "outside-folder": to_outside_folder,
    "loop": to_itself,
    "socket": a_socket,
}

PUT_IN_PLACE = ("fifo", "folder", "outside-file", "loop")
"""What a file's path is made into in place of the file (and then the file put back)."""

NATIVE = [
    "hud.toml",
    "missions/m/intent.toml",
    "missions/m/constraints.toml",
    "missions/m/handoff.json",
    "missions/m/plan/v1.json",
    "missions/m/events.jsonl",
    "missions/m/evidence.jsonl",
    "missions/m/approvals/r1.json",
    "missions/m/approvals/r1.toml",
    "missions/m/history/intent.r1.toml",
    "missions/m/artifacts/out.txt",
    "missions/m/plan",
    "missions/m/approvals",
    "missions/m",
]
LOOPEXEC = [".loopexec/state.json", ".loopexec/run-r-live.jsonl", ".loopexec/heartbeat"]


def native_state(root: Path) -> None:
    """One mission with every kind of file, each valid."""
    built = mission(root, "m")
    built.step("s1", "running")
    built.request("r1")
    built.decision("r1")
    cited = built.artifact("out.txt", b"output\n")
    built.evidence("s1", artifact=cited)
    built.handoff()
    (root / "hud.toml").write_text("schema = 1\n")
    (root / "missions/m/history").mkdir()
    (root / "missions/m/history/intent.r1.toml").write_text('schema = 1\ntitle = "t"\n')


def _replace(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink()


def within(seconds: float, work: Callable[[], object]) -> object:
    """`work()`'s result; fails (and leaves the thread behind) if it takes longer."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a hang"
    return result[0]


def reported(problems: list[Problem], rel: str) -> list[Problem]:
    """Problems at `rel` or at a folder on its way (or, for a cited artifact, at the
    evidence line that cites it)."""
    return [
        p
        for p in problems
        if p.path and (rel == p.path or rel.startswith(p.path + "/") or f" {rel} " in p.message)
    ]


FOLDERS = {"missions/m/plan", "missions/m/approvals", "missions/m"}
"""Where the layout has a folder, an empty folder is no hostile file."""


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        (rel, kind)
        for rel in NATIVE
        for kind in sorted(MAKERS)
        if not (kind == "folder" and rel in FOLDERS)
    ],
)
def test_a_hostile_file_is_a_problem_never_a_hang(tmp_path: Path, rel: str, kind: str) -> None:
    root, outside = tmp_path / "state", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    native_state(root)
    _replace(root / rel)
    MAKERS[kind](root / rel, outside)

    report = within(10, lambda: check(root, jobs=1))
    problems = report.all_problems()  # type: ignore[attr-defined]
    found = reported(problems, rel)
    assert found, f"{rel} as {kind}: not reported among {problems}"
    assert any(p.severity == "error" for p in found)
    workspace = Workspace(root)
    within(10, workspace.scan)
    assert set(workspace.problems()) == set(problems)
    assert os.listdir(outside) in ([], ["secret"])  # nothing written outside


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "outside-file"])
@pytest.mark.parametrize("rel", LOOPEXEC)
def test_a_hostile_loopexec_file_is_a_problem(tmp_path: Path, rel: str, kind: str) -> None:
    root, outside = tmp_path / "state", tmp_path / "outside"
    loopexec_state(root)
    outside.mkdir()
    _replace(root / rel)
    MAKERS[kind](root / rel, outside)
    report = within(10, lambda: check(root, jobs=1))
    assert reported(report.all_problems(), rel)  # type: ignore[attr-defined]


def test_a_last_line_over_the_line_cap_without_newline_is_warned(tmp_path: Path) -> None:
    built = mission(tmp_path, "m")
    built.step("s1", "running")
    with (tmp_path / "missions/m/events.jsonl").open("ab") as log:
        log.write(b'{"seq":2,' + b" " * (1024 * 1024 + 10))
    problems = check(tmp_path, jobs=1).all_problems()
    held = [p for p in problems if p.code == "unterminated-line"]
    assert [(p.line, p.severity) for p in held] == [(2, "warn")]
    assert "over 1,048,576 bytes" in held[0].message


def test_a_document_over_the_cap_is_not_read_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import store.format.load

    monkeypatch.setattr(store.format.load, "MAX_DOCUMENT_BYTES", 1000)
    built = mission(tmp_path, "m")
    (tmp_path / "missions/m/handoff.json").write_bytes(b" " * 5000)
    built.step("s1", "running")
    problems = check(tmp_path, jobs=1).all_problems()
    assert [p.code for p in problems if p.path == "missions/m/handoff.json"] == ["too-large"]


def unreadable(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run `command` without the root's right to read anything (as the tests run as root)."""
    if os.geteuid() != 0:
        return subprocess.run(command, capture_output=True, text=True, timeout=60)
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to drop root's read override")
    return subprocess.run([*drop, *command], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "rel",
    [
        "missions/m/approvals",
        "missions/m/plan",
        "missions/m/events.jsonl",
        "missions/m/intent.toml",
        "missions/m/history/intent.r1.toml",
    ],
)
def test_what_cannot_be_read_is_an_error_never_skipped(tmp_path: Path, rel: str) -> None:
    native_state(tmp_path)
    os.chmod(tmp_path / rel, 0)
    hud_check = [sys.executable, "-m", "cli.main", "check", str(tmp_path)]
    done = unreadable(hud_check)
    os.chmod(tmp_path / rel, 0o755)
    assert done.returncode == 1, done.stdout + done.stderr
    assert rel in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", ["a..b.json", "a..b.toml", "..json", "-r.json"])
def test_a_request_with_an_unsafe_id_is_an_error_not_a_request(tmp_path: Path, name: str) -> None:
    built = mission(tmp_path, "m")
    built.step("s1", "running")
    (tmp_path / "missions/m/approvals").mkdir()
    (tmp_path / "missions/m/approvals" / name).write_text("{}")
    workspace = Workspace(tmp_path)
    workspace.scan()
    assert workspace.pending_requests() == []
    (problem,) = reported(workspace.problems(), f"missions/m/approvals/{name}")
    assert (problem.code, problem.severity) == ("unsafe-request-id", "error")
    assert set(workspace.problems()) == set(check(tmp_path, jobs=1).all_problems())


def loopexec_state(root: Path) -> None:
    shutil.copytree(FIXTURES / "loopexec" / "runs", root, dirs_exist_ok=True)


def small_state(root: Path) -> None:
    shutil.copytree(FIXTURES / "small" / "valid", root, dirs_exist_ok=True)


SMALL = [f".small/{name}.small.yml" for name in ("workspace", "intent", "plan", "progress")]


@pytest.mark.parametrize(
    ("build", "rel", "kind"),
    [
        (build, rel, kind)
        for build, rels in (
            (native_state, NATIVE),
            (loopexec_state, LOOPEXEC),
            (small_state, SMALL),
        )
        for rel in rels
        for kind in PUT_IN_PLACE
        if not (kind == "folder" and rel in FOLDERS)
    ],
)
def test_a_hostile_file_made_good_again_leaves_no_problem(
    tmp_path: Path, build: Callable[[Path], None], rel: str, kind: str
) -> None:
    """A live workspace sees a file turn hostile, then be put back as it was: what it
    then reports is what `hud check` reports of the directory (a log's open problem
    once stood for good)."""
    root, outside, pristine = tmp_path / "state", tmp_path / "outside", tmp_path / "pristine"
    root.mkdir()
    outside.mkdir()
    build(root)
    shutil.copytree(root, pristine, symlinks=True)
    workspace = Workspace(root)
    workspace.scan()
    before = set(workspace.problems())

    def touched() -> list[str]:
        return [rel, *(path for path in workspace.walk() if path.startswith(rel + "/"))]

    gone = touched()
    _replace(root / rel)
    MAKERS[kind](root / rel, outside)
    workspace.apply([*gone, *touched()])
    assert reported(workspace.problems(), rel), f"{rel} as {kind}: not reported"

    gone = touched()
    _replace(root / rel)
    if (pristine / rel).is_dir():
        shutil.copytree(pristine / rel, root / rel, symlinks=True)
    else:
        shutil.copy2(pristine / rel, root / rel)
    workspace.apply([*gone, *touched()])
    assert set(workspace.problems()) == set(check(root, jobs=1).all_problems()) == before
