"""Widgets of a loopx goal: its summary (gate, todos, quota, handoffs) and its todos.

They render what the loopx screen hands them; nothing here reads files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.text import Text

from store.sources.loopx.goal import Goal
from store.sources.loopx.policy import Policy, policy
from store.sources.loopx.state import Todo
from widgets.keyed_table import Column, PlacedTable
from widgets.safe_text import safe
from widgets.status import theme_style
from widgets.tabs.common import field_line, join_lines

WIDTH = 12
NOT_CHAINED = "log not chained (loopx keeps no hash chain)"
MARKS = {"open": "[ ]", "blocked": "[!]", "done": "[x]", "superseded": "[-]"}


def summary_text(goal: Goal, runtime_root: str, variables: Mapping[str, str] | None = None) -> Text:
    """Goal and log, runtime root, gate, todos by role and status, handoffs, quota, runs."""
    head = Text("loopx goal ", style="bold")
    head.append_text(safe(goal.entry.id))
    head.append("  status ", style="dim")
    head.append_text(safe(goal.entry.status or "—"))
    head.append(f"  {NOT_CHAINED}", style="dim")
    parts: list[Text | str] = [head]
    if goal.title:
        parts.append(field_line("objective", _line(safe(goal.title)), WIDTH))
    parts.append(field_line("runtime", safe(runtime_root or "— (none)"), WIDTH))
    parts.append(field_line("state file", safe(goal.state_path), WIDTH))
    for gate in goal.gates():
        line = Text("NEEDS YOU ", style=theme_style("$warning bold reverse", variables))
        if gate.blocks_agent:
            line.append("blocks ")
            line.append_text(safe(gate.blocks_agent))
            line.append(": ")
        line.append_text(safe(gate.text))
        parts.append(field_line("gate", _line(line), WIDTH))
    todos = []
    for role in ("user", "agent"):
        counts = ", ".join(f"{n} {status}" for status, n in sorted(goal.by_status(role).items()))
        claimed = sum(1 for t in goal.state.todos if t.role == role and t.is_open and t.claimed_by)
        todos.append(f"{role} {counts or 'none'}" + (f" ({claimed} claimed)" if claimed else ""))
    parts.append(field_line("todos", "  ·  ".join(todos), WIDTH))
    holders = Text()
    for todo_id, agent in sorted(goal.holders().items()):
        holders.append_text(safe(agent))
        holders.append(" holds ", style="dim")
        holders.append_text(safe(todo_id))
        holders.append("  ")
    for move in goal.handoffs():
        holders.append_text(safe(move.todo_id))
        holders.append(" moved ", style="dim")
        holders.append_text(safe(f"{move.from_agent} → {move.to_agent}"))
        holders.append("  ")
    parts.append(field_line("handoffs", holders if holders.plain else Text("none"), WIDTH))
    quota = policy(goal)
    slots = f"{quota.spent_slots} of {quota.allowed_slots} slots spent (compute {quota.compute})"
    parts.append(field_line("quota", f"{slots}  ·  {quota.state}  ·  {len(goal.runs)} runs", WIDTH))
    parts.append(field_line("readiness", readiness(quota), WIDTH))
    return join_lines(parts)


def readiness(quota: Policy) -> str:
    """loopx's handoff readiness, and why not."""
    if quota.ready:
        return "ready: an agent may take the next todo"
    waiting = f"waiting on {quota.waiting_on}" if quota.waiting_on else "no open todo"
    return f"not ready: {waiting}, quota {quota.state}"


def _line(text: Text, width: int = 64) -> Text:
    """One line of at most `width` cells (an ellipsis says there is more)."""
    text.truncate(width, overflow="ellipsis")
    return text


class TodoTable(PlacedTable[Todo]):
    """Every todo: status, owner, claimed by, evidence, text."""

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        ("mark", "", 3, 3),
        ("role", "Role", 5, 5),
        ("class", "Class", 16, 16),
        ("claimed", "Claimed by", 12, 12),
        ("evidence", "Evidence", 20, 20),
        ("text", "Todo", 0, 0),
    )

    def show(self, todos: Sequence[Todo], variables: Mapping[str, str] | None = None) -> None:
        """Rows keyed by their place in the goal file (todo ids need not be unique)."""
        self.show_items(todos, lambda todo: _todo_cells(todo, variables))


def _todo_cells(todo: Todo, variables: Mapping[str, str] | None) -> tuple[Text, ...]:
    mark = Text(MARKS.get(todo.status, "[?]"))
    if todo.is_gate:
        mark.stylize(theme_style("$warning bold reverse", variables))
    texts = (todo.task_class, todo.claimed_by, todo.evidence, todo.text)
    return (mark, Text(todo.role), *map(safe, texts))


def todo_detail(goal: Goal, todo: Todo | None) -> Text:
    """The selected todo: its metadata as loopx wrote it, lease and events."""
    if todo is None:
        return Text("no todos", style="dim")
    head = Text(f"line {todo.line}  ", style="dim")
    head.append_text(safe(todo.todo_id))
    parts: list[Text | str] = [head]
    lease = goal.leases.get(todo.todo_id)
    if lease is not None:
        held = "released" if not lease.active else f"held by {lease.owner}"
        parts.append(field_line("lease", safe(f"{held} (version {lease.version})"), WIDTH))
    events = [e.event_kind for e in goal.events if e.todo_id == todo.todo_id]
    if events:
        parts.append(field_line("events", safe(", ".join(events)), WIDTH))
    meta = ", ".join(f"{k}={v}" for k, v in todo.meta.items() if k != "todo_id")
    parts.append(field_line("metadata", safe(meta), WIDTH))
    return join_lines(parts)
