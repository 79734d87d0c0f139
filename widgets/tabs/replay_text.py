"""The text of a replay frame: the mission as of one event, what changed marked.

Pure: renders a `store.analysis.replay.Frame` (plain data); agent-written text goes through `safe`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.text import Text

from store.analysis.landmarks import Bearings
from store.analysis.replay import Change, Frame, Moment
from store.format.text import amount
from widgets.hanging import hang_after
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import heading, join_lines, moment, problem_text

CHANGED = "◆ "
"""The mark of a line that changed since the event before."""
UNCHANGED = "  "
Marker = Callable[[tuple[str, str], Text], Text]
"""Marks a line whose (what, key) changed."""


TICK_BEFORE, TICK_AFTER = "┿", "┼"
"""A landmark on the bar, before and after the event shown."""


def timeline_text(
    seq: int,
    last: int,
    *,
    live: bool,
    playing: bool,
    width: int,
    variables: Mapping[str, str],
    ticks: Sequence[int] = (),
) -> Text:
    """`seq 12 of 40  ━━┿━●──┼──  ● LIVE` (or `▶ playing`, `⏸ paused`), fitted to
    `width`: where the event sits in the log, and a tick for each landmark in `ticks`."""
    text = Text(f"seq {seq} of {last}  ", style="bold")
    if live:
        state = Text("● LIVE", style=theme_style("$success bold", variables))
    elif playing:
        state = Text("▶ playing", style=theme_style("$accent bold", variables))
    else:
        state = Text("⏸ paused", style="dim")
    cells = max(0, width - text.cell_len - state.cell_len - 2)
    if cells >= 5 and last > 0:

        def cell(event: int) -> int:
            return min(cells - 1, round((event - 1) / max(1, last - 1) * (cells - 1)))

        at = cell(seq)
        marked = {cell(tick) for tick in ticks if 1 <= tick <= last}
        done, rest = theme_style("$accent", variables), "dim"
        tick = theme_style("$warning bold", variables)
        for index in range(cells):
            if index == at:
                text.append("●", style="bold")
            elif index in marked:
                text.append(TICK_BEFORE if index < at else TICK_AFTER, style=tick)
            else:
                text.append("━" if index < at else "─", style=done if index < at else rest)
        text.append("  ")
    return text.append_text(state)


def landmark_text(
    seq: int, bearings: Bearings, last: int, width: int, variables: Mapping[str, str]
) -> Text:
    """One line under the bar: why a jump did not move, else the landmarks on event
    `seq` (or the problem it is the first event of), else the nearest landmarks."""
    problem, here = bearings.problem, bearings.here
    if bearings.note:
        text = Text("⚠ " + bearings.note, style=theme_style("$warning", variables))
    elif problem is not None and problem.line == seq:
        text = Text("first problem: ", style="dim").append_text(problem_text(problem, variables))
    elif here:
        text = Text("◆ ", style=theme_style("$warning bold", variables))
        text.append(f"{here[0].kind}: ", style="bold").append_text(safe(here[0].label))
        if len(here) > 1:
            text.append(f"  +{len(here) - 1} more here", style="dim")
    else:
        before, after = (
            f"seq {found}" if found is not None else "none"
            for found in (bearings.previous, bearings.following)
        )
        text = Text(f"landmarks: previous {before} · next {after}", style="dim")
        if bearings.scanned < last:
            text.append(" (still reading the log)", style="dim")
    text.truncate(width, overflow="ellipsis")
    return text


def frame_text(frame: Frame, variables: Mapping[str, str]) -> Text:
    """The moment's event, status, plan, steps, budget, requests and evidence, each line
    that changed since the event before marked; then the list of changes."""
    now, changed = frame.moment, _changed(frame.changes)
    mark = theme_style("$warning bold", variables)

    def line(key: tuple[str, str], body: Text) -> Text:
        if key not in changed:
            return Text(UNCHANGED).append_text(body)
        body.stylize("bold")
        return Text(CHANGED, style=mark).append_text(body)

    event = Text("event ", style="dim").append_text(safe(now.event or "—"))
    if now.actor:
        event.append(" by ", style="dim").append_text(safe(now.actor))
    parts = [
        Text(moment(now.at), style="dim"),
        line(("", ""), event),
        line(("status", ""), Text("status ", style="dim").append_text(status_text(now.status))),
        line(("plan", ""), Text("plan ", style="dim").append(_version(now.plan_version))),
    ]
    parts += _steps(now, line, variables)
    parts += _budget(now, line)
    parts += _requests(now, line, variables)
    parts += _evidence(now, line)
    if now.halt is not None:
        parts.append(line(("halt", ""), Text("halted: ", style="bold").append_text(safe(now.halt))))
    parts += [Text(), heading(f"Changed since seq {frame.previous.seq}")]
    parts += [_change(change) for change in frame.changes] or [Text("  nothing", style="dim")]
    return join_lines(parts)


def _changed(found: tuple[Change, ...]) -> set[tuple[str, str]]:
    return {(change.what, change.key) for change in found}


def _version(version: int | None) -> str:
    return f"v{version}" if version is not None else "none yet"


def _steps(now: Moment, line: Marker, variables: Mapping[str, str]) -> list[Text]:
    parts = [Text(), heading("Steps")] if now.steps else []
    for step in now.steps:
        body = safe(step.id).append("  ")
        body.append_text(status_text(step.state or "pending", variables))
        if step.title:
            hang_after(body.append("  "))  # a long title and reason go on under the title
            body.append_text(safe(step.title))
        if step.reason:
            body.append(": ", style="dim").append_text(safe(step.reason))
        parts.append(line(("step", step.id), body))
    return parts


def _budget(now: Moment, line: Marker) -> list[Text]:
    parts = [Text(), heading("Budget used")] if now.budget else []
    for limit in now.budget:
        body = Text(f"{limit.name:<7}{amount(limit.name, limit.used)} of ")
        body.append(amount(limit.name, limit.limit))
        parts.append(line(("budget", limit.name), body))
    return parts


def _requests(now: Moment, line: Marker, variables: Mapping[str, str]) -> list[Text]:
    pending = sum(request.status == "pending" for request in now.requests)
    title = f"Requests: {pending} pending, {len(now.requests) - pending} decided or closed"
    parts = [Text(), heading(title)] if now.requests else []
    for request in now.requests:
        body = safe(request.id).append("  ")
        body.append_text(status_text(request.status, variables)).append("  ")
        body.append_text(safe(request.step)).append(" ").append_text(safe(request.tool))
        parts.append(line(("request", request.id), body))
    return parts


def _evidence(now: Moment, line: Marker) -> list[Text]:
    parts = [Text(), heading(f"Evidence so far: {now.evidence_lines} lines")]
    for item in now.evidence:
        body = safe(item.id).append(f"  {item.verdict}  ").append_text(safe(item.step))
        parts.append(line(("evidence", item.id), body))
    return parts


def _change(change: Change) -> Text:
    text = Text(f"  {change.what} ")
    if change.key:
        text.append_text(safe(change.key)).append(" ")
    text.append_text(safe(change.before) if change.before else Text("—", style="dim"))
    text.append(" → ")
    return text.append_text(safe(change.after) if change.after else Text("—", style="dim"))
