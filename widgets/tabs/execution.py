"""Execution: the events log as a timeline, like `tail -f`, filtered by step and type.

The view hands over log lines as they arrive (`show(lines, reset=...)`); this widget
keeps the last `WINDOW` of them and shows the last `SHOWN` that pass the filters,
adding rows at the bottom and dropping them at the top, never rebuilding the table
for an appended line. Problem lines (unparsable, off-schema) show inline.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from store.format.problems import Problem
from store.format.records import (
    AttemptEvent,
    ErrorEvent,
    HaltEvent,
    HeartbeatEvent,
    StepEvent,
    UsageEvent,
    WaiterEvent,
)
from store.format.text import duration
from widgets.filter import filter_bindings
from widgets.hanging import Document
from widgets.keyed_table import Column, KeyedTable
from widgets.keys import key_of
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import clock, compact, join_lines
from widgets.tabs.log_view import LogView
from widgets.words import plural

WINDOW = LogView.WINDOW
"""Log lines kept in memory (the last ones)."""
SHOWN = 500
"""Rows shown at most (the last lines that pass the filters)."""

COLUMNS: tuple[Column, ...] = (
    ("seq", "Seq", 5, 7),
    ("at", "Time", 8, 19),
    ("type", "Type", 9, 9),
    ("step", "Step", 12, 24),
    ("what", "What", 0, 0),
)

"""(line number, record or Problem) as `LogReader.read_window` returns them."""


def kind_of(record: Any) -> str:
    return "problem" if isinstance(record, Problem) else str(getattr(record, "type", "?"))


def step_of(record: Any) -> str | None:
    step = getattr(record, "step", None)
    return step if isinstance(step, str) else None


def needs_human() -> Text:
    return Text(" needs a human", style="bold")


def outcome_text(outcome: str | None, variables: Mapping[str, str] | None) -> Text:
    if outcome == "ok":
        return Text("✓ ok", style=theme_style("$success", variables))
    if outcome == "error":
        return Text("✗ error", style=theme_style("$error bold", variables))
    if outcome == "unknown":
        text = status_text("unknown", variables, like="outcome_unknown")
        return text.append_text(needs_human())
    return Text("—", style="dim")


def what_text(
    record: Any, started: datetime | None = None, variables: Mapping[str, str] | None = None
) -> Text:
    """The `What` cell: one line saying what the event says."""
    text = Text()
    if isinstance(record, Problem):
        text.append("✗ ", style=theme_style("$error bold", variables))
        text.append_text(safe(record.message))
        if record.hint:
            text.append(" · fix: ", style="dim")
            text.append_text(safe(record.hint))
    elif isinstance(record, StepEvent):
        text.append_text(status_text(record.state, variables))
        if record.state == "outcome_unknown":
            text.append_text(needs_human())
        text.append(f" v{record.plan_version}", style="dim")
        if record.reason:
            text.append(" ")
            text.append_text(safe(record.reason))
    elif isinstance(record, AttemptEvent):
        if record.phase == "started":
            text.append(f"▷ #{record.attempt} started ")
            text.append_text(safe(record.tool))
            if record.effect_possible:
                text.append(" ⚠ effect", style=theme_style("$warning bold", variables))
            if record.approval:
                text.append(" approval ", style="dim")
                text.append_text(safe(record.approval))
            if record.args:
                text.append(" ")
                args = safe(compact(record.args))
                args.stylize("dim")
                text.append_text(args)
        else:
            text.append(f"■ #{record.attempt} finished ")
            text.append_text(safe(record.tool))
            text.append(" → ")
            text.append_text(outcome_text(record.outcome, variables))
            if started is not None:
                text.append(f" after {duration((record.at - started).total_seconds())}", "dim")
    elif isinstance(record, UsageEvent):
        text.append(f"${float(record.usd):,.2f} · {record.tokens:,} tokens · {record.steps} steps")
    elif isinstance(record, HeartbeatEvent):
        text.append("♥ alive", style="dim")
    elif isinstance(record, ErrorEvent):
        text.append("✗ ", style=theme_style("$error bold", variables))
        text.append_text(safe(record.message))
    elif isinstance(record, HaltEvent):
        text.append("■ halted: ", style="bold")
        text.append_text(safe(record.reason))
    elif isinstance(record, WaiterEvent):
        text.append(f"⌛ request {record.state} ", style="dim")
        text.append_text(safe(record.request))
        if record.reason:
            text.append(" ")
            text.append_text(safe(record.reason))
    else:
        text.append_text(safe(compact(record)))
    return text


def detail_text(
    line: int, record: Any, started: datetime | None, variables: Mapping[str, str] | None
) -> Text:
    """Everything about one line, for the pane under the table."""
    parts = []
    head = Text(f"line {line}", style="bold")
    if isinstance(record, Problem):
        head.append("  ")
        head.append_text(safe(f"{record.where} [{record.code}]"))
        parts.append(head)
        parts.append(what_text(record, None, variables))
        return join_lines(parts)
    head.append(f"  seq {record.seq}  {record.at.isoformat()}  ", style="bold")
    head.append_text(safe(f"{record.type} by {record.actor}"))
    parts.append(head)
    what = what_text(record, started, variables)
    parts.append(what)
    if isinstance(record, AttemptEvent):
        fields = (
            ("args", compact(record.args)),
            ("idempotency key", record.idempotency_key),
            ("external ref", record.external_ref or ""),
            ("output ref", record.output_ref or ""),
        )
        for name, value in fields:
            if value:
                parts.append(Text(f"{name}: ", style="dim").append_text(safe(value)))
    return join_lines(parts)


class TimelineTable(KeyedTable):
    """The timeline's table: moving up or to the top leaves follow mode."""

    def __init__(self, owner: ExecutionView) -> None:
        super().__init__(COLUMNS, id="execution-table", on_relayout=owner.relayout, ids=("step",))
        self.owner = owner

    def action_cursor_up(self) -> None:
        self.owner.following = False
        super().action_cursor_up()

    def action_page_up(self) -> None:
        self.owner.following = False
        super().action_page_up()

    def action_scroll_top(self) -> None:
        self.owner.following = False
        super().action_scroll_top()

    def action_scroll_bottom(self) -> None:
        self.owner.following = True
        super().action_scroll_bottom()
        self.owner.update_status()


class ExecutionView(LogView):
    """Status line, timeline table and the highlighted line's details."""

    DEFAULT_CSS = """
    ExecutionView { height: 1fr; }
    ExecutionView > #execution-status { height: auto; padding: 0 1; background: $panel; }
    ExecutionView > TimelineTable { height: 1fr; }
    ExecutionView > #execution-detail { height: auto; max-height: 5; padding: 0 1;
        border-top: solid $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *filter_bindings("execution"),
        Binding("f", "follow", "Follow", id="execution.follow"),
        Binding("s", "next_step", "Step filter", id="execution.step"),
        Binding("t", "next_type", "Type filter", id="execution.type"),
        Binding("c", "clear_filters", "Clear filters", id="execution.clear"),
    ]

    def __init__(self, *, id: str | None = "execution-view") -> None:
        super().__init__(id=id)
        self.following = True
        self.step_filter: str | None = None
        self.type_filter: str | None = None
        self._started: dict[tuple[str, int], datetime] = {}
        self._cells: dict[int, tuple[Text, ...]] = {}
        self.table = TimelineTable(self)
        self.status = Static(id="execution-status")
        self.detail = Document(id="execution-detail")

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.compose_filter()
        yield self.table
        yield self.detail

    # ---- data ---------------------------------------------------------------------------

    def kept(self, line: int, record: Any) -> None:
        if isinstance(record, AttemptEvent) and record.phase == "started":
            self._started[(record.step, record.attempt)] = record.at

    def forget(self) -> None:
        self._started.clear()

    def _row(self, line: int, record: Any) -> tuple[Text, ...]:
        cells = self._cells.get(line)
        if cells is not None:
            return cells
        variables = self.variables
        wide = self.table.wide
        started = None
        if isinstance(record, AttemptEvent) and record.phase == "finished":
            started = self._started.get((record.step, record.attempt))
        if isinstance(record, Problem):
            seq = Text(f"L{line}", style="dim")
            at = Text("")
            kind = Text("✗ problem", style=theme_style("$error bold", variables))
        else:
            seq = Text(str(record.seq))
            if self._unverified_from is not None and line >= self._unverified_from:
                seq = Text(f"✗{record.seq}", style=theme_style("$error bold", variables))
            at = Text(clock(record.at, wide=wide))
            kind = Text(record.type, style="dim" if record.type == "heartbeat" else "")
        step = step_of(record)
        cells = (
            seq,
            at,
            kind,
            safe(step) if step else Text(""),
            what_text(record, started, variables),
        )
        self._cells[line] = cells
        return cells

    def _visible(self) -> list[tuple[str, tuple[Text, ...]]]:
        rows = [
            (str(line), self._row(line, record))
            for line, record in self._buffer
            if (self.step_filter is None or step_of(record) == self.step_filter)
            and (self.type_filter is None or kind_of(record) == self.type_filter)
        ]
        return self.filtered(rows)[-SHOWN:]

    def refresh_rows(self) -> None:
        rows = self._visible()
        changed = self.table.set_rows(rows)
        if changed and self.following and self.table.row_count:
            self.table.move_cursor(row=self.table.row_count - 1, animate=False)
        self.update_status()
        self.update_detail()

    # ---- status and detail -------------------------------------------------------------

    def status_text(self) -> Text:
        variables = self.variables
        text = Text()
        if self.following:
            text.append("▼ following", style="bold")
        else:
            text.append("‖ paused", style="bold")
            follow = key_of(self, "execution.follow")
            if follow:
                text.append(f" ({follow} follows)", style="dim")
        for name, value in (("step", self.step_filter), ("type", self.type_filter)):
            text.append(f" · {name} ", style="dim")
            if value is None:
                text.append("all")
            else:
                chosen = safe(value)
                chosen.stylize("bold reverse")
                text.append_text(chosen)
        if self.needle:
            text.append(" · words ", style="dim")
            words = safe(self.needle)
            words.stylize("bold reverse")
            text.append_text(words)
        shown = self.table.row_count
        text.append(f" · {plural(self._total, 'line')}", style="dim")
        if shown < self._total:
            text.append(f", {shown:,} shown", style="dim")
        if self._chain_broken_at is not None:
            text.append(" · ")
            unverified = self._unverified_from
            text.append(
                f"✗ chain broken at seq {self._chain_broken_at}"
                + (f": lines {unverified} on unverified" if unverified is not None else ""),
                style=theme_style("$error bold", variables),
            )
        if self._seq_broken_at is not None:
            text.append(" · ")
            text.append(
                f"✗ seq gap at {self._seq_broken_at}",
                style=theme_style("$error bold", variables),
            )
        return text

    def detail_for(self, line: int, record: Any) -> Text:
        started = None
        if isinstance(record, AttemptEvent):
            started = self._started.get((record.step, record.attempt))
        return detail_text(line, record, started, self.variables)

    # ---- actions ---------------------------------------------------------------------

    def _values(self, pick: Any) -> list[str | None]:
        seen: dict[str, None] = {}
        for _, record in self._buffer:
            value = pick(record)
            if value is not None:
                seen.setdefault(value, None)
        return [None, *seen]

    @staticmethod
    def _next(values: list[str | None], current: str | None) -> str | None:
        index = values.index(current) if current in values else 0
        return values[(index + 1) % len(values)]

    def action_follow(self) -> None:
        self.following = not self.following
        if self.following and self.table.row_count:
            self.table.move_cursor(row=self.table.row_count - 1, animate=False)
        self.update_status()

    def action_next_step(self) -> None:
        self.step_filter = self._next(self._values(step_of), self.step_filter)
        self.refresh_rows()

    def action_next_type(self) -> None:
        self.type_filter = self._next(self._values(kind_of), self.type_filter)
        self.refresh_rows()

    def action_clear_filters(self) -> None:
        self.step_filter = None
        self.type_filter = None
        self.refresh_rows()
