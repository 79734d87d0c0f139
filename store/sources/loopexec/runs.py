"""loopexec runs (`.loopexec/` in a state directory), read-only, one overview row per run.

loopexec (justyn-clark/loopexec, SPEC.md 2.0.0 and cmd/loopexec) keeps, per workdir:

* `run-<id>.jsonl`: the receipt, one JSON object a line: `ts` (Unix seconds),
  `run_id`, `iteration`, `event` (run_start, iter_start, exec, check, progress,
  integrity_baseline, integrity_violation, halt), optional `detail` (the halt's
  `halt_reason`, progress's failing-set hash) and `exit_code`;
* `state.json`: the latest run's durable state (`schema_version`, `run_id`, `phase`,
  `iteration`, `halt_reason`, `last_check_exit`, `cumulative_usd`, `cost_usd`,
  `initial_fail_count`, `best_fail_count`, `best_iteration`, `model` {provider, id,
  version}, `check`, `exec`, `max_iterations`, `escalation` {state, channel, ref,
  acked_by}, `updated_ts`, ...), and `run-<id>.state.json`, the same per run;
* `heartbeat`: {ts, pid, iteration, phase} of the running loop; `loopexec watch`
  calls it stale past `--stall-timeout` (600 s by default);
* `escalation-<id>.json`: the packet `loopexec escalate` writes for a human;
* `attest-<id>.sig`: the HMAC signature `loopexec attest` writes.

A halt's `halt_reason` string is loopexec's stable contract; its exit code is a
coarse class (SPEC.md section 5). Nothing here writes: all of `.loopexec/` is the
runtime's. Bad input (not JSON, wrong types, unknown files) becomes a `Problem`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.format.confined import list_folder, open_file
from store.format.layout import is_transient
from store.format.load import parse_json, read_bytes
from store.format.problems import Problem
from store.format.records import Settings
from store.format.row import MissionStatus, MissionSummary
from store.sources.loopexec import FOLDER

ID_PREFIX = "loopexec:"
HEARTBEAT_STALE_SECONDS = 600
"""loopexec's own default (`loopexec watch --stall-timeout 600`)."""
MAX_RECEIPT_PROBLEMS = 50
MAX_DOC_BYTES = 8 * 1024 * 1024

RUN_ID = r"[A-Za-z0-9._-]{1,64}"
_RUN_FILE = re.compile(rf"^run-(?P<id>{RUN_ID})\.(?P<what>state\.json|jsonl)$")
_ESCALATION = re.compile(rf"^escalation-(?P<id>{RUN_ID})\.json$")
_ATTEST = re.compile(rf"^attest-(?P<id>{RUN_ID})\.sig$")

HALT_REASONS: dict[str, int] = {
    "success_condition_met": 10,
    "no_actionable_tasks": 11,
    "human_required": 11,
    "max_iterations_reached": 12,
    "blocked_path_modified": 13,
    "reward_hacking_detected": 13,
    "metric_integrity_violation": 13,
    "credential_scope_invalid": 13,
    "objective_unverified": 13,
    "check_flaky": 14,
    "check_has_side_effects": 14,
    "check_not_hermetic": 14,
    "hermeticity_violation": 14,
    "check_inadequate": 15,
    "escalation_pending": 16,
    "reviewer_rejected": 16,
    "no_progress_detected": 17,
    "same_failure_repeated": 17,
    "oscillation_detected": 17,
    "same_test_regressed": 17,
    "unsatisfiable_constraints": 17,
    "infeasible_suspected": 17,
    "budget_exceeded": 18,
    "cost_anomaly": 18,
    "heartbeat_stale": 19,
    "model_drift_detected": 19,
    "comprehension_debt_exceeded": 19,
    "context_budget_unsatisfiable": 19,
    "invariant_failed": 20,
    "workspace_invalid": 30,
    "isolation_unsatisfiable": 30,
    "execution_failure": 40,
    "internal_error": 50,
}
"""halt_reason -> exit code (SPEC.md section 5); any other reason exits 50 in loopexec."""

EXIT_CLASSES: dict[int, str] = {
    0: "nominal",
    10: "converged",
    11: "terminal-blocked",
    12: "iteration-cap",
    13: "integrity",
    14: "oracle-untrusted",
    15: "check-inadequate",
    16: "resumable-judgment",
    17: "no-convergence",
    18: "budget",
    19: "liveness/drift",
    20: "invariant",
    30: "workspace",
    40: "execution",
    50: "internal",
}


def exit_code(halt_reason: str) -> int:
    """The exit-code class of a halt reason (50, internal, when unknown: loopexec's default)."""
    return HALT_REASONS.get(halt_reason, 50)


def exit_class(halt_reason: str) -> str:
    """`17 no-convergence` for a halt reason."""
    code = exit_code(halt_reason)
    return f"{code} {EXIT_CLASSES[code]}"


def _when(ts: Any) -> datetime | None:
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        try:
            return datetime.fromtimestamp(ts, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class ReceiptEvent:
    line: int
    ts: int | None
    run_id: str
    iteration: int | None
    event: str
    detail: str
    exit_code: int | None

    @property
    def at(self) -> datetime | None:
        return _when(self.ts)


@dataclass(frozen=True, slots=True)
class RunState:
    """A state.json or run-<id>.state.json, read leniently (every field optional)."""

    raw: dict[str, Any]

    def get(self, key: str) -> Any:
        return self.raw.get(key)

    @property
    def run_id(self) -> str:
        return _str(self.raw.get("run_id"))

    @property
    def phase(self) -> str:
        return _str(self.raw.get("phase"))

    @property
    def iteration(self) -> int | None:
        return _int(self.raw.get("iteration"))

    @property
    def halt_reason(self) -> str:
        return _str(self.raw.get("halt_reason"))

    @property
    def best_fail_count(self) -> int | None:
        return _int(self.raw.get("best_fail_count"))

    @property
    def initial_fail_count(self) -> int | None:
        return _int(self.raw.get("initial_fail_count"))

    @property
    def cost_usd(self) -> float | None:
        """Recorded run cost: `cost_usd`, else `cumulative_usd`."""
        cost = _num(self.raw.get("cost_usd"))
        return cost if cost is not None else _num(self.raw.get("cumulative_usd"))

    @property
    def model(self) -> str:
        model = self.raw.get("model")
        if not isinstance(model, dict):
            return ""
        parts = [_str(model.get("provider")), _str(model.get("id"))]
        name = "/".join(p for p in parts if p)
        version = _str(model.get("version"))
        return f"{name}@{version}" if version else name

    @property
    def escalation(self) -> dict[str, Any]:
        escalation = self.raw.get("escalation")
        return escalation if isinstance(escalation, dict) else {}

    @property
    def updated(self) -> datetime | None:
        return _when(self.raw.get("updated_ts"))


@dataclass(frozen=True, slots=True)
class Heartbeat:
    ts: int | None
    pid: int | None
    iteration: int | None
    phase: str

    def age(self, now: datetime) -> float | None:
        when = _when(self.ts)
        return None if when is None else (now - when).total_seconds()

    def stale(self, now: datetime, limit: int = HEARTBEAT_STALE_SECONDS) -> bool:
        age = self.age(now)
        return age is not None and age > limit


@dataclass(slots=True)
class _Receipt:
    """A run's receipt as read so far: from `offset` on, what was appended is read next;
    `inode` None when it could not be opened (its one problem says why)."""

    inode: int | None = None
    offset: int = 0
    lines: int = 0
    pending: bytes = b""
    events: list[ReceiptEvent] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    dropped: int = 0


@dataclass(slots=True)
class LoopexecRun:
    """Everything `.loopexec/` holds about one run."""

    id: str
    receipt: _Receipt | None = None
    state: RunState | None = None
    state_problems: list[Problem] = field(default_factory=list)
    escalation: dict[str, Any] | None = None
    escalation_problems: list[Problem] = field(default_factory=list)
    attested: bool = False

    @property
    def events(self) -> list[ReceiptEvent]:
        return self.receipt.events if self.receipt else []

    def halt(self) -> ReceiptEvent | None:
        return next((e for e in reversed(self.events) if e.event == "halt"), None)


class LoopexecDir:
    """The `.loopexec/` folder of a state directory: its runs, heartbeat and latest state."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prefix = f"{FOLDER}/"
        self.runs: dict[str, LoopexecRun] = {}
        self.latest: RunState | None = None
        self.latest_problems: list[Problem] = []
        self.heartbeat: Heartbeat | None = None
        self.heartbeat_problems: list[Problem] = []
        self.unknown: dict[str, Problem] = {}

    @property
    def empty(self) -> bool:
        """Nothing read: no run, state, heartbeat or problem."""
        return not (
            self.runs
            or self.unknown
            or self.latest is not None
            or self.latest_problems
            or self.heartbeat is not None
            or self.heartbeat_problems
        )

    # ---- routing ---------------------------------------------------------------------

    def owns(self, rel: str) -> bool:
        return rel == FOLDER or rel.startswith(self.prefix)

    def apply(self, rel: str) -> set[str]:
        """Re-read what changed; returns the ids (`loopexec:<run>`) of the runs touched."""
        if is_transient(rel):
            return set()
        if rel == FOLDER:
            before = set(self.runs)
            self.runs.clear()
            self.latest = self.heartbeat = None
            self.latest_problems, self.heartbeat_problems = [], []
            self.unknown.clear()
            touched: set[str] = set()
            entries = list_folder(self.root, FOLDER)
            if isinstance(entries, Problem):
                if entries.code != "missing":
                    self.unknown[FOLDER] = entries
            else:
                for entry in sorted(entry.name for entry in entries):
                    touched |= self.apply(f"{FOLDER}/{entry}")
            return touched | {ID_PREFIX + run for run in before}
        name = rel[len(self.prefix) :]
        latest_id = self.latest.run_id if self.latest else ""
        if "/" in name:
            return set()  # loopexec writes no sub-folders; not ours to judge
        self.unknown.pop(rel, None)
        exists = os.path.lexists(self.root / rel)
        if name == "state.json":
            self.latest, self.latest_problems = self._document(rel, exists)
            ids = {latest_id, self.latest.run_id if self.latest else ""}
            return self._ids(ids)
        if name == "heartbeat":
            self._heartbeat(rel, exists)
            return self._ids({latest_id})
        match = _RUN_FILE.match(name)
        if match:
            run = self._run(match["id"])
            if match["what"] == "jsonl":
                self._receipt(run, rel, exists)
            else:
                run.state, run.state_problems = self._document(rel, exists)
            return self._settle(run)
        match = _ESCALATION.match(name)
        if match:
            run = self._run(match["id"])
            state, run.escalation_problems = self._document(rel, exists)
            run.escalation = state.raw if state else None
            return self._settle(run)
        match = _ATTEST.match(name)
        if match:
            run = self._run(match["id"])
            run.attested = exists
            return self._settle(run)
        if exists:
            self.unknown[rel] = Problem(
                rel,
                None,
                "loopexec-unknown-file",
                "file is not one loopexec writes",
                "loopexec keeps run-<id>.jsonl, run-<id>.state.json, state.json, heartbeat, "
                "escalation-<id>.json and attest-<id>.sig in .loopexec/",
                "warn",
            )
        return set()

    def _ids(self, runs: Iterable[str]) -> set[str]:
        return {ID_PREFIX + run for run in runs if run}

    def _run(self, run_id: str) -> LoopexecRun:
        run = self.runs.get(run_id)
        if run is None:
            run = self.runs[run_id] = LoopexecRun(run_id)
        return run

    def _settle(self, run: LoopexecRun) -> set[str]:
        """Forget a run of which nothing is left; its id is touched either way."""
        if (
            run.receipt is None
            and run.state is None
            and run.escalation is None
            and not run.attested
            and not run.state_problems
            and not run.escalation_problems
        ):
            self.runs.pop(run.id, None)
        return {ID_PREFIX + run.id}

    # ---- reading ---------------------------------------------------------------------

    def _document(self, rel: str, exists: bool) -> tuple[RunState | None, list[Problem]]:
        if not exists:
            return None, []
        data = read_bytes(self.root, rel, MAX_DOC_BYTES)
        if isinstance(data, Problem):
            return None, [data]
        parsed = parse_json(rel, data)
        if isinstance(parsed, Problem):
            return None, [parsed]
        if not isinstance(parsed, dict):
            return None, [
                Problem(rel, 1, "loopexec-state", "not a JSON object", "loopexec writes objects")
            ]
        problems = []
        for key, check in (("run_id", str), ("phase", str), ("halt_reason", str)):
            if key in parsed and not isinstance(parsed[key], check):
                problems.append(Problem(rel, None, "loopexec-state", f"{key} is not a string", ""))
        for key in ("iteration", "best_fail_count", "initial_fail_count", "schema_version"):
            if key in parsed and parsed[key] is not None and _int(parsed[key]) is None:
                problems.append(
                    Problem(rel, None, "loopexec-state", f"{key} is not an integer", "")
                )
        reason = parsed.get("halt_reason")
        if isinstance(reason, str) and reason and reason not in HALT_REASONS:
            problems.append(_unknown_reason(rel, None, reason))
        return RunState(parsed), problems

    def _heartbeat(self, rel: str, exists: bool) -> None:
        self.heartbeat, self.heartbeat_problems = None, []
        if not exists:
            return
        state, problems = self._document(rel, exists)
        if state is None:
            self.heartbeat_problems = problems
            return
        raw = state.raw
        self.heartbeat = Heartbeat(
            _int(raw.get("ts")),
            _int(raw.get("pid")),
            _int(raw.get("iteration")),
            _str(raw.get("phase")),
        )
        if self.heartbeat.ts is None:
            self.heartbeat_problems = [
                Problem(
                    rel,
                    1,
                    "loopexec-heartbeat",
                    "heartbeat has no integer ts",
                    "loopexec writes {ts, pid, iteration, phase}",
                )
            ]

    def _receipt(self, run: LoopexecRun, rel: str, exists: bool) -> None:
        if not exists:
            run.receipt = None
            return
        receipt = run.receipt or _Receipt()
        opened = open_file(self.root, rel)
        if isinstance(opened, Problem):
            run.receipt = _Receipt(problems=[opened])
            return
        with opened:
            info = opened.info
            if info.st_ino != receipt.inode or info.st_size < receipt.offset:
                receipt = _Receipt(info.st_ino)  # new, replaced, truncated or readable again
            data = opened.read_capped(MAX_DOC_BYTES, receipt.offset)
        if isinstance(data, Problem):
            run.receipt = _Receipt(problems=[data])
            return
        receipt.offset += len(data)
        data = receipt.pending + data
        complete, newline, receipt.pending = data.rpartition(b"\n")
        if newline:
            for raw_line in complete.split(b"\n"):
                receipt.lines += 1
                self._receipt_line(run, receipt, rel, receipt.lines, raw_line)
        run.receipt = receipt

    def _receipt_line(
        self, run: LoopexecRun, receipt: _Receipt, rel: str, line: int, raw: bytes
    ) -> None:
        def problem(message: str, hint: str, severity: str = "error") -> None:
            if len(receipt.problems) < MAX_RECEIPT_PROBLEMS:
                receipt.problems.append(
                    Problem(rel, line, "loopexec-receipt", message, hint, severity)  # type: ignore[arg-type]
                )
            else:
                receipt.dropped += 1

        if not raw.strip():
            return
        parsed = parse_json(rel, raw, line)
        if isinstance(parsed, Problem):
            problem(parsed.message, parsed.hint or "each line is one JSON object")
            return
        if not isinstance(parsed, dict):
            problem("line is not a JSON object", "each line is one JSON object")
            return
        event = parsed.get("event")
        if not isinstance(event, str) or not event:
            problem("line has no event", "loopexec writes ts, run_id, iteration, event")
            return
        ts = _int(parsed.get("ts"))
        if ts is None:
            problem("ts is not an integer (Unix seconds)", "loopexec writes ts as Unix seconds")
        iteration = _int(parsed.get("iteration"))
        if iteration is None or iteration < 0:
            problem("iteration is not a non-negative integer", "")
        run_id = _str(parsed.get("run_id"))
        if run_id != run.id:
            problem(
                f"run_id {run_id!r} is not this receipt's run {run.id!r}",
                "a receipt holds the events of one run",
                "warn",
            )
        code = parsed.get("exit_code")
        if code is not None and _int(code) is None:
            problem("exit_code is not an integer", "")
        detail = parsed.get("detail", "")
        if not isinstance(detail, str):
            problem("detail is not a string", "")
            detail = str(detail)
        if event == "halt":
            if detail and detail not in HALT_REASONS:
                receipt.problems.append(_unknown_reason(rel, line, detail))
            if any(e.event == "halt" for e in receipt.events):
                problem("a second halt event", "a run halts once", "warn")
        elif receipt.events and receipt.events[-1].event == "halt":
            problem(f"{event} after the halt", "a run records nothing after halt", "warn")
        receipt.events.append(ReceiptEvent(line, ts, run_id, iteration, event, detail, _int(code)))

    # ---- derived ---------------------------------------------------------------------

    def run_state(self, run: LoopexecRun) -> RunState | None:
        """The run's own state file, else state.json when it names this run."""
        if run.state is not None:
            return run.state
        if self.latest is not None and self.latest.run_id == run.id:
            return self.latest
        return None

    def halt_reason(self, run: LoopexecRun) -> str:
        halt = run.halt()
        if halt is not None:
            return halt.detail
        state = self.run_state(run)
        if state is not None and state.phase == "halted":
            return state.halt_reason
        return ""

    def run_heartbeat(self, run: LoopexecRun) -> Heartbeat | None:
        """The heartbeat, if it is this run's (state.json names it as the latest run)."""
        if self.latest is not None and self.latest.run_id == run.id:
            return self.heartbeat
        if self.latest is None and len(self.runs) == 1:
            return self.heartbeat
        return None

    def problems_of(self, run: LoopexecRun) -> list[Problem]:
        found = list(run.state_problems) + list(run.escalation_problems)
        if run.receipt is not None:
            found += run.receipt.problems
            if run.receipt.dropped:
                found.append(
                    Problem(
                        f"{self.prefix}run-{run.id}.jsonl",
                        None,
                        "loopexec-receipt",
                        f"{run.receipt.dropped} more problems in this receipt",
                        "",
                    )
                )
        if self.latest is not None and self.latest.run_id == run.id:
            found += self.latest_problems + self.heartbeat_problems
            halt = run.halt()
            if (
                halt is not None
                and self.latest.halt_reason
                and halt.detail != self.latest.halt_reason
            ):
                found.append(
                    Problem(
                        f"{self.prefix}state.json",
                        None,
                        "loopexec-state",
                        f"state.json says halt_reason {self.latest.halt_reason!r}, the receipt "
                        f"{halt.detail!r}",
                        "the receipt is the record; state.json may be from an interrupted write",
                        "warn",
                    )
                )
        return found

    def problems_by_id(self) -> dict[str, list[Problem]]:
        return {ID_PREFIX + run.id: self.problems_of(run) for run in self.runs.values()}

    def loose_problems(self) -> list[Problem]:
        """Problems that belong to no run: unknown files, a state.json naming no run."""
        found = list(self.unknown.values())
        if self.latest is None or self.latest.run_id not in self.runs:
            found += self.latest_problems + self.heartbeat_problems
        return found

    def status(self, run: LoopexecRun, now: datetime, settings: Settings) -> MissionStatus:
        if any(p.severity == "error" for p in self.problems_of(run)):
            return MissionStatus.NEEDS_YOU
        if self.escalation_open(run):
            return MissionStatus.NEEDS_YOU
        reason = self.halt_reason(run)
        if reason:
            code = exit_code(reason)
            if code in (0, 10):
                return MissionStatus.DONE
            if code in (11, 16):
                return MissionStatus.NEEDS_YOU
            if code in (12, 17, 18, 19):
                return MissionStatus.BLOCKED
            return MissionStatus.FAILED
        heartbeat = self.run_heartbeat(run)
        if heartbeat is not None and heartbeat.ts is not None:
            return MissionStatus.STALE if heartbeat.stale(now) else MissionStatus.RUNNING
        last = self.last_activity(run)
        if last is not None and (now - last).total_seconds() > settings.stale_after_seconds:
            return MissionStatus.STALE
        return MissionStatus.RUNNING

    def escalation_open(self, run: LoopexecRun) -> bool:
        """A packet was written and the state does not say it was acknowledged."""
        state = self.run_state(run)
        recorded = state.escalation.get("state") if state is not None else None
        if recorded == "paged":
            return True
        return run.escalation is not None and recorded != "acked"

    def last_activity(self, run: LoopexecRun) -> datetime | None:
        times = [e.at for e in run.events[-1:] if e.at is not None]
        state = self.run_state(run)
        if state is not None and state.updated is not None:
            times.append(state.updated)
        heartbeat = self.run_heartbeat(run)
        if heartbeat is not None and _when(heartbeat.ts) is not None:
            times.append(_when(heartbeat.ts))  # type: ignore[arg-type]
        return max(times, default=None)

    def summary(self, run: LoopexecRun, now: datetime, settings: Settings) -> MissionSummary:
        state = self.run_state(run)
        reason = self.halt_reason(run)
        events = run.events
        if reason:
            step, step_state = f"halt {reason}", _HALT_LOOK.get(exit_code(reason), "failed")
        else:
            last = events[-1] if events else None
            iteration = last.iteration if last else (state.iteration if state else None)
            step = (
                f"iter {iteration if iteration is not None else '?'} {last.event if last else ''}"
            )
            step_state = "running"
        check = _str(state.get("check")) if state else ""
        title = f"loopexec {run.id}" + (f": {check}" if check else "")
        return MissionSummary(
            id=ID_PREFIX + run.id,
            status=self.status(run, now, settings),
            title=title,
            current_step=step.strip(),
            step_state=step_state,
            plan_version=None,
            pending=1 if self.escalation_open(run) else 0,
            budget_fraction=None,
            last_activity=self.last_activity(run),
            problems=len(self.problems_of(run)),
        )

    def summaries(self, now: datetime, settings: Settings) -> dict[str, MissionSummary]:
        return {ID_PREFIX + run.id: self.summary(run, now, settings) for run in self.runs.values()}

    def run_of(self, mission_id: str) -> LoopexecRun | None:
        if not mission_id.startswith(ID_PREFIX):
            return None
        return self.runs.get(mission_id[len(ID_PREFIX) :])


_HALT_LOOK = {
    0: "succeeded",
    10: "succeeded",
    11: "pending",
    16: "pending",
    12: "blocked",
    17: "blocked",
    18: "blocked",
    19: "blocked",
}


def _unknown_reason(rel: str, line: int | None, reason: str) -> Problem:
    return Problem(
        rel,
        line,
        "loopexec-halt-reason",
        f"unknown halt_reason {reason!r}: loopexec maps it to exit 50 (internal)",
        "loopexec's halt reasons are listed in its SPEC.md section 5",
        "warn",
    )
