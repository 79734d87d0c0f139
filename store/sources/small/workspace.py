"""A SMALL v1.0.0 workspace (`.small/`) inside a state directory, kept current file by file.

`hud DIR` shows the SMALL workspace of DIR (DIR holds `.small/`, or is `.small`) as
one mission with the id `small:<name of the folder holding .small>`. The state
directory's `Workspace` routes every path under `.small/` here (`owns`, `apply`):
only the changed file is re-parsed. The progress file, append-only by protocol and
often the largest (the live fixture: 1.1 MB, 1,206 entries), is read incrementally
when it only grew by whole entries: the appended text is parsed alone and checked
from the last entry's timestamp on; any other change re-parses the file.

The YAML reader (ruamel.yaml) and the models and checks (pydantic) are imported when
a SMALL file is first read, not with this module: a state directory without `.small/`
never loads them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.format.confined import list_folder
from store.format.layout import is_transient
from store.format.load import read_bytes
from store.format.problems import Problem
from store.format.records import Settings
from store.format.row import MissionStatus, MissionSummary
from store.sources.small.layout import FILES, ID_PREFIX, KINDS, REQUIRED, SMALL_DIR

if TYPE_CHECKING:
    from store.sources.small.lint import EntryChecker
    from store.sources.small.models import Entry, Task
    from store.sources.small.yaml import YamlDoc

MAX_BYTES = 32 * 1024 * 1024

STEP_STATES = {
    "completed": "succeeded",
    "in_progress": "running",
    "pending": "ready",
    "blocked": "blocked",
    "cancelled": "expired",
}
"""A SMALL task status as the overview's step state (its symbol and word)."""


def parse_yaml(relpath: str, data: bytes, *, line_offset: int = 0) -> YamlDoc:
    """`store.sources.small.yaml.parse_yaml`, which loads ruamel.yaml when first called."""
    from store.sources.small import yaml

    return yaml.parse_yaml(relpath, data, line_offset=line_offset)


@dataclass(slots=True)
class SmallFile:
    """One of the six files: what parsed, its problems, and the bytes' sha256."""

    kind: str
    relpath: str
    exists: bool = False
    doc: YamlDoc | None = None
    sha256: str | None = None
    text: str | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def data(self) -> dict[str, Any] | None:
        data = self.doc.data if self.doc is not None else None
        return data if isinstance(data, dict) else None


@dataclass(slots=True)
class _Tail:
    """What the incremental progress reader needs to append safely."""

    size: int = 0
    digest: str = ""
    lines: int = 0
    indent: str | None = None
    ends_clean: bool = False


class SmallWorkspace:
    """The `.small/` folder of a state directory (or the state directory itself)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if root.name == SMALL_DIR:
            self.prefix = ""
            name = root.parent.name
        else:
            self.prefix = f"{SMALL_DIR}/"
            name = root.name
        self.id = ID_PREFIX + (name or "workspace")
        self.folder = root if not self.prefix else root / SMALL_DIR
        self.present = False
        self.files: dict[str, SmallFile] = {
            kind: SmallFile(kind, self.prefix + name) for kind, name in FILES.items()
        }
        self.tasks: list[Task] = []
        self.entries: list[Entry] = []
        self.generation = 0
        """Bumped when entries are replaced rather than appended (a viewer rebuilds)."""
        self._entry_problems: list[Problem] = []
        self._checker: EntryChecker | None = None
        """The progress entries' checker, made when first needed (`_checking`)."""
        self._tail = _Tail()
        self._layout: list[Problem] = []
        self._derived: list[Problem] | None = None

    # ---- routing ---------------------------------------------------------------------

    def owns(self, rel: str) -> bool:
        """True for `.small` and every path under it (every path, when root is .small)."""
        if not self.prefix:
            return rel != "hud.toml"
        return rel == SMALL_DIR or rel.startswith(self.prefix)

    def apply(self, rel: str) -> set[str]:
        """Bring this path up to date; returns {id} if the workspace may have changed."""
        if is_transient(rel):
            return set()
        was_present = self.present
        name = rel[len(self.prefix) :] if rel.startswith(self.prefix) else ""
        if rel == SMALL_DIR or not was_present:
            self.load()
        else:
            self.present = self.folder.is_dir() and not self.folder.is_symlink()
            if name in KINDS:
                self._load(KINDS[name])
            self._scan_layout()
            self._derived = None
        return {self.id} if self.present or was_present else set()

    def load(self) -> None:
        """Read every file (files whose bytes did not change since the last read are kept)."""
        self.present = self.folder.is_dir() and not self.folder.is_symlink()
        for kind in FILES:
            self._load(kind)
        self._scan_layout()
        self._derived = None

    # ---- loading ---------------------------------------------------------------------

    def _load(self, kind: str) -> None:
        file = self.files[kind]
        path = self.root / file.relpath
        file.exists = self.present and os.path.lexists(path)
        if not file.exists:
            file.doc, file.sha256, file.text = None, None, None
            file.problems = self._missing(kind, file.relpath) if self.present else []
            if kind == "progress":
                self._reset_entries([])
            elif kind == "plan":
                self.tasks = []
            return
        data = read_bytes(self.root, file.relpath, MAX_BYTES)
        if isinstance(data, Problem):
            file.doc, file.sha256, file.text = None, None, None
            file.problems = [data]
            if kind == "progress":
                self._reset_entries([])
            elif kind == "plan":
                self.tasks = []
            return
        digest = hashlib.sha256(data).hexdigest()
        if digest == file.sha256 and (file.doc is not None or file.problems):
            return  # the same bytes as last time (a scan and a watch event, say)
        file.sha256 = digest
        if kind == "progress":
            self._load_progress(file, data)
            return
        from store.sources.small import lint
        from store.sources.small.models import Task

        file.doc = parse_yaml(file.relpath, data)
        file.text = (
            data.decode("utf-8", errors="replace") if kind in ("intent", "constraints") else None
        )
        file.problems = file.doc.problems + (
            lint.file_problems(kind, file.relpath, file.doc) if not file.doc.problems else []
        )
        if kind == "plan":
            tasks = file.data.get("tasks") if file.data else None
            self.tasks = [
                Task.of(raw, file.doc.line_of(("tasks", i)))
                for i, raw in enumerate(tasks if isinstance(tasks, list) else [])
            ]

    def _missing(self, kind: str, relpath: str) -> list[Problem]:
        if kind == "workspace":
            return [
                Problem(
                    relpath,
                    None,
                    "small-workspace-missing",
                    "workspace metadata missing: no workspace.small.yml (`small verify` fails)",
                    "run `small init` in this folder, or add workspace.small.yml with "
                    'small_version: "1.0.0" and kind: repo-root',
                )
            ]
        return [
            Problem(
                relpath,
                None,
                "small-missing",
                f"missing required file {FILES[kind]}",
                f"every SMALL workspace has {', '.join(FILES[k] for k in REQUIRED)}; "
                "`small init` creates them",
            )
        ]

    # ---- progress, incrementally -----------------------------------------------------

    def _load_progress(self, file: SmallFile, data: bytes) -> None:
        tail = self._tail
        appended = self._appended(data)
        if appended is not None and self._append_entries(file, data, appended):
            return
        from store.sources.small import lint
        from store.sources.small.models import Entry

        doc = parse_yaml(file.relpath, data)
        file.doc = doc
        file.problems = doc.problems + (
            lint.file_problems("progress", file.relpath, doc) if not doc.problems else []
        )
        raw = doc.data.get("entries") if isinstance(doc.data, dict) else None
        items = raw if isinstance(raw, list) else []
        self._checker = lint.EntryChecker(file.relpath)
        problems: list[Problem] = []
        entries = []
        for index, item in enumerate(items):
            path = ("entries", index)
            problems += self._checker.check(index, item, doc, path)
            entries.append(Entry.of(index, item, doc.line_of(path)))
        self._entry_problems = problems
        self._reset_entries(entries)
        tail.size = len(data)
        tail.digest = hashlib.sha256(data).hexdigest()
        tail.lines = data.count(b"\n")
        tail.ends_clean = data.endswith(b"\n")
        tail.indent = None
        first = entries[0].line if entries else None
        if first is not None and isinstance(raw, list) and not doc.problems:
            line = data.split(b"\n", first)[first - 1] if first <= tail.lines + 1 else b""
            stripped = line.lstrip(b" ")
            if stripped.startswith(b"- "):
                tail.indent = line[: len(line) - len(stripped)].decode()
            if list(doc.data)[-1] != "entries":
                tail.indent = None  # entries is not the last key: appends go elsewhere

    def _appended(self, data: bytes) -> bytes | None:
        """The bytes appended since the last read, if the rest is unchanged and clean."""
        tail = self._tail
        if (
            tail.indent is None
            or not tail.ends_clean
            or len(data) <= tail.size
            or hashlib.sha256(data[: tail.size]).hexdigest() != tail.digest
        ):
            return None
        return data[tail.size :]

    def _append_entries(self, file: SmallFile, data: bytes, appended: bytes) -> bool:
        """Parse only `appended` (whole entries at the list's indent); False to re-parse."""
        tail = self._tail
        indent = (tail.indent or "").encode()
        lines = appended.split(b"\n")
        first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith(b"#")), None)
        if first is None or not first.startswith(indent + b"- "):
            return False
        if any(ln.strip() and not ln.startswith(indent) for ln in lines):
            return False  # something at a shallower indent: not just entries
        from store.sources.small import lint
        from store.sources.small.models import Entry

        doc = parse_yaml(file.relpath, b"entries:\n" + appended, line_offset=tail.lines - 1)
        new = doc.data.get("entries") if isinstance(doc.data, dict) else None
        if doc.problems or not isinstance(new, list):
            return False
        start = len(self.entries)
        problems: list[Problem] = []
        for offset, item in enumerate(new):
            problems += self._checking().check(start + offset, item, doc, ("entries", offset))
            self.entries.append(Entry.of(start + offset, item, doc.line_of(("entries", offset))))
        self._entry_problems += problems
        file.problems = (
            [p for p in file.problems if p.code != "small-timestamp-unquoted"]
            + lint.unquoted_timestamp_problems(
                file.relpath,
                doc,
                [
                    ("entries", start + p[1], *p[2:])
                    for p in doc.unquoted_timestamps
                    if len(p) >= 2 and isinstance(p[1], int)
                ],
            )
            if doc.unquoted_timestamps
            else file.problems
        )
        tail.size = len(data)
        tail.digest = hashlib.sha256(data).hexdigest()
        tail.lines = data.count(b"\n")
        tail.ends_clean = data.endswith(b"\n")
        return True

    def _reset_entries(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.generation += 1
        if not entries:
            self._entry_problems = []
            self._tail = _Tail()

    # ---- layout (S4) -------------------------------------------------------------------

    def _scan_layout(self) -> None:
        if not self.present:
            self._layout = []
            return
        entries = list_folder(self.root, self.prefix.rstrip("/"))
        if isinstance(entries, Problem):
            self._layout = [entries]
            return
        listing = [
            (entry.name, entry.is_dir(follow_symlinks=False))
            for entry in entries
            if not is_transient(entry.name)
        ]
        from store.sources.small import lint

        self._layout = lint.layout_problem(self.prefix.rstrip("/"), listing)

    # ---- derived ---------------------------------------------------------------------

    def problems(self) -> list[Problem]:
        """Every problem: per file, progress entries, strict S1-S4."""
        if not self.present:
            return []
        if self._derived is None:
            found: list[Problem] = []
            for file in self.files.values():
                found += file.problems
            found += self._entry_problems + self._checking().overflow()
            found += self._strict() + self._layout
            self._derived = found
        return list(self._derived)

    def _checking(self) -> EntryChecker:
        if self._checker is None:
            from store.sources.small import lint

            self._checker = lint.EntryChecker(self.files["progress"].relpath)
        return self._checker

    def _strict(self) -> list[Problem]:
        from store.sources.small import lint

        plan, progress, handoff = (self.files[k] for k in ("plan", "progress", "handoff"))
        plan_ok = plan.data is not None
        progress_ok = progress.data is not None
        handoff_doc = handoff.doc
        return lint.strict_problems(
            plan.relpath if plan_ok else None,
            self.tasks if plan_ok else None,
            progress.relpath if progress_ok else None,
            self.entries if progress_ok else None,
            handoff.relpath if handoff.data is not None else None,
            handoff.data,
            handoff_doc.line_of(("resume", "current_task_id")) if handoff_doc else None,
        )

    def verdicts(self) -> dict[str, str]:
        from store.sources.small import lint

        return lint.verdicts(self.problems())

    def data(self, kind: str) -> dict[str, Any]:
        """The parsed mapping of a file, or {} (missing, unparsable or not a mapping)."""
        return self.files[kind].data or {}

    @property
    def intent(self) -> str:
        from store.sources.small.models import text_of

        return text_of(self.data("intent").get("intent")).strip()

    @property
    def current_task_id(self) -> str | None:
        resume = self.data("handoff").get("resume")
        current = resume.get("current_task_id") if isinstance(resume, dict) else None
        return current.strip() or None if isinstance(current, str) else None

    def task(self, task_id: str | None) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None) if task_id else None

    def last_activity(self) -> datetime | None:
        from store.sources.small import lint

        for entry in reversed(self.entries):
            when = lint.timestamp_datetime(entry.timestamp)
            if when is not None:
                return when
        updated = self.data("workspace").get("updated_at")
        return lint.timestamp_datetime(updated) if isinstance(updated, str) else None

    def status(self, now: datetime, settings: Settings) -> MissionStatus:
        """needs_you (invalid) > blocked > stale/running (a task in progress) > done > idle."""
        if any(p.severity == "error" for p in self.problems()):
            return MissionStatus.NEEDS_YOU
        states = {t.status for t in self.tasks}
        if "blocked" in states:
            return MissionStatus.BLOCKED
        if "in_progress" in states:
            last = self.last_activity()
            if last is not None and (now - last).total_seconds() > settings.stale_after_seconds:
                return MissionStatus.STALE
            return MissionStatus.RUNNING
        if self.tasks and states <= {"completed", "cancelled"}:
            return MissionStatus.DONE
        return MissionStatus.IDLE

    def summary(self, now: datetime, settings: Settings) -> MissionSummary | None:
        """The overview row, or None when there is no `.small/` folder."""
        if not self.present:
            return None
        current = self.current_task_id
        task = self.task(current)
        title = self.intent.splitlines()[0] if self.intent else "SMALL workspace"
        return MissionSummary(
            id=self.id,
            status=self.status(now, settings),
            title=f"SMALL: {title}",
            current_step=current,
            step_state=STEP_STATES.get(task.status, task.status) if task else None,
            plan_version=None,
            pending=0,
            budget_fraction=None,
            last_activity=self.last_activity(),
            problems=len(self.problems()),
        )
