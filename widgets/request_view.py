"""One approval request as an approver reads it, and the queue of them.

Renders a `store.index.approval_checks.Review` (and `QueueItem`s): facts, what blocks an
approval, warnings, what the call will do (`widgets.call_preview`: a Claude Code edit as
a diff, a command, a URL's host) or the full args, the decision, a stale request's
field-level diff and the mission's earlier decisions. Every agent string goes through
`safe` or `json_view`. No file IO: the screens hand these widgets what to show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from store.derivation.derive import RequestStatus
from store.format.records import Decision
from store.format.text import countdown
from store.index.approval_checks import Change, QueueItem, Review
from store.trust.signatures import SignatureState
from widgets.call_preview import call_preview
from widgets.columns import ID_LEAST, Fit, fit_widths
from widgets.hanging import Document
from widgets.json_text import json_text
from widgets.json_view import json_view
from widgets.keyed_table import KeyedTable
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import DocumentScroll, field_line, heading, moment
from widgets.words import apart

LABEL = 12
VERDICTS = (("approve", "approved"), ("reject", "rejected"))


def _line(name: str, value: Text | str) -> Text:
    return field_line(name, value, LABEL)


def _join(parts: Sequence[Text]) -> Text:
    return Text("\n").join(parts)


def _decision_line(decision: Decision, variables: Mapping[str, str] | None) -> Text:
    verdict = "approved" if decision.decision == "approve" else "rejected"
    text = status_text(verdict, variables)
    text.append(" by ")
    text.append_text(safe(decision.decided_by))
    text.append(f" at {moment(decision.decided_at)}")
    if decision.origin:
        text.append(" from ")
        text.append_text(safe(decision.origin))
    return text


def facts_text(review: Review, now: datetime, variables: Mapping[str, str] | None) -> Text:
    """Status, risk, tool, mission, plan step, who asked and when, expiry, digest."""
    request = review.request
    top = status_text(review.status.value, variables)
    top.append("  ")
    top.append_text(status_text(review.risk, variables))
    top.append("  ")
    top.append_text(safe(review.tool or "(no tool)"))
    if review.status is RequestStatus.PENDING:
        top.append(f"  expires {countdown(review.expires_at, now)}", style="bold")
    lines = [top]
    mission = safe(review.mission)
    mission.append(" · ")
    mission.append_text(safe(review.mission_title))
    lines.append(_line("mission", mission))
    lines.append(_line("request", review.request_id))
    if review.plan_version is not None:
        plan = Text(f"v{review.plan_version}")
        if review.latest_plan_version is not None:
            plan.append(f" (latest v{review.latest_plan_version})", style="dim")
        if review.binding.rule is not None:
            style = "$error bold" if review.binding.stale else "$warning bold"
            plan.append(f" {review.binding.rule}", style=theme_style(style, variables))
        step_id = request.step if request is not None else (review.raw or {}).get("step")
        plan.append(" · step ")
        plan.append_text(safe(str(step_id)))
        if review.step is not None:
            plan.append(": ")
            plan.append_text(safe(review.step.title))
        lines.append(_line("plan", plan))
    if review.step is not None:
        declared = status_text(review.step.risk, variables)
        if review.step.effect:
            declared.append(" · effect: ")
            declared.append_text(safe(review.step.effect, multiline=False))
        lines.append(_line("step risk", declared))
    if request is not None:
        asked = safe(request.requested_by)
        asked.append(f" at {moment(request.requested_at)}")
        lines.append(_line("requested", asked))
        expires = Text(countdown(request.expires_at, now))
        if request.expires_at is not None:
            expires.append(f" ({moment(request.expires_at)})", style="dim")
        lines.append(_line("expires", expires))
        if request.summary:
            lines.append(_line("summary", safe(request.summary)))
    lines.append(_line("digest", review.digest or "— (none: the request does not load)"))
    return _join(lines)


def findings_text(
    review: Review, variables: Mapping[str, str] | None, keys: Mapping[str, str] | None = None
) -> Text:
    """What blocks approving (and rejecting), then warnings; empty when all is well.

    `keys` are the keys that approve and reject (`approve`, `reject`) as bound now; a
    verdict without one (read-only mode) is not offered."""
    keys = keys or {}
    lines: list[Text] = []
    error = theme_style("$error bold", variables)
    warning = theme_style("$warning bold", variables)
    pending = review.status is RequestStatus.PENDING
    decided = not pending and review.decision is not None  # the decision says it all
    if review.plan_stale:
        version = review.binding.plan_version
        lines.append(Text(f"✗ its plan changed: plan v{version} no longer holds", style=error))
    elif review.status is RequestStatus.STALE:
        verb = (
            "approved" if review.decision and review.decision.decision == "approve" else "decided"
        )
        lines.append(Text(f"✗ changed since it was {verb}", style=error))
    elif decided:
        lines.append(Text("  decided: a decision is written once", style="dim"))
    for blocker in () if decided else review.blockers:
        line = Text("✗ cannot approve: " if pending else "✗ ", style=error)
        line.append_text(safe(blocker))
        lines.append(line)
    if pending and review.reject_blockers:
        lines.append(Text("✗ cannot reject either (see above)", style=error))
    elif review.blockers and pending and "reject" in keys:
        lines.append(Text(f"  you can still reject it ({keys['reject']}), with a reason", "dim"))
    for warning_text in review.warnings:
        line = Text("⚠ ", style=warning)
        line.append_text(safe(warning_text))
        lines.append(line)
    if pending and not review.blockers and not review.plan_stale:  # warnings do not block
        confirm = {
            "confirm": " (asks for a confirmation: external write)",
            "type_tool": " (asks you to type the tool name: irreversible)",
        }.get(review.confirmation, "")
        ways = [f"{done} ({keys[verdict]})" for verdict, done in VERDICTS if verdict in keys]
        if ways:
            lines.append(Text(f"✓ can be {' or '.join(ways)}{confirm}", style="dim"))
        else:
            lines.append(Text("✓ nothing blocks a decision; read-only: decided elsewhere", "dim"))
    return _join(lines)


def decision_text(review: Review, variables: Mapping[str, str] | None) -> Text:
    """This request's decision, when there is one."""
    decision = review.decision
    if decision is None:
        return Text()
    lines = [heading("Decision"), _decision_line(decision, variables)]
    if decision.reason:
        lines.append(_line("reason", safe(decision.reason)))
    if decision.valid_until is not None:
        lines.append(_line("valid until", moment(decision.valid_until)))
    lines.append(_line("digest", decision.digest))
    if review.signature is not None:
        lines.append(_line("signature", signature_text(review.signature, variables)))
    return _join(lines)


def signature_text(state: SignatureState, variables: Mapping[str, str] | None) -> Text:
    """`signed, valid: alice (SHA256:...)`; INVALID (why) and a required one missing in
    the error style; signed by a key no file vouches for in the warning style; plain
    unsigned dim."""
    if state.kind == "invalid" or (state.kind == "unsigned" and state.required):
        text = safe(state.describe())
        text.stylize(theme_style("$error bold", variables))
        return text
    if state.kind == "unvouched":
        text = safe(state.describe())
        text.stylize(theme_style("$warning", variables))
        return text
    return safe(state.describe()) if state.kind == "valid" else Text("unsigned", style="dim")


def _compact(value: Any) -> Text:
    text = json_text(value)
    return safe(" ".join(line.strip() for line in text.splitlines()))


def changes_text(review: Review, variables: Mapping[str, str] | None) -> Text:
    """For a stale request: what changed since the decision, field by field."""
    if review.status is not RequestStatus.STALE or review.plan_stale:
        return Text()
    lines = [heading("Changed since it was decided")]
    if review.changes is None:
        lines.append(
            Text(
                "  The earlier request is not known: its decision keeps no request_json and "
                "this HUD did not see it before it changed.",
                style="dim",
            )
        )
        return _join(lines)
    if not review.changes:
        lines.append(Text("  no field differs (the JSON changed only in form)", style="dim"))
    marks = {"added": "+", "removed": "-", "changed": "~"}
    for change in review.changes:
        lines.append(_change_line(change, marks[change.kind]))
    return _join(lines)


def _change_line(change: Change, mark: str) -> Text:
    line = Text(f"  {mark} ", style="bold")
    line.append_text(safe(change.path))
    if change.kind != "added":
        line.append("\n      was  ", style="dim")
        line.append_text(_compact(change.before))
    if change.kind != "removed":
        line.append("\n      now  ", style="dim")
        line.append_text(_compact(change.after))
    return line


def earlier_text(review: Review, variables: Mapping[str, str] | None) -> Text:
    """The other decisions on the same mission, newest first."""
    lines = [heading(f"Earlier decisions on {review.mission}")]
    if not review.earlier:
        lines.append(Text("  none", style="dim"))
    for item in review.earlier:
        line = Text("  ")
        line.append_text(_decision_line(item.decision, variables))
        line.append("  ")
        line.append_text(safe(item.request_id))
        if item.tool is not None:
            line.append(" · ")
            line.append_text(safe(item.tool))
        if item.risk is not None:
            line.append(" · ")
            line.append_text(status_text(item.risk, variables))
        if item.status.value not in ("approved", "rejected"):
            line.append(" · now ")
            line.append_text(status_text(item.status.value, variables))
        if item.signature.kind != "unsigned" or item.signature.required:
            line.append(" · ")
            line.append_text(signature_text(item.signature, variables))
        if item.decision.reason:
            line.append("\n    reason: ", style="dim")
            line.append_text(safe(item.decision.reason))
        lines.append(line)
    return _join(lines)


def preview_text(review: Review, variables: Mapping[str, str] | None) -> Text | None:
    """What the call will do (`call_preview`), or None: only the raw args can say."""
    raw = review.raw
    if raw is None or "args" not in raw:
        return None
    return call_preview(
        raw.get("tool") if isinstance(raw.get("tool"), str) else None, raw["args"], variables
    )


def args_text(review: Review, *, dark: bool = True) -> Text:
    """The full args, highlighted; the raw value even when it is not an object."""
    raw = review.raw
    if raw is None:
        return Text("  the request does not load: no args to show", style="dim")
    if "args" not in raw:
        return Text("  the request has no args", style="dim")
    return json_view(raw["args"], dark=dark)


class RequestView(DocumentScroll):
    """A request, as a scrolling document: j/k, g/G, page keys."""

    DEFAULT_CSS = """
    RequestView { padding: 0 1; }
    RequestView > Static { height: auto; }
    RequestView > .gap { margin-top: 1; }
    """

    def __init__(self, *, id: str | None = "request-view") -> None:
        super().__init__(id=id)
        self._shown: dict[str, Text] = {}

    def compose(self) -> ComposeResult:
        yield Document(id="request-facts")
        yield Document(id="request-findings", classes="gap")
        yield Static(id="request-preview-title", classes="gap")
        yield Static(id="request-preview")
        yield Static(heading("Args"), id="request-args-title", classes="gap")
        yield Static(id="request-args")
        yield Document(id="request-decision", classes="gap")
        yield Document(id="request-changes", classes="gap")
        yield Document(id="request-earlier", classes="gap")

    def show(
        self,
        review: Review,
        now: datetime,
        variables: Mapping[str, str] | None = None,
        *,
        dark: bool = True,
        keys: Mapping[str, str] | None = None,
        preview: Text | None = None,
        raw: bool = False,
    ) -> None:
        """Render the review; parts whose text did not change are not redrawn. `keys`:
        see `findings_text`, and `raw`, the key that toggles the raw args. `preview`
        (`preview_text`), what the call will do, is shown in place of the raw args,
        unless `raw`."""
        keys = keys or {}
        tool = safe(review.tool or "(no tool)")
        toggle = keys.get("raw")
        show_preview = preview is not None and not raw
        preview_title = Text()
        title = Text()
        if show_preview:
            preview_title = heading("What it will do")
            preview_title.append(" · ", style="dim")
            preview_title.append_text(tool)
            if toggle:
                preview_title.append(f" · {toggle}: raw args", style="dim")
        else:
            title = heading("Args")
            title.append(" of ", style="dim")
            title.append_text(tool)
            if preview is not None and toggle:
                title.append(f" · {toggle}: what it will do", style="dim")
        parts = {
            "request-facts": facts_text(review, now, variables),
            "request-findings": findings_text(review, variables, keys),
            "request-preview-title": preview_title,
            "request-preview": preview if show_preview and preview is not None else Text(),
            "request-args-title": title,
            "request-args": Text() if show_preview else args_text(review, dark=dark),
            "request-decision": decision_text(review, variables),
            "request-changes": changes_text(review, variables),
            "request-earlier": earlier_text(review, variables),
        }
        for name, text in parts.items():
            if self._shown.get(name) != text:
                self._shown[name] = text
                widget = self.query_one(f"#{name}", Static)
                widget.update(text)
                widget.display = bool(text.plain)

    def args_plain(self) -> str:
        return self._shown.get("request-args", Text()).plain


# ---- the queue ---------------------------------------------------------------------------------

QUEUE_COLUMNS: tuple[Fit, ...] = (
    Fit("expires", "Expires", 7, 12, give=3),
    Fit("risk", "Risk", 4, 20, give=4),
    Fit("mission", "Mission", ID_LEAST, give=2),
    Fit("request", "Request", ID_LEAST, give=1),
    Fit("tool", "Tool", 8, give=6),
    Fit("step", "Step", 6, give=5),
    Fit("summary", "Summary", 10, give=7, fill=True),
)
"""The queue's columns by priority (`widgets.columns`): ids are cut last, and never below
`ID_LEAST`; the risk falls back to its symbol; the summary takes what is left."""


def queue_cells(
    item: QueueItem,
    now: datetime,
    variables: Mapping[str, str] | None,
    *,
    words: bool = True,
    ids: tuple[str, str] | None = None,
) -> tuple[Text, ...]:
    """One queue row: expiry (or status, when not pending), risk (in `words`, or only its
    symbol), ids, tool, step, summary (led by "nobody waiting" when its waiter is gone).

    `ids` are the mission and request ids as the columns show them (whole by default)."""
    summary = safe(item.summary)
    if item.status is RequestStatus.PENDING and item.nobody_waiting:
        said = Text("nobody waiting", style=theme_style("$warning bold", variables))
        summary = Text.assemble(said, " · ", summary) if item.summary else said
    if item.status is RequestStatus.PENDING:
        left = countdown(item.expires_at, now).removeprefix("in ")
        expires = Text("—" if left == "never" else left)
    else:
        expires = status_text(item.status.value, variables)
    mission, request = ids or (item.mission, item.request_id)
    return (
        expires,
        status_text(item.risk, variables, word=words),
        safe(mission),
        safe(request),
        safe(item.tool),
        safe(item.step),
        summary,
    )


def queue_detail(item: QueueItem) -> Text:
    """The focused request under the queue: its mission and request ids in full, then
    its tool and summary."""
    text = Text("mission ", style="dim")
    text.append_text(safe(item.mission)).stylize("bold", 8)
    text.append(" · request ", style="dim")
    start = len(text)
    text.append_text(safe(item.request_id))
    text.stylize("bold", start)
    text.append("  ")
    text.append_text(safe(item.tool))
    if item.summary:
        text.append(": ")
        text.append_text(safe(item.summary))
    return text


class QueueTable(KeyedTable):
    """Approval requests keyed `mission/request`, in the order given; columns laid out
    for the requests shown (`QUEUE_COLUMNS`)."""

    def __init__(self, *, id: str | None = "approvals-table") -> None:
        spec = [(column.key, column.label, None, None) for column in QUEUE_COLUMNS]
        super().__init__(spec, id=id, on_relayout=self._relayout, selectable=True)
        self._items: list[QueueItem] = []
        self._now: datetime | None = None
        self._natural: dict[str, int] = {}
        self.variables: Mapping[str, str] | None = None

    def widths_for(self, width: int) -> tuple[int | None, ...]:
        room = width - 2 * self.cell_padding * len(QUEUE_COLUMNS) - 2
        widths = fit_widths(QUEUE_COLUMNS, self._natural, room)
        return tuple(widths[column.key] for column in QUEUE_COLUMNS)

    @property
    def selected_item(self) -> QueueItem | None:
        key = self.selected_key
        return next((item for item in self._items if item.key == key), None)

    def show(self, items: Sequence[QueueItem], now: datetime) -> bool:
        """Show these requests; ids cut to their column are kept apart (`apart`)."""
        self._items = list(items)
        self._now = now
        natural: dict[str, int] = {}
        for item in self._items:
            cells = queue_cells(item, now, self.variables)
            for column, text in zip(QUEUE_COLUMNS, cells, strict=True):
                natural[column.key] = max(natural.get(column.key, 0), text.cell_len)
        self._natural = natural
        width = self.size.width or 80
        if self.columns and self.widths_for(width) != self._widths:
            self._layout(width)  # which shows the rows again (`_relayout`)
            return True
        words = self.width_of("risk") >= natural.get("risk", 0)
        missions = apart((i.mission for i in items), self.width_of("mission"))
        requests = apart((i.request_id for i in items), self.width_of("request"))
        return self.set_rows(
            [
                (
                    i.key,
                    queue_cells(
                        i,
                        now,
                        self.variables,
                        words=words,
                        ids=(missions[i.mission], requests[i.request_id]),
                    ),
                )
                for i in self._items
            ]
        )

    def _relayout(self) -> None:
        if self._now is not None:
            self.show(self._items, self._now)
