"""Intent & constraints, rendered as a document (never raw TOML), problems inline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult

from store.format.problems import Problem
from store.format.records import Constraints, Intent
from store.format.text import duration
from widgets.hanging import Document
from widgets.keyed_table import WIDE
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import (
    DocumentScroll,
    FocusOnShow,
    ThemeAware,
    bullets,
    field_line,
    hanging,
    heading,
    join_lines,
    moment,
    problems_block,
)


def _by_at(who: str, when: datetime | None) -> str:
    parts = []
    if who:
        parts.append(f"by {who}")
    if when is not None:
        parts.append(f"at {moment(when)}")
    return " ".join(parts)


class _Shown(NamedTuple):
    intent: Intent | None
    constraints: Constraints | None
    intent_problems: tuple[Problem, ...]
    constraints_problems: tuple[Problem, ...]
    intent_path: str
    constraints_path: str
    policy: str


def intent_text(
    intent: Intent | None,
    problems: Sequence[Problem],
    path: str = "intent.toml",
    variables: Mapping[str, str] | None = None,
) -> Text:
    """The intent document: title, objective, non-goals, scope, evidence, decisions."""
    parts: list[Text] = []
    if problems:
        parts.append(problems_block(problems, variables))
        parts.append(Text())
    if intent is None:
        if not problems:
            parts.append(Text(f"No {path} yet: the mission has no stated intent.", style="dim"))
        else:
            parts.append(Text(f"{path} could not be loaded; see the problems above.", style="dim"))
        return join_lines(parts)
    title = safe(intent.title)
    title.stylize("bold")
    parts.append(title)
    meta = Text(f"revision {intent.revision}", style="dim")
    created = _by_at(intent.created_by, intent.created_at)
    if created:
        meta.append(" · created ")
        meta.append_text(safe(created))
    edited = _by_at(intent.edited_by, intent.edited_at)
    if edited:
        meta.append(" · edited ")
        meta.append_text(safe(edited))
    parts.append(meta)
    parts.append(Text())
    parts.append(heading("Objective"))
    objective = safe(intent.objective, multiline=True) if intent.objective else Text("—")
    parts.append(hanging("  ", objective))
    parts.append(heading("Non-goals"))
    parts.append(bullets(intent.non_goals))
    parts.append(heading("Scope"))
    for name, items, marker in (
        ("include", intent.scope.include, "+"),
        ("exclude", intent.scope.exclude, "-"),
    ):
        if items:
            parts.append(Text(f"  {name}", style="dim"))
            parts.append(bullets(items, marker=marker))
        else:
            parts.append(Text(f"  {name}: ", style="dim").append("not stated", style="dim italic"))
    parts.append(heading("Success evidence"))
    parts.append(bullets(intent.success_evidence))
    decisions = heading("Open decisions")
    if intent.open_decisions:
        decisions.append(" (need a human)", style=theme_style("$warning bold", variables))
    parts.append(decisions)
    parts.append(bullets(intent.open_decisions, marker="?"))
    return join_lines(parts)


def constraints_text(
    constraints: Constraints | None,
    problems: Sequence[Problem],
    path: str = "constraints.toml",
    variables: Mapping[str, str] | None = None,
    policy: str = "",
) -> Text:
    """Rules, budget limits, approval policy and tools; `policy` is the approval policy in
    force (the constraints within the workspace floor: `store.trust.policy`), one line."""
    parts: list[Text] = [heading("Constraints")]
    if problems:
        parts.append(problems_block(problems, variables))
    if policy:
        parts.append(Text("  ").append_text(field_line("in force", policy, 10)))
    if constraints is None:
        if not problems:
            parts.append(
                Text(f"  No {path}: no rules, no budget, no approval policy.", style="dim")
            )
        else:
            parts.append(Text(f"  {path} could not be loaded.", style="dim"))
        return join_lines(parts)
    meta = Text(f"  revision {constraints.revision}", style="dim")
    edited = _by_at(constraints.edited_by, constraints.edited_at)
    if edited:
        meta.append(" · edited ")
        meta.append_text(safe(edited))
    parts.append(meta)
    parts.append(heading("Rules"))
    if not constraints.rule:
        parts.append(Text("  none", style="dim"))
    for rule in constraints.rule:
        error = rule.severity == "error"
        line = Text("  ")
        line.append(
            "✗ error" if error else "⚠ warn ",
            style=theme_style("$error bold" if error else "$warning", variables),
        )
        line.append(" ")
        rule_id = safe(rule.id)
        rule_id.stylize("bold")
        line.append_text(rule_id)
        line.append("  ")
        parts.append(hanging(line, safe(rule.rule, multiline=True)))
    budget = constraints.budget
    parts.append(heading("Budget"))
    limits = [
        ("usd", f"${budget.usd:,.2f}" if budget.usd is not None else None),
        ("tokens", f"{budget.tokens:,}" if budget.tokens is not None else None),
        ("steps", f"{budget.steps:,}" if budget.steps is not None else None),
        (
            "time",
            duration(float(budget.wall_seconds)) if budget.wall_seconds is not None else None,
        ),
        ("deadline", moment(budget.deadline) if budget.deadline is not None else None),
    ]
    shown = [(name, value) for name, value in limits if value is not None]
    if not shown:
        parts.append(Text("  no limits", style="dim"))
    for name, value in shown:
        parts.append(Text("  ").append_text(field_line(name, value, 10)))
    parts.append(heading("Approval"))
    auto = Text("  ").append_text(field_line("auto", "", 10))
    if constraints.approval.auto:
        auto.append_text(
            Text(", ").join(status_text(risk, variables) for risk in constraints.approval.auto)
        )
    else:
        auto.append("nothing: every effect is asked", style="dim")
    parts.append(auto)
    valid = duration(float(constraints.approval.valid_for_seconds))
    parts.append(Text("  ").append_text(field_line("valid for", valid, 10)))
    parts.append(heading("Tools"))
    for name, items in (("allow", constraints.tools.allow), ("deny", constraints.tools.deny)):
        line = Text("  ").append_text(field_line(name, "", 10))
        if items:
            line.append_text(Text(", ").join(safe(item) for item in items))
        else:
            line.append("any" if name == "allow" else "none", style="dim")
        parts.append(line)
    return join_lines(parts)


class IntentView(ThemeAware, FocusOnShow, DocumentScroll):
    """The intent beside (wide) or above (narrow) the constraints."""

    DEFAULT_CSS = """
    IntentView { padding: 0 1; }
    IntentView.-wide { layout: horizontal; }
    IntentView > Static { width: 1fr; height: auto; }
    IntentView > #constraints-doc { margin-top: 1; }
    IntentView.-wide > #constraints-doc { margin-top: 0; margin-left: 2; }
    """

    def __init__(self, *, id: str | None = "intent-view") -> None:
        super().__init__(id=id)
        self._args: _Shown | None = None
        self._shown: tuple[Text, Text] | None = None
        self.intent_doc = Document(id="intent-doc")
        self.constraints_doc = Document(id="constraints-doc")

    def compose(self) -> ComposeResult:
        yield self.intent_doc
        yield self.constraints_doc

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width >= WIDE, "-wide")

    def show(
        self,
        intent: Intent | None,
        constraints: Constraints | None,
        *,
        intent_problems: Sequence[Problem] = (),
        constraints_problems: Sequence[Problem] = (),
        intent_path: str = "intent.toml",
        constraints_path: str = "constraints.toml",
        policy: str = "",
    ) -> None:
        """Render; nothing is redrawn when the text would not change."""
        self._args = _Shown(
            intent,
            constraints,
            tuple(intent_problems),
            tuple(constraints_problems),
            intent_path,
            constraints_path,
            policy,
        )
        self.rerender()

    def rerender(self) -> None:
        if self._args is None:
            return
        args = self._args
        variables = self.variables
        texts = (
            intent_text(args.intent, args.intent_problems, args.intent_path, variables),
            constraints_text(
                args.constraints,
                args.constraints_problems,
                args.constraints_path,
                variables,
                args.policy,
            ),
        )
        if texts == self._shown:
            return
        self._shown = texts
        self.intent_doc.update(texts[0])
        self.constraints_doc.update(texts[1])

    @property
    def shown_text(self) -> str:
        """What the tab shows, as plain text (for tests and the handoff export)."""
        return "\n".join(t.plain for t in self._shown) if self._shown else ""
