"""One derivation for artifacts: whatever name an agent gives an artifact (nested, deep,
unicode), the live view (a Workspace fed the watcher's events step by step, folders
reported on their own) finds exactly the problems and statuses a fresh scan and `hud
check` find. A folder under `artifacts/` is part of the layout, never an artifact."""

from __future__ import annotations

import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.index.check import check
from store.index.workspace import Workspace
from store.writers.agent import AgentWriter
from tests.factory import T0, Mission, mission
from tests.store.test_one_derivation import truth

NOW = T0 + timedelta(minutes=5)

AGENT_PART = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,12}", fullmatch=True).filter(
    lambda part: ".." not in part
)
"""A part of a name `AgentWriter.write_artifact` takes (`hud agent evidence`, MCP)."""
UNICODE_PART = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8)
"""A part another agent may write by hand: the format does not restrict artifact paths."""


@st.composite
def artifact_names(draw: st.DrawFn) -> tuple[str, bool]:
    """(name, by the agent writer): 1 to 8 parts; unicode ones written by hand."""
    by_writer = draw(st.booleans())
    part = AGENT_PART if by_writer else UNICODE_PART
    return "/".join(draw(st.lists(part, min_size=1, max_size=8))), by_writer


def finished(root: Path) -> Mission:
    """A mission whose every step succeeded on passing evidence: done, no problem."""
    built = mission(root, "ship")
    built.succeed("s1")
    built.succeed("s2")
    return built


def watcher_events(name: str) -> list[str]:
    """What a watcher reports for `artifacts/<name>` written: each folder made, the file."""
    parts = name.split("/")
    base = "missions/ship/artifacts"
    return [f"{base}/{'/'.join(parts[: i + 1])}" for i in range(len(parts))]


def fold(live: Workspace, batches: list[set[str]]) -> None:
    for batch in batches:
        pending = batch
        while pending:
            ahead = live.read_ahead(pending)
            live.apply_read(ahead)
            pending = ahead.more


def assert_one_truth(root: Path, live: Workspace) -> None:
    fresh = Workspace(root, lambda: NOW)
    fresh.scan()
    assert truth(live) == truth(fresh)
    checked = check(root, jobs=1)
    assert (
        sorted((p.path, p.line, p.code, p.severity) for p in checked.all_problems())
        == (truth(fresh)["problems"])
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(artifact_names(), min_size=1, max_size=4, unique_by=lambda n: n[0]),
    one_by_one=st.booleans(),
    drop=st.integers(0, 3),
)
def test_the_live_view_of_nested_artifacts_equals_a_fresh_scan_and_check(
    names: list[tuple[str, bool]], one_by_one: bool, drop: int
) -> None:
    root = Path(tempfile.mkdtemp()) / "state"
    try:
        built = finished(root)
        live = Workspace(root, lambda: NOW)
        live.scan()
        writer = AgentWriter(root, "ship", "agent", clock=lambda: NOW)
        events: list[str] = []
        for name, by_writer in names:
            if any(n != name and (n + "/").startswith(name + "/") for n, _ in names):
                continue  # a name that is another's folder: the writer cannot make both
            if by_writer:
                writer.evidence(
                    "s1", "saw it", "ran it", "it works", artifact=b"out\n", artifact_name=name
                )
            else:
                built.evidence("s1", artifact=built.artifact(name, b"out\n"))
            events += watcher_events(name)
        events.append("missions/ship/evidence.jsonl")
        fold(live, [{path} for path in events] if one_by_one else [set(events)])
        assert_one_truth(root, live)
        assert live.status("ship").value == "done"

        gone = names[drop % len(names)][0].split("/")[0]  # the top folder (or file) removed
        target = root / "missions/ship/artifacts" / gone
        shutil.rmtree(target) if target.is_dir() else target.unlink()
        fold(live, [{f"missions/ship/artifacts/{gone}"}])
        assert_one_truth(root, live)
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def test_a_nested_artifact_reported_folder_first_keeps_a_finished_mission_done(
    tmp_path: Path,
) -> None:
    """The issue's case: `hud agent evidence --artifact-name run-1/out.txt` with the HUD
    open showed `artifacts/run-1 is a folder, not a regular file` and needs-you."""
    root = tmp_path / "state"
    finished(root)
    live = Workspace(root, lambda: NOW)
    live.scan()
    AgentWriter(root, "ship", "agent", clock=lambda: NOW).evidence(
        "s1", "saw", "ran", "works", artifact=b"x\n", artifact_name="run-1/out.txt"
    )
    fold(
        live,
        [
            {"missions/ship/artifacts/run-1"},
            {"missions/ship/artifacts/run-1/out.txt"},
            {"missions/ship/evidence.jsonl"},
        ],
    )
    assert live.problems() == []
    assert live.status("ship").value == "done"
    assert_one_truth(root, live)


def test_a_file_replaced_by_a_folder_is_no_artifact(tmp_path: Path) -> None:
    root = tmp_path / "state"
    built = finished(root)
    built.evidence("s1", artifact=built.artifact("run-1", b"x\n"))
    live = Workspace(root, lambda: NOW)
    live.scan()
    (root / "missions/ship/artifacts/run-1").unlink()
    (root / "missions/ship/artifacts/run-1").mkdir()
    fold(live, [{"missions/ship/artifacts/run-1"}])
    assert [p.code for p in live.problems()] == ["missing-artifact"]
    assert_one_truth(root, live)
