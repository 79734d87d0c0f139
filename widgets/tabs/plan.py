"""Plan: the versions, one version as a step table with each step's latest state, and
a field-by-field diff of any two versions.

Keys: `v`/`V` pick an older/newer version, `d` toggles the diff, `b` picks the
version to diff against (by default the one before). Enter on the versions table
selects the version under the cursor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import DataTable, Static

from store.derivation.plan_diff import STEP_ORDER, PlanDiff, diff_plans, list_delta
from store.derivation.view import StepLatest
from store.format.problems import Problem
from store.format.records import Plan, PlanStep
from widgets.hanging import Document
from widgets.keyed_table import Column, KeyedTable
from widgets.keys import KeyHints, hint, key_of
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import (
    DocumentScroll,
    FocusOnShow,
    ThemeAware,
    bullets,
    compact,
    hanging,
    heading,
    join_lines,
    moment,
    problem_text,
)


class PlanVersion(NamedTuple):
    """One plan file: its version number, the plan (None when invalid), its problems."""

    version: int
    plan: Plan | None
    problems: tuple[Problem, ...] = ()


VERSION_COLUMNS: tuple[Column, ...] = (
    ("version", "Ver", 6, 6),
    ("created", "Created", 17, 20),
    ("author", "Author", 9, 18),
    ("steps", "Steps", 5, 5),
    ("reason", "Reason", 0, 0),
)
STEP_COLUMNS: tuple[Column, ...] = (
    ("id", "Step", 12, 24),
    ("title", "Title", 0, 0),
    ("risk", "Risk", 4, 18),
    ("depends", "Depends on", 8, 18),
    ("approval", "Appr", 4, 8),
    ("state", "State", 14, 28),
)


def value_text(name: str, value: Any, variables: Mapping[str, str] | None) -> Text:
    """A field's value in a diff: risks as status, lists joined, everything made safe."""
    if name == "risk" and isinstance(value, str):
        return status_text(value, variables)
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, list | tuple):
        return safe(", ".join(compact(v) for v in value)) if value else Text("(none)", "dim")
    if value == "":
        return Text("(empty)", style="dim")
    return safe(compact(value))


def step_summary(step: PlanStep, variables: Mapping[str, str] | None) -> Text:
    text = safe(step.id)
    text.stylize("bold")
    text.append("  ")
    text.append_text(safe(step.title))
    text.append("  ")
    text.append_text(status_text(step.risk, variables))
    if step.needs_approval:
        text.append("  needs approval", style="bold")
    return text


def reason_text(version: int, reason: str) -> Text:
    """`why v2: <the reason, whole>`, wrapped lines hanging under its start."""
    return hanging(Text(f"why v{version}: ", style="dim"), safe(reason, multiline=True))


def diff_text(
    diff: PlanDiff,
    variables: Mapping[str, str] | None = None,
    reasons: Sequence[tuple[int, str]] = (),
) -> Text:
    """The reasons of the versions compared, steps added, removed and changed (field by
    field), then plan-level fields."""
    added = theme_style("$success bold", variables)
    removed = theme_style("$error bold", variables)
    changed = theme_style("$warning bold", variables)
    parts = [
        Text(f"Diff v{diff.old_version} → v{diff.new_version}", style="bold"),
        *(reason_text(version, reason) for version, reason in reasons),
    ]
    if diff.empty:
        parts.append(Text("  no differences in steps, assumptions or expected evidence", "dim"))
        return join_lines(parts)
    summary = Text("  ")
    summary.append(f"+{len(diff.added)} added", style=added)
    summary.append("  ")
    summary.append(f"-{len(diff.removed)} removed", style=removed)
    summary.append("  ")
    summary.append(f"~{len(diff.changed)} changed", style=changed)
    parts.append(summary)
    for step in diff.added:
        parts.append(Text("+ ", style=added).append_text(step_summary(step, variables)))
    for step in diff.removed:
        parts.append(Text("- ", style=removed).append_text(step_summary(step, variables)))
    for change in diff.changed:
        head = Text("~ ", style=changed)
        name = safe(change.id)
        name.stylize("bold")
        head.append_text(name)
        if change.title:
            head.append("  ")
            head.append_text(safe(change.title))
        parts.append(head)
        for field, old, new in change.changes:
            line = Text(f"    {field}: ", style="dim")
            if isinstance(old, str) and isinstance(new, str) and (len(old) + len(new) > 50):
                parts.append(line)
                parts.append(hanging(Text("      - ", style=removed), safe(old, multiline=True)))
                parts.append(hanging(Text("      + ", style=added), safe(new, multiline=True)))
                continue
            line.append_text(value_text(field, old, variables))
            line.append(" → ")
            line.append_text(value_text(field, new, variables))
            parts.append(line)
    for field, old, new in diff.fields:
        parts.append(Text(f"{field}:", style="bold"))
        if field == STEP_ORDER:
            parts.append(Text("  - ", style=removed).append_text(value_text(field, old, variables)))
            parts.append(Text("  + ", style=added).append_text(value_text(field, new, variables)))
            continue
        gone, came = list_delta(old, new)
        for item in gone:
            parts.append(Text("  - ", style=removed).append_text(safe(compact(item))))
        for item in came:
            parts.append(Text("  + ", style=added).append_text(safe(compact(item))))
    return join_lines(parts)


class _Shown(NamedTuple):
    versions: tuple[PlanVersion, ...]
    states: tuple[tuple[str, StepLatest], ...]


class PlanView(KeyHints, ThemeAware, FocusOnShow, Vertical):
    """Versions table, the selected version's steps (or a diff), the step's details."""

    DEFAULT_CSS = """
    PlanView { height: 1fr; }
    PlanView > #plan-versions { height: 3; }
    PlanView > #plan-title { height: auto; padding: 0 1; background: $panel; }
    PlanView > #plan-steps { height: 1fr; }
    PlanView > #plan-diff { height: 1fr; padding: 0 1; }
    PlanView > #plan-detail { height: 1fr; min-height: 4; padding: 0 1;
        border-top: solid $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "older", "Older version", id="plan.version"),
        Binding("V", "newer", "Newer version", id="plan.version_newer"),
        Binding("d", "toggle_diff", "Diff", id="plan.diff"),
        Binding("b", "next_base", "Diff base", id="plan.base"),
    ]

    def __init__(self, *, id: str | None = "plan-view") -> None:
        super().__init__(id=id)
        self.selected: int | None = None
        """The version shown; None follows the latest."""
        self.base: int | None = None
        """The version diffed against; None is the one before the selected version."""
        self.diffing = False
        self._versions: dict[int, PlanVersion] = {}
        self._states: dict[str, StepLatest] = {}
        self._args: _Shown | None = None
        self._title_shown: Text | None = None
        self._diff_shown: Text | None = None
        self._detail_shown: Text | None = Text("")  # a Static starts empty (see LogView)
        self.versions_table = KeyedTable(
            VERSION_COLUMNS, id="plan-versions", on_relayout=self._fill_versions, selectable=True
        )
        self.steps_table = KeyedTable(
            STEP_COLUMNS, id="plan-steps", on_relayout=self._fill_steps, ids=("id", "depends")
        )
        self.title_bar = Static(id="plan-title")
        self.diff_scroll = DocumentScroll(id="plan-diff")
        self.diff_doc = Document(id="plan-diff-text")
        self.detail_scroll = DocumentScroll(id="plan-detail")
        self.detail_doc = Document(id="plan-detail-text")
        self.diff_scroll.display = False

    def compose(self) -> ComposeResult:
        yield self.versions_table
        yield self.title_bar
        yield self.steps_table
        with self.diff_scroll:
            yield self.diff_doc
        with self.detail_scroll:
            yield self.detail_doc

    def on_resize(self) -> None:
        tall = self.size.height >= 36
        if tall != self.has_class("-tall"):
            self.set_class(tall, "-tall")
            self._fill_versions()

    def focus_target(self) -> Widget:
        return self.diff_scroll if self.diffing else self.steps_table

    # ---- data ---------------------------------------------------------------------------

    def show(self, versions: Sequence[PlanVersion], states: Mapping[str, StepLatest]) -> None:
        """All plan versions (any order) and the latest `step` event of each step."""
        args = _Shown(
            tuple(sorted(versions, key=lambda v: v.version)), tuple(sorted(states.items()))
        )
        if args == self._args:
            return
        self._args = args
        self._versions = {v.version: v for v in args.versions}
        self._states = dict(args.states)
        if self.selected is not None and self.selected not in self._versions:
            self.selected = None
        if self.base is not None and self.base not in self._versions:
            self.base = None
        self._render_all()

    @property
    def current(self) -> int | None:
        """The version shown."""
        if self.selected is not None:
            return self.selected
        return max(self._versions, default=None)

    @property
    def base_version(self) -> int | None:
        """The version the diff compares against."""
        current = self.current
        if current is None:
            return None
        if self.base is not None and self.base != current:
            return self.base
        older = [v for v in self._versions if v < current and self._versions[v].plan]
        return max(older, default=None)

    def keys_changed(self) -> None:
        self._title_shown = None
        self._diff_shown = None
        if self._versions:
            self._fill_title()
            if self.diffing:
                self._fill_diff()

    def rerender(self) -> None:
        self._title_shown = None
        self._diff_shown = None
        self._detail_shown = None
        self._render_all()

    def _render_all(self) -> None:
        self._fill_versions()
        self._fill_title()
        diff = self.diff_scroll
        if diff.display != self.diffing:
            had_focus = (
                self.screen.focused in (diff, self.steps_table) if self.is_mounted else False
            )
            diff.display = self.diffing
            self.steps_table.display = not self.diffing
            self.detail_scroll.display = not self.diffing
            if had_focus:
                self.focus_target().focus()
        if self.diffing:
            self._fill_diff()
        else:
            self._fill_steps()
            self._fill_detail()

    def _fill_versions(self) -> None:
        variables = self.variables
        current = self.current
        base = self.base_version if self.diffing else None
        rows = []
        for version in sorted(self._versions, reverse=True):
            entry = self._versions[version]
            mark = "▶ " if version == current else ("◆ " if version == base else "  ")
            ver = Text(f"{mark}v{version}", style="bold" if version == current else "")
            plan = entry.plan
            if plan is None:
                bad = theme_style("$error bold", variables)
                reason = safe(entry.problems[0].message) if entry.problems else Text("unreadable")
                cells = (ver, Text("✗ invalid", style=bad), Text(""), Text(""), reason)
            else:
                cells = (
                    ver,
                    Text(moment(plan.created_at, seconds=False)),
                    safe(plan.author),
                    Text(str(len(plan.steps))),
                    safe(plan.reason) if plan.reason else Text("(first version)", style="dim"),
                )
            rows.append((str(version), cells))
        self.versions_table.set_rows(rows)
        limit = 9 if self.has_class("-tall") else 4
        self.versions_table.styles.height = min(len(rows), limit) + 1
        if current is not None and self.versions_table.selected_key != str(current):
            self.versions_table.move_cursor(
                row=self.versions_table.get_row_index(str(current)), animate=False
            )

    def _fill_title(self) -> None:
        variables = self.variables
        current = self.current
        text = Text()
        if current is None:
            text.append("No plan yet: the agent writes plan/v1.json first.", style="dim")
        else:
            entry = self._versions[current]
            latest = current == max(self._versions)
            text.append(f"v{current}", style="bold")
            text.append(" (latest)" if latest else " (older version)", style="dim")
            if entry.plan is not None:
                text.append(f" · {len(entry.plan.steps)} steps")
            if self.diffing:
                base = self.base_version
                text.append(" · diff against ")
                text.append(f"v{base}" if base is not None else "nothing older", style="bold")
            keys = hint(
                self,
                ("plan.version", "older"),
                ("plan.version_newer", "newer"),
                ("plan.diff", "diff"),
                ("plan.base", "diff base"),
            )
            if keys:
                text.append("   ").append_text(keys)
            for problem in entry.problems:
                text.append("\n")
                text.append_text(problem_text(problem, variables))
        if text != self._title_shown:
            self._title_shown = text
            self.title_bar.update(text)

    def _state_cell(self, step: str, version: int) -> Text:
        event = self._states.get(step)
        if event is None:
            return Text("—", style="dim")
        text = status_text(event.state, self.variables)
        if event.state == "outcome_unknown":
            text.stylize("bold")
        if event.plan_version != version:
            text.append(f" (v{event.plan_version})", style="dim")
        return text

    def _fill_steps(self) -> None:
        current = self.current
        entry = self._versions.get(current) if current is not None else None
        plan = entry.plan if entry is not None else None
        rows = []
        variables = self.variables
        wide = self.steps_table.wide
        if plan is not None:
            for step in plan.steps:
                deps = safe(", ".join(step.depends_on)) if step.depends_on else Text("")
                cells = (
                    safe(step.id),
                    safe(step.title),
                    status_text(step.risk, variables, word=wide),
                    deps,
                    Text("yes", style="bold") if step.needs_approval else Text(""),
                    self._state_cell(step.id, plan.version),
                )
                rows.append((step.id, cells))
        self.steps_table.set_rows(rows)
        self.steps_table.styles.max_height = len(rows) + 1

    def _fill_detail(self) -> None:
        current = self.current
        entry = self._versions.get(current) if current is not None else None
        plan = entry.plan if entry is not None else None
        text = Text("")
        if plan is not None:
            parts: list[Text] = []
            key = self.steps_table.selected_key
            step = next((s for s in plan.steps if s.id == key), None)
            if step is not None:
                parts.append(step_summary(step, self.variables))
                for name in ("effect", "verification", "recovery"):
                    value = getattr(step, name)
                    body = safe(value, multiline=True) if value else Text("—")
                    parts.append(hanging(Text(f"{name}: ", style="dim"), body))
            if plan.reason:
                parts.append(reason_text(plan.version, plan.reason))
            parts.append(heading("Assumptions"))
            parts.append(bullets(plan.assumptions))
            parts.append(heading("Expected evidence"))
            parts.append(bullets(plan.expected_evidence))
            text = join_lines(parts)
        if text != self._detail_shown:
            self._detail_shown = text
            self.detail_doc.update(text)

    def _fill_diff(self) -> None:
        current = self.current
        base = self.base_version
        new = self._versions[current].plan if current is not None else None
        old = self._versions[base].plan if base is not None else None
        if new is None or old is None:
            pick = key_of(self, "plan.base")
            how = f" ({pick} picks the base)" if pick else ""
            text = Text(f"Nothing to diff: pick two valid versions{how}.", style="dim")
        else:
            low, high = sorted((old.version, new.version))
            reasons = [
                (version, plan.reason)
                for version, entry in sorted(self._versions.items())
                if low < version <= high and (plan := entry.plan) is not None and plan.reason
            ]
            text = diff_text(diff_plans(old, new), self.variables, reasons)
        if text != self._diff_shown:
            self._diff_shown = text
            self.diff_doc.update(text)

    # ---- events and actions --------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self.steps_table:
            event.stop()
            self._fill_detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table is self.versions_table:
            event.stop()
            self._select(int(str(event.row_key.value)))

    def _select(self, version: int | None) -> None:
        latest = max(self._versions, default=None)
        self.selected = None if version == latest else version
        self._render_all()

    def _step_version(self, step: int) -> None:
        versions = sorted(self._versions)
        current = self.current
        if not versions or current is None:
            return
        index = versions.index(current)
        self._select(versions[(index + step) % len(versions)])

    def action_older(self) -> None:
        self._step_version(-1)

    def action_newer(self) -> None:
        self._step_version(1)

    def action_toggle_diff(self) -> None:
        self.diffing = not self.diffing
        self._render_all()

    def action_next_base(self) -> None:
        current = self.current
        choices = sorted((v for v in self._versions if v != current), reverse=True)
        if not choices:
            return
        base = self.base_version
        index = choices.index(base) if base in choices else -1
        self.base = choices[(index + 1) % len(choices)]
        self.diffing = True
        self._render_all()

    @property
    def shown_text(self) -> str:
        """Title, and the diff or the step table, as plain text (for tests)."""
        parts = [self._title_shown.plain if self._title_shown else ""]
        if self.diffing:
            parts.append(self._diff_shown.plain if self._diff_shown else "")
        else:
            parts.extend(self.steps_table.plain_rows())
        return "\n".join(parts)
