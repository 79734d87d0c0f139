"""A goal's ACTIVE_GOAL_STATE.md: YAML front matter, then Markdown with todo lines.

Each todo is a checkbox line (`- [ ]` open, `- [x]` done, `- [-]` superseded) under a
`## User Todo ...` or `## Agent Todo` heading, followed by its metadata comment
`<!-- loopx:todo todo_id=... status=... -->` whose values are URL-encoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from store.format.problems import Problem

_TODO = re.compile(r"^\s*- \[(?P<mark>[ xX-])\] (?P<text>.*)$")
_META = re.compile(r"^\s*<!-- loopx:todo (?P<pairs>.*?)\s*-->\s*$")
_HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*$")
_MARKS = {" ": "open", "x": "done", "X": "done", "-": "superseded"}


@dataclass(frozen=True, slots=True)
class Todo:
    """One todo line and its metadata."""

    todo_id: str
    text: str
    role: str
    """"user" (under User Todo) or "agent"."""
    line: int
    meta: dict[str, str]

    @property
    def status(self) -> str:
        return self.meta.get("status") or "open"

    @property
    def task_class(self) -> str:
        return self.meta.get("task_class", "")

    @property
    def claimed_by(self) -> str:
        return self.meta.get("claimed_by", "")

    @property
    def evidence(self) -> str:
        return self.meta.get("evidence", "")

    @property
    def blocks_agent(self) -> str:
        return self.meta.get("blocks_agent") or self.meta.get("bound_agent", "")

    @property
    def is_open(self) -> bool:
        return self.status in ("open", "blocked")

    @property
    def is_gate(self) -> bool:
        """An open user gate: the goal needs a human."""
        return self.is_open and self.role == "user" and self.task_class == "user_gate"


@dataclass(slots=True)
class GoalState:
    front: dict[str, Any] = field(default_factory=dict)
    todos: list[Todo] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def parse_state(path: str, data: bytes) -> GoalState:
    """Front matter and todos of a state file; bad parts are problems at their line."""
    state = GoalState()
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    body = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            state.problems.append(
                Problem(path, 1, "loopx-front-matter", "front matter has no closing ---", _HINT)
            )
        else:
            from store.sources.small.yaml import parse_yaml  # ruamel.yaml: when first read

            doc = parse_yaml(path, "\n".join(lines[1:end]).encode(), line_offset=1)
            state.problems += doc.problems
            state.front = doc.data if isinstance(doc.data, dict) else {}
            body = end + 1
    role = ""
    for index in range(body, len(lines)):
        heading = _HEADING.match(lines[index])
        if heading:
            title = heading["title"].lower()
            role = (
                "user"
                if title.startswith("user todo")
                else ("agent" if title.startswith("agent todo") else "")
            )
            continue
        todo = _TODO.match(lines[index])
        if not todo or not role:
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        meta = _META.match(following)
        if meta is None:
            state.problems.append(
                Problem(
                    path,
                    index + 1,
                    "loopx-todo-metadata",
                    "todo line has no loopx:todo metadata comment below it",
                    "loopx writes `<!-- loopx:todo todo_id=... -->` under each todo; "
                    "add todos with `loopx todo add`",
                    "warn",
                )
            )
            continue
        pairs = dict(
            (key, unquote(value))
            for key, _, value in (pair.partition("=") for pair in meta["pairs"].split())
        )
        pairs.setdefault("status", _MARKS[todo["mark"]])
        state.todos.append(
            Todo(pairs.get("todo_id", ""), todo["text"].strip(), role, index + 1, pairs)
        )
    return state


_HINT = "loopx writes the state file itself; let `loopx` rewrite it (`loopx todo ...`)"
