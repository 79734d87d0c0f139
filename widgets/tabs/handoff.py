"""Handoff: where the next operator resumes (summary, step, evidence, blockers, next)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from store.problems import Problem
from store.records import Handoff
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
    """The handoff as a document. `verdicts` maps known evidence ids to pass/fail."""
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
        return join_lines(parts)
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
    parts.append(heading("Verified evidence"))
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
            f" ({len(handoff.blockers)})", style=theme_style("warning", "bold", variables)
        )
    parts.append(blockers)
    parts.append(bullets(handoff.blockers, marker="■"))
    parts.append(heading("Next steps"))
    if not handoff.next_steps:
        parts.append(Text("  none", style="dim"))
    for number, step in enumerate(handoff.next_steps, start=1):
        parts.append(hanging(f"  {number}. ", safe(step, multiline=True)))
    return join_lines(parts)


class HandoffView(ThemeAware, FocusOnShow, DocumentScroll):
    """handoff.json rendered for reading."""

    DEFAULT_CSS = """
    HandoffView { padding: 0 1; }
    HandoffView > Static { height: auto; }
    """

    def __init__(self, *, id: str | None = "handoff-view") -> None:
        super().__init__(id=id)
        self._args: _Shown | None = None
        self._shown: Text | None = None
        self.doc = Static(id="handoff-doc")

    def compose(self) -> ComposeResult:
        yield self.doc

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
        text = handoff_text(
            args.handoff,
            args.problems,
            path=args.path,
            step_state=args.step_state,
            verdicts=dict(args.verdicts),
            variables=self.variables,
        )
        if text == self._shown:
            return
        self._shown = text
        self.doc.update(text)

    @property
    def shown_text(self) -> str:
        return self._shown.plain if self._shown is not None else ""
