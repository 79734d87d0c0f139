"""A Problem: one thing wrong with the state directory, with where and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warn"]


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in a file: shown in the HUD and by `hud check`, never raised.

    `path` is relative to the state directory (POSIX separators); `line` is 1-based,
    or None when the problem is about the whole file.
    """

    path: str
    line: int | None
    code: str
    message: str
    hint: str
    severity: Severity = "error"

    @property
    def where(self) -> str:
        """`path:line`, or just the path."""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_json(self) -> dict[str, object]:
        """A plain dict for `hud check --json`."""
        return {
            "path": self.path,
            "line": self.line,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "severity": self.severity,
        }


WORKSPACE_ROW = ""
"""Where problems of no row go: settings, files of no mission. Empty, so that no row
id (a mission may be called `workspace`) can share it."""


def row_heading(row_id: str) -> str:
    """How a row's problems are headed for people: its id; "workspace" for WORKSPACE_ROW."""
    return row_id or "workspace"
