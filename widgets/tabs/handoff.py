"""Handoff: where the next operator resumes (summary, step, evidence, blockers, next)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult

from store.format.problems import Problem
from store.format.records import Handoff
from widgets.hanging import Document
from widgets.keyed_table import WIDE
from widgets.safe_text import safe
from widgets.status import status_text, theme_style
from widgets.tabs.common import (
    DocumentScroll,
    FocusOnShow,
    ThemeAware,
    bullets,
    hanging,
    heading,
    join_lines,
    moment,
    problems_block,
    verdict_text,
)


class _Shown(NamedTuple):
    handoff: Handoff | None
    problems: tuple[Problem, ...]
    path: str
    step_state: str | None
    verdicts: tuple[tuple[str, str], ...]


def handoff_text(
    handoff: Handoff | None,
    problems: Sequence[Problem] = (),
    *,
    path: str = "handoff.json",
    step_state: str | None = None,
    verdicts: Mapping[str, str] | None = None,
    variables: Mapping[str, str] | None = None,
) -> Text:
    """The handoff as one document. `verdicts` maps known evidence ids to pass/fail."""
    left, right = handoff_columns(
        handoff, problems, path=path, step_state=step_state, verdicts=verdicts, variables=variables
    )
    return join_lines([left, right]) if right.plain else left


def handoff_columns(
    handoff: Handoff | None,
    problems: Sequence[Problem] = (),
    *,
    path: str = "handoff.json",
    step_state: str | None = None,
    verdicts: Mapping[str, str] | None = None,
    variables: Mapping[str, str] | None = None,
) -> tuple[Text, Text]:
    """(where things stand and the summary, then evidence, blockers and next steps)."""
    parts: list[Text] = []
    if problems:
        parts.append(problems_block(problems, variables))
        parts.append(Text())
    if handoff is None:
        if problems:
            parts.append(Text(f"{path} could not be loaded; see the problems above.", style="dim"))
        else:
            parts.append(
                Text(
                    f"No {path} yet: the runtime writes one where the next operator resumes.",
                    style="dim",
                )
            )
        return join_lines(parts), Text()
    title = Text("Handoff", style="bold")
    title.append(f"  at {moment(handoff.at)}", style="dim")
    parts.append(title)
    meta = Text()
    meta.append("plan ", style="dim")
    meta.append(f"v{handoff.plan_version}" if handoff.plan_version else "—")
    meta.append("  current step ", style="dim")
    if handoff.current_step:
        meta.append_text(safe(handoff.current_step))
        if step_state:
            meta.append(" ")
            meta.append_text(status_text(step_state, variables))
    else:
        meta.append("—")
    meta.append("  resume after seq ", style="dim")
    meta.append(str(handoff.resume_after_seq))
    parts.append(meta)
    parts.append(Text())
    parts.append(heading("Summary"))
    summary = safe(handoff.summary, multiline=True) if handoff.summary else Text("—", style="dim")
    parts.append(hanging("  ", summary))
    left = join_lines(parts)
    parts = [heading("Verified evidence")]
    if not handoff.verified:
        parts.append(Text("  none", style="dim"))
    known = verdicts or {}
    for evidence_id in handoff.verified:
        line = Text("  ")
        verdict = known.get(evidence_id)
        line.append_text(verdict_text(verdict, variables) if verdict else Text("· ?   ", "dim"))
        line.append(" ")
        line.append_text(safe(evidence_id))
        if verdict is None:
            line.append("  (not among the recent evidence)", style="dim")
        parts.append(line)
    blockers = heading("Blockers")
    if handoff.blockers:
        blockers.append(
            f" ({len(handoff.blockers)})", style=theme_style("$warning bold", variables)
        )
    parts.append(blockers)
    parts.append(bullets(handoff.blockers, marker="■"))
    parts.append(heading("Next steps"))
    if not handoff.next_steps:
        parts.append(Text("  none", style="dim"))
    for number, step in enumerate(handoff.next_steps, start=1):
        parts.append(hanging(f"  {number}. ", safe(step, multiline=True)))
    return left, join_lines(parts)


class HandoffView(ThemeAware, FocusOnShow, DocumentScroll):
    """handoff.json rendered for reading."""

    DEFAULT_CSS = """
    HandoffView { padding: 0 1; }
    HandoffView.-wide { layout: horizontal; }
    HandoffView > Static { height: auto; width: 1fr; }
    HandoffView > #handoff-lists { margin-top: 1; }
    HandoffView.-wide > #handoff-lists { margin-top: 0; margin-left: 2; }
    """

    def __init__(self, *, id: str | None = "handoff-view") -> None:
        super().__init__(id=id)
        self._args: _Shown | None = None
        self._shown: tuple[Text, Text] | None = None
        self.doc = Document(id="handoff-doc")
        self.lists = Document(id="handoff-lists")

    def compose(self) -> ComposeResult:
        yield self.doc
        yield self.lists

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width >= WIDE, "-wide")

    def show(
        self,
        handoff: Handoff | None,
        problems: Sequence[Problem] = (),
        *,
        path: str = "handoff.json",
        step_state: str | None = None,
        verdicts: Mapping[str, str] | None = None,
    ) -> None:
        """Render; nothing is redrawn when the text would not change."""
        self._args = _Shown(
            handoff, tuple(problems), path, step_state, tuple(sorted((verdicts or {}).items()))
        )
        self.rerender()

    def rerender(self) -> None:
        if self._args is None:
            return
        args = self._args
        texts = handoff_columns(
            args.handoff,
            args.problems,
            path=args.path,
            step_state=args.step_state,
            verdicts=dict(args.verdicts),
            variables=self.variables,
        )
        if texts == self._shown:
            return
        self._shown = texts
        self.doc.update(texts[0])
        self.lists.update(texts[1])
        self.lists.display = bool(texts[1].plain)

    @property
    def shown_text(self) -> str:
        return "\n".join(t.plain for t in self._shown) if self._shown is not None else ""
