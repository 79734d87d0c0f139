"""One derivation: for the same bytes on disk, the index the HUD keeps up to date step
by step (`read_ahead` / `apply_read`, then a scrub pass, as when the watcher is quiet)
equals a fresh scan and `hud check`: mission statuses, problems (code, path, line,
severity), request statuses, budgets and the header's counts.

A hypothesis state machine drives real file operations in a temporary directory and
feeds the HUD's path the paths a watcher would report."""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from store.derivation.derive import budget_use, request_status
from store.format.problems import Problem
from store.index.check import check
from store.index.scrub import scrub, targets
from store.index.workspace import Workspace
from tests.factory import T0, Mission, mission, resume

NOW = T0 + timedelta(minutes=5)
IDS = ["a", "b", "c"]
LOGS = ["events", "evidence"]
STATES = ["running", "failed", "succeeded", "blocked", "outcome_unknown"]
BAD = [b"not json", b"{}", b'{"seq": 99}', b"[1,2]"]


def _key(problem: Problem) -> tuple[str, int | None, str, str]:
    return (problem.path, problem.line, problem.code, problem.severity)


def truth(workspace: Workspace) -> dict[str, Any]:
    """What the HUD shows of a workspace, in plain values."""
    now = workspace.clock()
    return {
        "problems": sorted(map(_key, workspace.problems())),
        "statuses": {m: workspace.status(m).value for m in workspace.missions},
        "requests": {
            (m, r): request_status(state, r, now).value
            for m, state in workspace.missions.items()
            for r in state.requests
        },
        "budgets": {
            m: [(x.name, x.used, x.limit) for x in budget_use(state, now).limits]
            for m, state in workspace.missions.items()
        },
        "pending": len(workspace.pending_requests()),
        "external": sorted(workspace.external_summaries()),
    }


class Directory(RuleBasedStateMachine):
    """A state directory changed by an agent (and a human), watched by the HUD."""

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(os.environ["ONE_DERIVATION_TMP"]) / f"run{id(self)}"
        self.root = self.base / "state"
        self.changed: set[str] = set()
        self.half: dict[str, bytes] = {}

    @initialize()
    def start(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
        self.root.mkdir(parents=True)
        for mission_id in IDS[:2]:
            self._new_mission(mission_id)
        self.workspace = Workspace(self.root, lambda: NOW)
        self.workspace.scan()

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    # ---- helpers -----------------------------------------------------------------

    def _new_mission(self, mission_id: str) -> Mission:
        built = mission(self.root, mission_id)
        built.step("s1", "running")
        built.usage(1.0, 100, 1)
        built.request("r1")
        self.changed.add(f"missions/{mission_id}")
        return built

    def _exists(self, mission_id: str) -> bool:
        return (self.root / "missions" / mission_id / "intent.toml").is_file()

    def _log(self, mission_id: str, log: str) -> Path:
        return self.root / "missions" / mission_id / f"{log}.jsonl"

    def _touch(self, path: Path) -> None:
        self.changed.add(path.relative_to(self.root).as_posix())

    def _agent(self, mission_id: str) -> Mission | None:
        halfway = {str(self._log(mission_id, log)) for log in LOGS} & set(self.half)
        if not self._exists(mission_id) or halfway:
            return None
        try:
            return resume(self.root, mission_id)
        except (ValueError, KeyError, TypeError):  # its last line is not a record: it cannot go on
            return None

    # ---- what an agent (or a human, or a hostile process) does --------------------

    @rule(
        mission_id=st.sampled_from(IDS),
        state=st.sampled_from(["running", "failed", "succeeded", "blocked", "outcome_unknown"]),
    )
    def append_step(self, mission_id: str, state: str) -> None:
        agent = self._agent(mission_id)
        if agent is None:
            return
        try:
            agent.step("s1", state)
        except Exception:  # the agent writer refuses a log it cannot continue
            return
        self._touch(self._log(mission_id, "events"))

    @rule(
        mission_id=st.sampled_from(IDS),
        verdict=st.sampled_from(["pass", "fail"]),
        with_artifact=st.booleans(),
    )
    def append_evidence(self, mission_id: str, verdict: str, with_artifact: bool) -> None:
        agent = self._agent(mission_id)
        if agent is None:
            return
        try:
            fields = {"artifact": agent.artifact("out.txt", b"out\n")} if with_artifact else {}
            agent.evidence("s1", verdict, **fields)
        except Exception:
            return
        self._touch(self._log(mission_id, "evidence"))
        self._touch(self.root / "missions" / mission_id / "artifacts" / "out.txt")

    @rule(
        mission_id=st.sampled_from(IDS),
        log=st.sampled_from(LOGS),
        line=st.sampled_from([b"not json", b"{}", b'{"seq": 99}', b"[1,2]"]),
    )
    def append_invalid_line(self, mission_id: str, log: str, line: bytes) -> None:
        path = self._log(mission_id, log)
        if path.is_file() and path.name not in self.half:
            with path.open("ab") as handle:
                handle.write(line + b"\n")
            self._touch(path)

    @rule(mission_id=st.sampled_from(IDS), log=st.sampled_from(LOGS))
    def append_half_a_line(self, mission_id: str, log: str) -> None:
        path = self._log(mission_id, log)
        key = str(path)
        if path.is_file() and key not in self.half:
            self.half[key] = b'"x":1}\n'
            with path.open("ab") as handle:
                handle.write(b'{"seq":1000,')
            self._touch(path)

    @rule()
    def finish_half_lines(self) -> None:
        for key, rest in list(self.half.items()):
            path = Path(key)
            if path.is_file():
                with path.open("ab") as handle:
                    handle.write(rest)
                self._touch(path)
            del self.half[key]

    @rule(mission_id=st.sampled_from(IDS), log=st.sampled_from(LOGS), at=st.integers(0, 10_000))
    def change_a_byte_in_place(self, mission_id: str, log: str, at: int) -> None:
        path = self._log(mission_id, log)
        if not path.is_file() or path.stat().st_size == 0:
            return
        data = bytearray(path.read_bytes())
        index = at % len(data)
        data[index] = ord("x") if data[index] != ord("x") else ord("y")
        with path.open("r+b") as handle:  # same inode, same size
            handle.write(bytes(data))
        os.utime(path, ns=(index + 1, index + 1))  # a change the clock cannot hide
        self._touch(path)

    @rule(mission_id=st.sampled_from(IDS), log=st.sampled_from(LOGS), keep=st.integers(0, 400))
    def truncate(self, mission_id: str, log: str, keep: int) -> None:
        path = self._log(mission_id, log)
        if path.is_file():
            os.truncate(path, min(keep, path.stat().st_size))
            self.half.pop(str(path), None)
            self._touch(path)

    @rule(mission_id=st.sampled_from(IDS), log=st.sampled_from(LOGS))
    def replace_a_log_by_rename(self, mission_id: str, log: str) -> None:
        path = self._log(mission_id, log)
        if path.is_file():
            temp = path.with_name(".new")
            temp.write_bytes(path.read_bytes())
            os.replace(temp, path)
            self._touch(path)

    @rule(mission_id=st.sampled_from(IDS))
    def delete_and_recreate_a_mission(self, mission_id: str) -> None:
        shutil.rmtree(self.root / "missions" / mission_id, ignore_errors=True)
        self.half = {k: v for k, v in self.half.items() if f"/missions/{mission_id}/" not in k}
        self._new_mission(mission_id)

    @rule(mission_id=st.sampled_from(IDS))
    def replace_a_mission_by_a_copy(self, mission_id: str) -> None:
        folder = self.root / "missions" / mission_id
        if not folder.is_dir():
            return
        copy = self.base / "copy"
        shutil.copytree(folder, copy)
        shutil.rmtree(folder)
        copy.rename(folder)
        self.changed.add(f"missions/{mission_id}")

    @rule(old=st.sampled_from(IDS), new=st.sampled_from(IDS))
    def rename_a_mission(self, old: str, new: str) -> None:
        folder, to = self.root / "missions" / old, self.root / "missions" / new
        if folder.is_dir() and not to.exists():
            folder.rename(to)
            self.half = {k.replace(f"/{old}/", f"/{new}/"): v for k, v in self.half.items()}
            self.changed |= {f"missions/{old}", f"missions/{new}"}

    @rule()
    def delete_and_recreate_the_state_directory(self) -> None:
        shutil.rmtree(self.root)
        self.root.mkdir()
        self.half.clear()
        self._new_mission("a")
        self.changed.add("")

    @rule(mission_id=st.sampled_from(IDS), delete=st.booleans())
    def change_an_artifact(self, mission_id: str, delete: bool) -> None:
        path = self.root / "missions" / mission_id / "artifacts" / "out.txt"
        if path.is_file():
            if delete:
                path.unlink()
            else:
                with path.open("ab") as handle:
                    handle.write(b"x")
            self._touch(path)

    @rule(mission_id=st.sampled_from(IDS), drop=st.booleans())
    def add_a_plan_version(self, mission_id: str, drop: bool) -> None:
        if not self._exists(mission_id):
            return
        plans = self.root / "missions" / mission_id / "plan"
        version = len(list(plans.glob("v*.json"))) + 1
        Mission(self.root, mission_id).plan(version, ["s2"] if drop else ["s1", "s2"])
        self._touch(plans / f"v{version}.json")

    @rule(mission_id=st.sampled_from(IDS), decision=st.sampled_from(["approve", "reject"]))
    def write_a_decision(self, mission_id: str, decision: str) -> None:
        request = self.root / "missions" / mission_id / "approvals" / "r1.json"
        if request.is_file() and not request.with_suffix(".toml").exists():
            try:
                Mission(self.root, mission_id).decision("r1", decision)
            except ValueError:  # a request edited into invalid JSON
                return
            self._touch(request.with_suffix(".toml"))

    @rule(mission_id=st.sampled_from(IDS))
    def change_a_request_after_its_decision(self, mission_id: str) -> None:
        request = self.root / "missions" / mission_id / "approvals" / "r1.json"
        if request.is_file():
            Mission(self.root, mission_id).request("r1", args={"target": "staging"})
            self._touch(request)

    # ---- what must hold -----------------------------------------------------------

    @invariant()
    def the_live_view_equals_a_fresh_scan_and_hud_check(self) -> None:
        live = self.workspace
        pending, self.changed = self.changed, set()
        steps = 0
        while pending:  # the watcher's batches, step by step
            ahead = live.read_ahead(pending)
            live.apply_read(ahead)
            pending = ahead.more
            if not pending:  # quiet: the scrub runs; what it finds is read again
                pending = live.take_scrub(scrub(self.root, targets(live.readers()), 1.0))
            steps += 1
            assert steps < 200
        fresh = Workspace(self.root, lambda: NOW)
        fresh.scan()
        assert truth(live) == truth(fresh)
        checked = check(self.root, jobs=1)
        assert sorted(map(_key, checked.all_problems())) == truth(fresh)["problems"]


Directory.TestCase.settings = settings(
    max_examples=int(os.environ.get("ONE_DERIVATION_EXAMPLES", "25")),
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def _tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONE_DERIVATION_TMP", str(tmp_path))


TestOneDerivation = Directory.TestCase
