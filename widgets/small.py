"""Widgets of a SMALL workspace: intent and constraints, plan, progress timeline, handoff.

They render what the SMALL screen hands them (store.sources.small models and parsed data);
nothing here reads files. Every agent or human string goes through `safe`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

from store.format.problems import Problem
from store.sources.small.models import Entry, Task, strings_of, text_of
from widgets.keyed_table import Column, PlacedTable, cell
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import bullets, field_line, heading, join_lines, problem_text


class _Fixed(Text):
    """A cell of a fixed-width column: the table need not measure it (1,206 rows add fast)."""

    __slots__ = ()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, 1)


def fixed(text: Text) -> Text:
    """`text` (a cell for a fixed-width column) made cheap to add to a DataTable."""
    text.__class__ = _Fixed
    return text


SMALL_LOOKS = {
    "completed": "succeeded",
    "in_progress": "running",
    "pending": "ready",
    "blocked": "blocked",
    "cancelled": "expired",
}
"""A SMALL task status -> the look (symbol, colour) of the HUD status it resembles."""


def small_status(
    status: str, variables: Mapping[str, str] | None = None, *, word: bool = True
) -> Text:
    """`✓ completed`, `■ blocked`: SMALL's own word with the HUD's symbol and colour."""
    return status_text(status, variables, word=word, like=SMALL_LOOKS.get(status, ""))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _path_note(relpath: str, owner: str, edit_key: str | None = None) -> Text:
    """`  path · owner human · E edits` (`edit_key`: the key that edits it, if any)."""
    note = Text(f"  {relpath} · owner {owner}", style="dim")
    if edit_key:
        note.append(f" · {edit_key} edits", style="dim")
    elif owner == "human":
        note.append(" · read-only", style="dim")
    return note


def intent_text(
    intent: Mapping[str, Any],
    constraints: Mapping[str, Any],
    *,
    intent_path: str,
    constraints_path: str,
    keys: Mapping[str, str],
    accept: Sequence[str],
    variables: Mapping[str, str] | None = None,
) -> Text:
    """Intent (what, scope, success criteria) and the constraints, rendered. `keys` are
    the keys bound now to `intent` and `constraints` (edit) and `copy` (the accept
    commands); one left out is not offered (read-only mode)."""
    parts: list[Text | str] = [
        heading("Intent"),
        _path_note(intent_path, "human", keys.get("intent")),
    ]
    what = text_of(intent.get("intent")).strip()
    parts.append(
        Text("  ").append_text(safe(what, multiline=True))
        if what
        else Text("  (none)", style="dim")
    )
    scope = _mapping(intent.get("scope"))
    parts += [
        "",
        heading("Scope"),
        Text("  include", style="bold"),
        bullets(strings_of(scope.get("include"))),
        Text("  exclude", style="bold"),
        bullets(strings_of(scope.get("exclude"))),
        "",
        heading("Success criteria"),
        bullets(strings_of(intent.get("success_criteria"))),
        "",
        heading("Constraints"),
        _path_note(constraints_path, "human", keys.get("constraints")),
    ]
    items = constraints.get("constraints")
    rows = [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []
    if not rows:
        parts.append(Text("  none", style="dim"))
    width = max((len(text_of(c.get("id"))) for c in rows), default=0)
    for item in rows:
        severity = text_of(item.get("severity"))
        error = severity == "error"
        line = Text("  ")
        line.append(
            "✗ error" if error else ("⚠ warn " if severity == "warn" else f"- {severity}"),
            style=theme_style("$error bold" if error else "$warning", variables),
        )
        line.append("  ")
        line.append_text(safe(text_of(item.get("id")).ljust(width)))
        line.append("  ")
        line.append_text(safe(text_of(item.get("rule")), multiline=True))
        parts.append(line)
    if accept:
        parts += [
            "",
            heading("Recording an edit in SMALL"),
            Text(
                "  The HUD saves intent and constraints (human-owned) but never writes "
                "progress. SMALL's accept flow records a meta/accept-* progress entry; run:",
                style="dim",
            ),
        ]
        parts += [Text("  $ ").append_text(safe(command)) for command in accept]
        if "copy" in keys:
            parts.append(Text(f"  ({keys['copy']} copies these commands)", style="dim"))
    return join_lines(parts)


class PlanTable(PlacedTable[Task]):
    """One row per plan task: status, id, title, dependencies (unmet ones marked)."""

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        ("status", "Status", 13, 13),
        ("id", "Task", 9, 9),
        ("title", "Title", 0, 0),
        ("deps", "Depends on", 12, 12),
    )

    def show(self, tasks: Sequence[Task], variables: Mapping[str, str] | None = None) -> None:
        """Rows keyed by their place in the plan (task ids need not be unique)."""
        status = {t.id: t.status for t in tasks}
        self.show_items(tasks, lambda task: _task_cells(task, status, variables))


def _task_cells(
    task: Task, status: Mapping[str, str], variables: Mapping[str, str] | None
) -> tuple[Text, ...]:
    deps = Text()
    for n, dep in enumerate(task.dependencies):
        if n:
            deps.append(" ")
        done = status.get(dep) == "completed"
        shown = safe(dep)
        if not done:
            shown.stylize("bold")
        deps.append_text(shown)
        if not done:
            deps.append("*", style="bold")
    return (
        small_status(task.status, variables),
        safe(task.id),
        safe(task.title),
        deps if task.dependencies else Text("—", style="dim"),
    )


def task_detail(
    task: Task | None, entries: Sequence[Entry], variables: Mapping[str, str] | None = None
) -> Text:
    """The selected task: title, steps, acceptance, dependencies, and its latest entries."""
    if task is None:
        return Text("no task selected", style="dim")
    head = Text()
    head.append_text(small_status(task.status, variables))
    head.append("  ")
    head.append_text(safe(task.id)).append("  ")
    head.append_text(safe(task.title))
    parts: list[Text | str] = [head]
    if task.dependencies:
        parts.append(field_line("depends on", ", ".join(task.dependencies)))
    if task.steps:
        parts += [Text("steps", style="dim"), bullets(task.steps)]
    if task.acceptance:
        parts += [Text("acceptance", style="dim"), bullets(task.acceptance)]
    mine = [e for e in entries if e.task_id == task.id]
    parts.append(Text(f"{len(mine)} progress entries", style="dim"))
    for entry in mine[-3:]:
        parts.append(Text("  ").append_text(_entry_line(entry, variables)))
    return join_lines(parts)


def _short_time(timestamp: str) -> str:
    """`2026-01-14T17:47:07.507016000Z` as `01-14 17:47:07`; other text as it is."""
    if len(timestamp) >= 19 and timestamp[4] == "-" and timestamp[10] in "Tt ":
        return f"{timestamp[5:10]} {timestamp[11:19]}"
    return timestamp


def _first_line(text: str, limit: int = 240) -> str:
    """The first line of `text`, cut to `limit` characters, with `…` if anything was cut."""
    line, newline, _ = text.partition("\n")
    if len(line) > limit:
        return line[:limit] + "…"
    return line + " …" if newline else line


def _entry_line(entry: Entry, variables: Mapping[str, str] | None) -> Text:
    line = Text(_short_time(entry.timestamp) + " ", style="dim")
    line.append_text(small_status(entry.status, variables, word=False)).append(" ")
    line.append_text(safe(entry.what))
    return cell(line)


class Timeline(PlacedTable[Entry]):
    """Progress entries in file order (keyed by place: an entry's index is its place in the
    file); appended entries are added, not the whole table.

    Follows the end (like `tail -f`) while the cursor is on the last row.
    """

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        ("n", "#", 5, 5),
        ("time", "Time", 14, 14),
        ("task", "Task", 12, 12),
        ("st", "St", 2, 2),
        ("what", "What", 0, 0),
    )

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.generation = -1

    def show(
        self, entries: Sequence[Entry], generation: int, variables: Mapping[str, str] | None = None
    ) -> int:
        """Show `entries`, keyed by place; returns how many rows were added (all of them
        after a rebuild)."""
        following = self.at_end()
        start = len(self.items)
        if generation != self.generation or len(entries) < start:
            self.items, start = [], 0
            self.generation = generation
        new = entries[start:]
        if not new:
            return 0
        self.items.extend(new)
        rows = [(str(e.index), _entry_cells(e, variables)) for e in new]
        if start:
            self.append_rows(rows)  # a SMALL log may hold thousands: the rest stay as they are
        else:
            self.set_rows(rows)
        if following:
            self.move_cursor(row=self.row_count - 1, animate=False)
        return len(new)


def _entry_cells(entry: Entry, variables: Mapping[str, str] | None) -> tuple[Text, ...]:
    return (
        fixed(Text(str(entry.index + 1), style="dim")),
        fixed(Text(_short_time(entry.timestamp))),
        fixed(safe(entry.task_id)),
        fixed(small_status(entry.status, variables, word=False)),
        fixed(safe(_first_line(entry.what))),
    )


def entry_detail(entry: Entry | None, variables: Mapping[str, str] | None = None) -> Text:
    """Every field of one progress entry (command, command_ref, evidence, notes, ...)."""
    if entry is None:
        return Text("no entries", style="dim")
    head = Text(f"#{entry.index + 1} ", style="bold")
    head.append_text(small_status(entry.status, variables)).append("  ")
    head.append_text(safe(entry.task_id)).append("  ")
    head.append(entry.timestamp or "(no timestamp)", style="dim")
    parts: list[Text | str] = [head]
    for name, value in (
        ("command", entry.command),
        (
            "command_summary",
            entry.command_summary if entry.command_summary != entry.command else "",
        ),
        ("command_ref", entry.command_ref),
        ("command_sha256", entry.command_sha256),
        ("evidence", entry.evidence),
        ("verification", entry.verification),
        ("test", entry.test),
        ("link", entry.link),
        ("commit", entry.commit),
        ("notes", entry.notes),
        ("replayId", entry.replay_id),
    ):
        if value:
            parts.append(field_line(name, safe(value, multiline=True), 15))
    return join_lines(parts)


def handoff_text(
    handoff: Mapping[str, Any],
    *,
    relpath: str,
    current: Task | None,
    variables: Mapping[str, str] | None = None,
) -> Text:
    """The resume point: summary, current task, next steps, links, replayId, run."""
    parts: list[Text | str] = [
        heading("Handoff: where the next session resumes"),
        _path_note(relpath, "agent"),
    ]
    summary = text_of(handoff.get("summary")).strip()
    parts.append(
        Text("  ").append_text(safe(summary, multiline=True))
        if summary
        else Text("  (no summary)", style="dim")
    )
    resume = _mapping(handoff.get("resume"))
    current_id = resume.get("current_task_id")
    line = Text("  current task: ", style="dim")
    if current_id is None:
        line.append("none", style="dim")
    else:
        line.append_text(safe(text_of(current_id) or '""'))
        if current is not None:
            line.append("  ")
            line.append_text(small_status(current.status, variables))
            line.append("  ")
            line.append_text(safe(current.title))
        elif text_of(current_id).strip():
            line.append("  (not in the plan)", style="bold")
    parts += ["", line, "", heading("Next steps"), bullets(strings_of(resume.get("next_steps")))]
    links = handoff.get("links")
    items = [link for link in links if isinstance(link, dict)] if isinstance(links, list) else []
    parts += ["", heading("Links")]
    if not items:
        parts.append(Text("  none", style="dim"))
    for link in items:
        entry = Text("  • ")
        entry.append_text(safe(text_of(link.get("url"))))
        if link.get("description"):
            entry.append("  ")
            entry.append_text(safe(text_of(link.get("description"))))
        parts.append(entry)
    replay = _mapping(handoff.get("replayId"))
    parts += ["", field_line("  replayId", safe(text_of(replay.get("value")) or "—"), 13)]
    if replay.get("source"):
        parts.append(field_line("  source", safe(text_of(replay.get("source"))), 13))
    run = handoff.get("run")
    if isinstance(run, dict):
        for key, value in run.items():
            parts.append(field_line(f"  run.{key}", safe(text_of(value)), 13))
    return join_lines(parts)


def checks_text(
    verdicts: Mapping[str, str],
    problems: Sequence[Problem],
    variables: Mapping[str, str] | None = None,
) -> Text:
    """The four verdicts of the reference CLI, then every problem with its hint."""
    head = Text("SMALL v1.0.0  ")
    for name, verdict in verdicts.items():
        good = verdict == "valid"
        head.append(
            f"{'✓' if good else '✗'} {name} {verdict}",
            style=theme_style("$success" if good else "$error bold", variables),
        )
        head.append("   ")
    parts: list[Text | str] = [head, ""]
    if not problems:
        parts.append(Text("no problems", style="dim"))
    parts += [problem_text(p, variables) for p in problems]
    return join_lines(parts)


def resume_line(
    current_id: str | None,
    current: Task | None,
    verdicts: Mapping[str, str],
    variables: Mapping[str, str] | None = None,
) -> Text:
    """One line above the tabs: where work resumes (the handoff) and the verdicts."""
    line = Text("resume ", style="bold")
    if current_id is None:
        line.append("no current task", style="dim")
    else:
        line.append_text(safe(current_id))
        if current is not None:
            line.append(" ")
            line.append_text(small_status(current.status, variables))
            line.append(" ")
            line.append_text(safe(current.title))
    failed = [name for name, verdict in verdicts.items() if verdict != "valid"]
    tail = Text("  ")
    tail.append(
        "✗ " + ", ".join(failed) if failed else "✓ valid",
        style=theme_style("$error bold" if failed else "$success", variables),
    )
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line.append_text(tail) if len(line) < 60 else Text.assemble(line[:58], "…", tail)
