"""Widgets of a loopexec run: its summary (state, heartbeat, escalation) and receipt timeline.

They render what the loopexec screen hands them; nothing here reads files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from rich.text import Text

from store.format.text import duration
from store.sources.loopexec.runs import (
    EXIT_CLASSES,
    HEARTBEAT_STALE_SECONDS,
    Heartbeat,
    ReceiptEvent,
    RunState,
    exit_class,
    exit_code,
)
from widgets.keyed_table import Column, PlacedTable
from widgets.safe_text import safe
from widgets.status import theme_style
from widgets.tabs.common import clock, compact, field_line, join_lines

WIDTH = 16


def _time(when: datetime | None) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ") if when else "—"


def halt_text(reason: str, variables: Mapping[str, str] | None = None) -> Text:
    """`halt_reason (17 no-convergence)`, coloured by how the run ended."""
    code = exit_code(reason)
    style = (
        "$success"
        if code in (0, 10)
        else "$warning bold reverse"
        if code in (11, 16)
        else "$warning bold"
        if code in (12, 17, 18, 19)
        else "$error bold"
    )
    text = safe(reason)
    text.stylize(theme_style(style, variables))
    text.append(f"  (exit {exit_class(reason)})", style="dim")
    return text


def summary_text(
    run_id: str,
    *,
    state: RunState | None,
    halt_reason: str,
    events: Sequence[ReceiptEvent],
    heartbeat: Heartbeat | None,
    escalation: Mapping[str, Any] | None,
    escalation_open: bool,
    attested: bool,
    now: datetime,
    variables: Mapping[str, str] | None = None,
) -> Text:
    parts: list[Text | str] = []
    head = Text("loopexec run ", style="bold")
    head.append_text(safe(run_id))
    phase = state.phase if state else ""
    if phase:
        head.append(f"  phase {phase}", style="dim")
    parts.append(head)
    if halt_reason:
        parts.append(field_line("halt", halt_text(halt_reason, variables), WIDTH))
    else:
        parts.append(field_line("halt", Text("not halted (running)", style="dim"), WIDTH))
    iterations = state.iteration if state and state.iteration is not None else None
    if iterations is None and events:
        iterations = max((e.iteration or 0) for e in events)
    best = state.best_fail_count if state else None
    initial = state.initial_fail_count if state else None
    fails = (
        "—"
        if best is None
        else f"best {best}" + (f" (from {initial})" if initial is not None else "")
    )
    limit = state.get("max_iterations") if state else None
    line = Text(f"{iterations if iterations is not None else '—'}")
    if isinstance(limit, int):
        line.append(f" of {limit}")
    line.append("   fail count: ", style="dim")
    line.append(fails)
    parts.append(field_line("iterations", line, WIDTH))
    cost = state.cost_usd if state else None
    cost_line = Text("—" if cost is None else f"${cost:,.2f}")
    model = state.model if state else ""
    cost_line.append("   model: ", style="dim")
    cost_line.append_text(safe(model or "—"))
    parts.append(field_line("cost", cost_line, WIDTH))
    check = state.get("check") if state else None
    if isinstance(check, str) and check:
        parts.append(field_line("check", safe(check), WIDTH))
    if heartbeat is not None:
        age = heartbeat.age(now)
        beat = Text(duration(age) + " ago" if age is not None else "no time")
        if heartbeat.stale(now):
            beat.append(
                f"  STALE (> {duration(HEARTBEAT_STALE_SECONDS)})",
                style=theme_style("$warning bold reverse", variables),
            )
        beat.append(
            f"   pid {heartbeat.pid}  iter {heartbeat.iteration}  {heartbeat.phase}", style="dim"
        )
        parts.append(field_line("heartbeat", beat, WIDTH))
    else:
        parts.append(field_line("heartbeat", Text("none", style="dim"), WIDTH))
    recorded = state.escalation if state else {}
    if escalation is not None or recorded:
        esc = Text()
        word = (
            "OPEN: a human is asked" if escalation_open else str(recorded.get("state", "written"))
        )
        style = theme_style("$warning bold reverse", variables) if escalation_open else ""
        esc.append(word, style=style)
        if recorded.get("acked_by"):
            esc.append(" by ")
            esc.append_text(safe(str(recorded["acked_by"])))
        if escalation is not None:
            esc.append(f"  packet escalation-{run_id}.json", style="dim")
        parts.append(field_line("escalation", esc, WIDTH))
        if escalation:
            keys = (
                "halt_reason",
                "iteration",
                "best_fail_count",
                "cost_usd",
                "diffs_merged_unread",
            )
            shown = {k: escalation[k] for k in keys if k in escalation} or dict(escalation)
            packet = safe(", ".join(f"{k} {compact(v)}" for k, v in shown.items()))
            packet.truncate(200)
            parts.append(field_line("packet", packet, WIDTH))
    parts.append(
        field_line("attestation", Text("signed (attest-*.sig)" if attested else "none"), WIDTH)
    )
    return join_lines(parts)


class ReceiptTable(PlacedTable[ReceiptEvent]):
    """The receipt as a timeline: time, iteration, event, exit code, detail."""

    COLUMNS: ClassVar[tuple[Column, ...]] = (
        ("time", "Time", 9, 9),
        ("iter", "It", 3, 3),
        ("event", "Event", 19, 19),
        ("exit", "Exit", 4, 4),
        ("detail", "Detail", 0, 0),
    )

    def show(
        self, events: Sequence[ReceiptEvent], variables: Mapping[str, str] | None = None
    ) -> None:
        """Rows keyed by their place in the receipt; follows the end while the cursor is
        on the last row."""
        self.show_items(events, lambda event: _receipt_cells(event, variables), follow=True)


def _receipt_cells(event: ReceiptEvent, variables: Mapping[str, str] | None) -> tuple[Text, ...]:
    name = safe(event.event)
    if event.event == "halt":
        name.stylize("bold")
    code = event.exit_code
    exit_text = Text("" if code is None else str(code))
    if code not in (None, 0):
        exit_text.stylize(theme_style("$error bold", variables))
    detail = (
        halt_text(event.detail, variables)
        if event.event == "halt" and event.detail
        else safe(event.detail)
    )
    return (
        Text(clock(event.at) if event.at else "—"),
        Text("" if event.iteration is None else str(event.iteration)),
        name,
        exit_text,
        detail,
    )


def event_detail(event: ReceiptEvent | None, variables: Mapping[str, str] | None = None) -> Text:
    if event is None:
        return Text("no receipt events", style="dim")
    head = Text(f"line {event.line}  ", style="dim")
    head.append(_time(event.at))
    head.append(f"  iteration {event.iteration}  ")
    head.append_text(safe(event.event))
    parts: list[Text | str] = [head]
    if event.exit_code is not None:
        parts.append(field_line("exit_code", str(event.exit_code), 10))
    if event.event == "halt" and event.detail:
        parts.append(field_line("halt", halt_text(event.detail, variables), 10))
    elif event.detail:
        parts.append(field_line("detail", safe(event.detail, multiline=True), 10))
    return join_lines(parts)


EXIT_LEGEND = ", ".join(f"{code} {name}" for code, name in EXIT_CLASSES.items())
