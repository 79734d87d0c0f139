"""SMALL validation with the reference CLI's verdicts: schema, lint, strict S1-S4, verify.

Mirrors `small verify`/`small lint --strict` of the reference CLI (justyn-clark/
small-protocol, internal/small/invariants.go and strict_layout.go):

* schema: the JSON Schemas of v1.0.0 (as the models in `store.sources.small.models`);
* lint: `small_version` exactly "1.0.0", `owner` the file's owner, no unknown
  top-level keys, per-file shape; progress entries need a non-empty task_id, an
  RFC 3339 timestamp with fractional seconds strictly after the previous entry's
  (compared to the nanosecond), and at least one of evidence, verification,
  command, test, link, commit; a handoff's `resume.current_task_id` is null or
  non-empty;
* strict S1: every completed or blocked task has a progress entry with evidence or
  notes; S2: progress task ids exist in the plan (meta/* exempt; only entries of the
  handoff's replayId when it has one); S3: the handoff's current_task_id exists in
  the plan (meta/* exempt); S4: only the canonical files under `.small/`;
* verify: the five artifacts exist; `workspace.small.yml` exists and names a kind.

Beyond the reference, and as warnings only (they do not change a verdict): an
unquoted `small_version` or timestamp, which YAML 1.1 tools read as a number or a
datetime. Every finding is a `Problem` whose code says which check it belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from pydantic import BaseModel, ValidationError

from store.format.problems import Problem
from store.sources.small.layout import CANONICAL, OWNERS, TOP_LEVEL_KEYS
from store.sources.small.models import EVIDENCE_FIELDS, SCHEMAS, Entry, ProgressEntry, Task
from store.sources.small.yaml import YamlDoc

MAX_PER_FILE = 50
"""Problems of one kind reported per file; the rest are counted in one more problem."""

VERSION = "1.0.0"

GROUPS: dict[str, str] = {
    "small-schema": "schema",
    "small-version": "lint",
    "small-v0.1": "lint",
    "small-owner": "lint",
    "small-unknown-key": "lint",
    "small-lint": "lint",
    "small-task-id": "lint",
    "small-timestamp": "lint",
    "small-evidence": "lint",
    "small-current-task": "lint",
    "small-S1": "strict",
    "small-S2": "strict",
    "small-S3": "strict",
    "small-S4": "strict",
    "small-missing": "verify",
    "small-workspace-missing": "verify",
    "small-workspace": "verify",
}
"""Check group of each problem code; any other code (YAML, UTF-8, size) is "load"."""

CHECKS = ("schema", "lint", "strict", "verify")

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def group_of(code: str) -> str:
    return GROUPS.get(code, "load")


def verdicts(problems: Iterable[Problem]) -> dict[str, str]:
    """ "valid" or "invalid" for schema, lint, strict and verify (verify: all but strict)."""
    failed = {group_of(p.code) for p in problems if p.severity == "error"}
    result = {}
    for check in CHECKS:
        bad = check in failed or "load" in failed
        if check == "verify":
            bad = bool(failed & {"schema", "lint", "verify", "load"})
        result[check] = "invalid" if bad else "valid"
    return result


# ---- timestamps -----------------------------------------------------------------------


def parse_timestamp(value: str) -> int | str:
    """Nanoseconds since the epoch of an RFC 3339 timestamp with fractional seconds,
    or why it is not one (the reference's `ParseProgressTimestamp`)."""
    text = value.strip()
    if not text:
        return "timestamp is required (RFC3339Nano with fractional seconds)"
    match = _RFC3339.match(text)
    if match is None:
        return "timestamp must be RFC3339Nano (like 2025-01-04T10:00:00.000000000Z)"
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if fraction is None:
        return "timestamp must include fractional seconds"
    try:
        offset = timedelta(0)
        if zone != "Z":
            sign = -1 if zone[0] == "-" else 1
            offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        when = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            tzinfo=timezone(offset),
        )
    except ValueError as exc:
        return f"timestamp is out of range: {exc}"
    seconds = (when - _EPOCH) // timedelta(seconds=1)
    nanos = int((fraction + "000000000")[:9])
    return seconds * 1_000_000_000 + nanos


def timestamp_datetime(value: str) -> datetime | None:
    """The timestamp as an aware datetime (to the microsecond), or None."""
    parsed = parse_timestamp(value) if value else "missing"
    if isinstance(parsed, str):
        return None
    return _EPOCH + timedelta(microseconds=parsed // 1000)


# ---- one file -------------------------------------------------------------------------


def file_problems(kind: str, relpath: str, doc: YamlDoc) -> list[Problem]:
    """Schema and lint of one parsed file (progress: all but its entries)."""
    root = doc.data
    found: list[Problem] = []
    if not isinstance(root, dict):
        what = "the file is empty" if root is None else f"it is a {type(root).__name__}"
        found.append(
            Problem(
                relpath,
                doc.line_of(()),
                "small-lint",
                f"artifact must be a YAML mapping (object) at top level; {what}",
                f"start from the v1.0.0 layout: small_version, owner and the {kind} keys",
            )
        )
        return found
    found += _version_problems(relpath, doc, root)
    if kind != "workspace":
        found += _owner_problems(kind, relpath, doc, root)
        found += _unknown_keys(kind, relpath, doc, root)
    found += schema_problems(kind, relpath, doc, root)
    found += _shape_problems(kind, relpath, doc, root)
    found += unquoted_timestamp_problems(relpath, doc, doc.unquoted_timestamps)
    return found


def _version_problems(relpath: str, doc: YamlDoc, root: dict[str, Any]) -> list[Problem]:
    line = doc.line_of(("small_version",))
    if "small_version" not in root:
        return [
            Problem(
                relpath,
                doc.line_of(()),
                "small-version",
                'small_version must be exactly "1.0.0", got: nothing',
                'add the line small_version: "1.0.0" at the top',
            )
        ]
    value = root["small_version"]
    if isinstance(value, str) and (value == "0.1" or value.startswith("0.")):
        return [
            Problem(
                relpath,
                line,
                "small-v0.1",
                f"a SMALL v{value} file: v0.1 is deprecated, this HUD reads SMALL v1.0.0",
                'migrate to v1.0.0: set small_version: "1.0.0" and follow the v1.0.0 '
                "schemas (`small verify` lists what else must change)",
            )
        ]
    if value == VERSION and isinstance(value, str):
        if ("small_version",) in doc.plain_strings:
            return [
                Problem(
                    relpath,
                    line,
                    "small-version-unquoted",
                    "small_version is unquoted: SMALL writes it as a quoted string",
                    'write small_version: "1.0.0" so no YAML tool reads it as something else',
                    "warn",
                )
            ]
        return []
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [
            Problem(
                relpath,
                line,
                "small-version",
                f'small_version is the number {value}, not the string "1.0.0"',
                'quote it: small_version: "1.0.0"',
            )
        ]
    return [
        Problem(
            relpath,
            line,
            "small-version",
            f'small_version must be exactly "1.0.0", got: {value!r}',
            'set small_version: "1.0.0" (quoted); this HUD reads SMALL v1.0.0',
        )
    ]


def _owner_problems(kind: str, relpath: str, doc: YamlDoc, root: dict[str, Any]) -> list[Problem]:
    want = OWNERS[kind]
    owner = root.get("owner")
    if owner == want:
        return []
    got = "nothing" if owner is None else repr(owner)
    who = "a human" if want == "human" else "the agent"
    return [
        Problem(
            relpath,
            doc.line_of(("owner",)) or doc.line_of(()),
            "small-owner",
            f'{kind} must have owner: "{want}", got: {got}',
            f'set owner: "{want}": {kind}.small.yml is written by {who}',
        )
    ]


def _unknown_keys(kind: str, relpath: str, doc: YamlDoc, root: dict[str, Any]) -> list[Problem]:
    allowed = TOP_LEVEL_KEYS[kind]
    return [
        Problem(
            relpath,
            doc.line_of((key,)),
            "small-unknown-key",
            f"unknown top-level key {key!r} for {kind} artifact",
            f"remove it; SMALL v1.0.0 allows only: {', '.join(sorted(allowed))}",
        )
        for key in root
        if key not in allowed
    ]


def schema_problems(
    kind: str,
    relpath: str,
    doc: YamlDoc,
    data: Any,
    *,
    model: type[BaseModel] | None = None,
    prefix: tuple[str | int, ...] = (),
) -> list[Problem]:
    """Validation against the kind's JSON Schema (model); one problem per error."""
    model = model or SCHEMAS[kind]
    try:
        model.model_validate(data)
    except ValidationError as exc:
        found = []
        for error in exc.errors(include_url=False)[:MAX_PER_FILE]:
            loc = (*prefix, *error["loc"])
            where = ".".join(str(part) for part in loc) or "(top level)"
            found.append(
                Problem(
                    relpath,
                    doc.line_of(loc),
                    "small-schema",
                    f"schema: {where}: {_message(error)}",
                    f"see the SMALL v1.0.0 {kind} schema (schemas-v1.0.0/{kind}.schema.json)",
                )
            )
        return found
    return []


def _message(error: Any) -> str:
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key (additionalProperties is false)"
    if kind == "missing":
        return "required key is missing"
    return str(error.get("msg", "invalid"))


def _shape_problems(kind: str, relpath: str, doc: YamlDoc, root: dict[str, Any]) -> list[Problem]:
    """The reference's per-type lint rules (validateIntent, validatePlan, ...)."""
    found: list[Problem] = []

    def bad(path: tuple[str | int, ...], message: str, hint: str, code: str = "small-lint") -> None:
        found.append(Problem(relpath, doc.line_of(path) or doc.line_of(()), code, message, hint))

    def objects(
        field: str, keys: tuple[str, ...], noun: str, empty_hint: str, object_hint: str
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Check that `field` is a non-empty array of objects whose `keys` are non-empty
        strings; yields each object, with its index, for rules of its own (so each
        object's problems stay together, in file order)."""
        items = root.get(field)
        if not isinstance(items, list) or not items:
            bad((field,), f"{kind}.{field} must be a non-empty array", empty_hint)
            return
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                bad((field, i), f"{field}[{i}] must be an object", object_hint)
                continue
            for key in keys:
                value = item.get(key)
                if not isinstance(value, str) or not value.strip():
                    message = f"{field}[{i}].{key} must be a non-empty string"
                    bad((field, i, key), message, f"give the {noun} a {key}")
            yield i, item

    if kind == "intent":
        intent = root.get("intent")
        if not isinstance(intent, str) or not intent.strip():
            bad(("intent",), "intent.intent must be a non-empty string", "say what the work is")
        scope = root.get("scope")
        if not isinstance(scope, dict):
            bad(
                ("scope",),
                "intent.scope must be an object with include/exclude arrays",
                "write scope with include: [] and exclude: [] (lists of paths)",
            )
        else:
            for part in ("include", "exclude"):
                if not isinstance(scope.get(part), list):
                    bad(
                        ("scope", part),
                        f"intent.scope.{part} must be an array",
                        f"write {part}: [] when there is nothing to list",
                    )
        if not isinstance(root.get("success_criteria"), list):
            bad(
                ("success_criteria",),
                "intent.success_criteria must be an array",
                "write success_criteria: [] or list the criteria",
            )
    elif kind == "constraints":
        for i, item in objects(
            "constraints",
            ("id", "rule"),
            "constraint",
            "add at least one constraint with id, rule and severity",
            "give it id, rule and severity",
        ):
            if item.get("severity") not in ("error", "warn"):
                bad(
                    ("constraints", i, "severity"),
                    f'constraints[{i}].severity must be "error" or "warn"',
                    'use severity: "error" or severity: "warn"',
                )
    elif kind == "plan":
        tasks = objects(
            "tasks",
            ("id", "title"),
            "task",
            "the agent adds tasks with `small plan --add`",
            "give it id and title",
        )
        for _ in tasks:  # no rules of their own beyond id and title
            pass
    elif kind == "progress":
        if not isinstance(root.get("entries"), list):
            bad(
                ("entries",),
                "progress.entries must be an array",
                "write entries: [] for a new workspace",
            )
    elif kind == "handoff":
        summary = root.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            bad(
                ("summary",),
                "handoff.summary must be a non-empty string",
                "regenerate it with `small handoff`",
            )
        resume = root.get("resume")
        if not isinstance(resume, dict):
            bad(
                ("resume",),
                "handoff.resume must be an object",
                "regenerate it with `small handoff`",
            )
        else:
            if "current_task_id" in resume and resume["current_task_id"] is not None:
                current = resume["current_task_id"]
                if not isinstance(current, str):
                    bad(
                        ("resume", "current_task_id"),
                        "handoff.resume.current_task_id must be a string or null",
                        "write the id of the task to resume, or null",
                        "small-current-task",
                    )
                elif not current.strip():
                    bad(
                        ("resume", "current_task_id"),
                        "handoff.resume.current_task_id must not be an empty string: "
                        "it must be null or a task id",
                        "write current_task_id: null when no task is current, or regenerate "
                        "the handoff with `small handoff`",
                        "small-current-task",
                    )
            if not isinstance(resume.get("next_steps"), list):
                bad(
                    ("resume", "next_steps"),
                    "handoff.resume.next_steps must be an array",
                    "write next_steps: [] or list them",
                )
        if not isinstance(root.get("links"), list):
            bad(("links",), "handoff.links must be an array", "write links: []")
    elif kind == "workspace" and root.get("kind") not in ("repo-root", "examples"):
        bad(
            ("kind",),
            f'invalid workspace kind {root.get("kind")!r}; valid kinds: "repo-root", "examples"',
            "set kind: repo-root (or examples)",
            "small-workspace",
        )
    return found


def unquoted_timestamp_problems(
    relpath: str, doc: YamlDoc, paths: Sequence[tuple[str | int, ...]]
) -> list[Problem]:
    """Warnings for timestamps written without quotes (capped per file)."""
    found = [
        Problem(
            relpath,
            doc.line_of(path),
            "small-timestamp-unquoted",
            f"{'.'.join(str(p) for p in path)} is an unquoted timestamp: a YAML 1.1 loader "
            "(PyYAML, ruamel's safe loader) turns it into a datetime and drops nanoseconds",
            'quote it, as the SMALL CLI writes it: timestamp: "2026-01-14T17:47:07.507016000Z"',
            "warn",
        )
        for path in paths[:MAX_PER_FILE]
    ]
    if len(paths) > MAX_PER_FILE:
        found.append(
            Problem(
                relpath,
                None,
                "small-timestamp-unquoted",
                f"{len(paths) - MAX_PER_FILE} more unquoted timestamps",
                "quote every timestamp",
                "warn",
            )
        )
    return found


# ---- progress entries -----------------------------------------------------------------


class EntryChecker:
    """Schema and lint of progress entries, one at a time, in file order (incremental)."""

    def __init__(self, relpath: str) -> None:
        self.relpath = relpath
        self.previous: int | None = None
        self.previous_text = ""
        self.counts: dict[str, int] = {}

    def check(
        self, index: int, raw: Any, doc: YamlDoc, path: tuple[str | int, ...]
    ) -> list[Problem]:
        found: list[Problem] = []
        line = doc.line_of(path)
        if not isinstance(raw, dict):
            self._add(
                found,
                Problem(
                    self.relpath,
                    line,
                    "small-lint",
                    f"entries[{index}] must be an object",
                    "each entry is a mapping with task_id, timestamp, evidence",
                ),
            )
            return found
        for problem in schema_problems(
            "progress", self.relpath, doc, raw, model=ProgressEntry, prefix=path
        ):
            self._add(found, problem)
        task_id = raw.get("task_id")
        if not isinstance(task_id, str) or not task_id.strip():
            self._add(
                found,
                Problem(
                    self.relpath,
                    line,
                    "small-task-id",
                    f"progress entry {index} must include task_id (non-empty string)",
                    "name the plan task (or meta/...) this entry is about",
                ),
            )
        stamp = raw.get("timestamp")
        stamp_text = stamp if isinstance(stamp, str) else ""
        parsed = parse_timestamp(stamp_text)
        ts_line = doc.line_of((*path, "timestamp")) or line
        if isinstance(parsed, str):
            self._add(
                found,
                Problem(
                    self.relpath,
                    ts_line,
                    "small-timestamp",
                    f"progress entry {index} timestamp {stamp_text!r} invalid: {parsed} "
                    "(expected RFC3339Nano with fractional seconds, strictly increasing)",
                    'write it like timestamp: "2026-01-14T17:47:07.507016000Z" (quoted, UTC)',
                ),
            )
            return found
        if self.previous is not None and parsed <= self.previous:
            self._add(
                found,
                Problem(
                    self.relpath,
                    ts_line,
                    "small-timestamp",
                    f"progress entry {index} timestamp {stamp_text!r} must be after previous entry "
                    f"{self.previous_text!r} (expected strictly increasing RFC3339Nano)",
                    "progress is append-only: entries are in time order, each strictly later",
                ),
            )
            return found
        self.previous = parsed
        self.previous_text = stamp_text
        if not any(_has_value(raw.get(name)) for name in EVIDENCE_FIELDS):
            self._add(
                found,
                Problem(
                    self.relpath,
                    line,
                    "small-evidence",
                    f"progress entry {index} (task_id: {task_id}) must have at least one evidence "
                    "field (evidence, verification, command, test, link, commit)",
                    "record what proves the step: evidence, a command, a test, a link or a commit",
                ),
            )
        return found

    def _add(self, found: list[Problem], problem: Problem) -> None:
        """Keep at most MAX_PER_FILE problems of one code per file."""
        count = self.counts.get(problem.code, 0) + 1
        self.counts[problem.code] = count
        if count <= MAX_PER_FILE:
            found.append(problem)

    def overflow(self) -> list[Problem]:
        """One problem per code that had more than MAX_PER_FILE."""
        return [
            Problem(
                self.relpath,
                None,
                code,
                f"{count - MAX_PER_FILE} more problems like these",
                "fix the ones listed, then check again",
                "error",
            )
            for code, count in sorted(self.counts.items())
            if count > MAX_PER_FILE
        ]


def _has_value(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    return True


# ---- strict ---------------------------------------------------------------------------


def strict_problems(
    plan_path: str | None,
    tasks: Sequence[Task] | None,
    progress_path: str | None,
    entries: Sequence[Entry] | None,
    handoff_path: str | None,
    handoff: dict[str, Any] | None,
    handoff_line: int | None = None,
) -> list[Problem]:
    """S1, S2 (plan and progress loaded) and S3 (plan and handoff loaded)."""
    found: list[Problem] = []
    known = {task.id for task in tasks or () if task.id}
    if tasks and entries is not None and progress_path is not None:
        satisfied = {e.task_id for e in entries if e.task_id and e.strict_evidence}
        with_entries = {e.task_id for e in entries if e.task_id}
        missing = sorted(
            f"{t.id} ({t.title}) [{_why_missing(t.id in with_entries)}]"
            for t in tasks
            if t.id and t.status.lower() in ("completed", "blocked") and t.id not in satisfied
        )
        if missing:
            found.append(
                Problem(
                    progress_path,
                    None,
                    "small-S1",
                    f"strict invariant S1 failed: {'; '.join(missing)}",
                    "every completed or blocked task needs a progress entry with evidence or "
                    "notes: the agent records one with `small checkpoint --task <id> --evidence`",
                )
            )
        replay = _replay_of(handoff)
        offenders = sorted(
            {
                _with_closest(e.task_id, [t.id for t in tasks])
                for e in entries
                if (not replay or e.replay_id == replay)
                and e.task_id
                and not e.task_id.startswith("meta/")
                and e.task_id not in known
            }
        )
        if offenders:
            found.append(
                Problem(
                    progress_path,
                    None,
                    "small-S2",
                    f"strict invariant S2 failed (replayId scope: {replay or 'unknown'}): "
                    f"unknown progress task ids: {'; '.join(offenders)}",
                    "progress may only name plan tasks (or meta/*): add the task to the plan, or "
                    "repair with `small fix --orphan-progress`",
                )
            )
    if tasks is not None and handoff is not None and handoff_path is not None:
        resume = handoff.get("resume")
        current = resume.get("current_task_id") if isinstance(resume, dict) else None
        current_id = current.strip() if isinstance(current, str) else ""
        if current_id and not current_id.startswith("meta/") and current_id not in known:
            found.append(
                Problem(
                    handoff_path,
                    handoff_line,
                    "small-S3",
                    f"strict invariant S3 failed: resume.current_task_id references {current_id!r} "
                    "which is missing from plan",
                    "regenerate the handoff with `small handoff`, or add the task to the plan",
                )
            )
    return found


def _why_missing(has_entries: bool) -> str:
    return "empty evidence/notes" if has_entries else "no progress entry"


def _replay_of(handoff: dict[str, Any] | None) -> str:
    replay = handoff.get("replayId") if isinstance(handoff, dict) else None
    value = replay.get("value") if isinstance(replay, dict) else None
    return value.strip() if isinstance(value, str) else ""


def _with_closest(task_id: str, ids: Sequence[str]) -> str:
    closest = sorted(i for i in ids if i and (i in task_id or task_id in i))[:3]
    if not closest:
        closest = sorted(i for i in ids if i.lower() == task_id.lower())[:3]
    return f"{task_id} (closest: {', '.join(closest)})" if closest else task_id


def layout_problem(small_rel: str, names: Iterable[tuple[str, bool]]) -> list[Problem]:
    """S4: only the canonical files directly under `.small/` (`names`: (name, is_dir))."""
    unexpected, legacy = [], []
    for name, is_dir in names:
        rel = f".small/{name}/" if is_dir else f".small/{name}"
        if is_dir:
            unexpected.append(rel)
            if name in ("archive", "runs"):
                legacy.append(rel)
        elif name not in CANONICAL:
            unexpected.append(rel)
    if not unexpected:
        return []
    hint = "delete or move the other paths outside .small/"
    if legacy:
        hint = (
            "run `small fix --runtime-layout` to move legacy runs and archives to "
            ".small-archive/ and .small-runs/"
        )
        if len(unexpected) > len(legacy):
            hint += "; delete or move the other paths outside .small/"
    return [
        Problem(
            small_rel or ".",
            None,
            "small-S4",
            "strict invariant S4 failed: unexpected paths under .small/: "
            + ", ".join(sorted(unexpected)),
            hint,
        )
    ]
