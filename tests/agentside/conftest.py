"""A state directory with one mission set up by a human, and an approver in a thread.

The approver decides as a human in the HUD or `hud decide` would, on the request it finds
while the agent side waits: the HUD's checks (`store.index.approval_checks`), then
`store.writers.human.HumanWriter`. A request the HUD would refuse to approve is not decided.
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from agentside.cli import main
from store.index.approval_checks import refusal, review
from store.index.check import check
from store.index.workspace import Workspace
from store.writers.human import HumanWriter

MISSION = "ship"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """`ship`, created by alice: intent and constraints (no auto, no tool rules)."""
    state = tmp_path / "state"
    state.mkdir()
    human(state).create_mission(MISSION, {"title": "Ship 1.2.3"}, {})
    return state


def human(root: Path) -> HumanWriter:
    return HumanWriter(root, "alice", "local /dev/pts/1")


def set_constraints(root: Path, **tables: Any) -> None:
    """Replace ship's constraints.toml (as a human's edit would)."""
    lines = ["schema = 1"]
    for table, values in tables.items():
        lines.append(f"[{table}]")
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in values.items())
    (root / "missions" / MISSION / "constraints.toml").write_text("\n".join(lines) + "\n")


@dataclass
class Approver:
    """Decides the first request filed after it started (or `request`), in a thread;
    `decided` names it,
    `refused` says why the HUD's checks refused to."""

    root: Path
    verdict: Literal["approve", "reject"] = "approve"
    reason: str = ""
    decided: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None
    before: set[Path] = field(default_factory=set)
    request: str | None = None
    """Decide this request, even if it was filed before the approver started."""

    def start(self) -> Approver:
        self.before = set(self._requests())
        self.thread = threading.Thread(target=self._decide, daemon=True)
        self.thread.start()
        return self

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(timeout=10)

    def _requests(self) -> list[Path]:
        folder = self.root / "missions" / MISSION / "approvals"
        return sorted(folder.glob("*.json")) if folder.is_dir() else []

    def _decide(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for path in self._requests():
                if path in self.before and path.stem != self.request:
                    continue
                writer = human(self.root)
                workspace = Workspace(self.root)
                workspace.scan()
                checked = review(workspace.missions[MISSION], path.stem, writer.clock())
                problem = refusal(checked, self.verdict, self.reason)
                if problem is not None or checked.raw is None:
                    self.refused.append(problem or "does not load")
                    return
                until = checked.valid_until(writer.clock())
                writer.decide(MISSION, path.stem, checked.raw, self.verdict, self.reason, until)
                self.decided.append(path.stem)
                return
            time.sleep(0.02)


@pytest.fixture
def approver(root: Path) -> Callable[..., Approver]:
    def start(**options: Any) -> Approver:
        return Approver(root, **options).start()

    return start


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def agent(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Ran]:
    """`hud agent ARGS...` in this process, with `stdin` bytes; its exit code and output.
    The hook's wait counts from its process's start: here, from the call."""
    monkeypatch.setattr("agentside.commands.claude_hook._started", time.monotonic)

    def run(*args: str, stdin: bytes = b"") -> Ran:
        capsys.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


@pytest.fixture
def approved(
    root: Path, agent: Callable[..., Ran], approver: Callable[..., Approver], tmp_path: Path
) -> Callable[..., Ran]:
    """`approved(request_id, **step)`: plan one step `deploy` (with `step`'s fields), then
    `hud agent request --wait` for it as `request_id` while the approver decides it; the
    request's run, which must have exited 0."""

    def ask(request_id: str, **step: Any) -> Ran:
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"steps": [{"id": "deploy", "title": "Deploy", **step}]}))
        assert agent("plan", root, "--mission", MISSION, plan).code == 0
        decided = approver()
        asked = agent(
            "request", root, "--mission", MISSION, "--step", "deploy", "--tool", "deploy",
            "--id", request_id, "--wait", "10",
        )  # fmt: skip
        decided.join()
        assert asked.code == 0, asked.err
        return asked

    return ask


@pytest.fixture
def valid(root: Path) -> Iterator[None]:
    """After the test, `hud check` finds nothing at all: no error, no warning."""
    yield
    problems = check(root).all_problems()
    assert not problems, [f"{p.path}: {p.message}" for p in problems]
