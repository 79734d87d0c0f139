"""Review: the seven plan questions and the failure modes, each pass, fail or unknown with
the records that decide it, for the latest plan version or an earlier one (`v` / `V`).

The widget keeps which version is wanted and posts `Reselected` when that changes; the
mission screen answers it (`store.analysis.review`) and hands the result to `show`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from store.analysis.review import Answer, PlanReview
from widgets.safe_text import safe
from widgets.tabs.common import (
    DocumentScroll,
    FocusOnShow,
    Reselected,
    ThemeAware,
    heading,
    verdict_text,
)
from widgets.words import plural

Row = tuple[Text, Text, Text]
Rows = tuple[Text, tuple[Row, ...], tuple[Row, ...]]


def answer_rows(label: str, answer: Answer, variables: Mapping[str, str]) -> list[Row]:
    """(`1.`, `✓ pass`, the question), then the reason and each cited record."""
    rows: list[Row] = [
        (Text(label), verdict_text(answer.verdict, variables), Text(answer.question, style="bold")),
        (Text(), Text(), safe(answer.reason, multiline=True)),
    ]
    for cite in answer.cites:
        where = safe(f"{cite.path}:{cite.line}" if cite.line is not None else cite.path)
        where.stylize("dim")
        rows.append((Text(), Text(), where.append("  ").append_text(safe(cite.note))))
    return rows


def review_rows(result: PlanReview, versions: Sequence[int], variables: Mapping[str, str]) -> Rows:
    """(title, the questions' rows, the failure modes' rows)."""
    failed = sum(answer.verdict == "fail" for answer in result.answers)
    if result.plan_version is None:
        title = Text("Review: no plan yet", style="bold")
    else:
        latest = " (latest)" if result.plan_version == result.latest_version else ""
        title = Text(f"Review of plan v{result.plan_version}{latest}", style="bold")
        title.append(
            f"   {plural(len(versions), 'version')}: " + " ".join(f"v{v}" for v in versions)
        )
    title.append(f"   {failed} failed" if failed else "   nothing failed")
    questions = [
        row
        for number, answer in enumerate(result.questions, start=1)
        for row in answer_rows(f"{number}.", answer, variables)
    ]
    modes = [row for answer in result.failure_modes for row in answer_rows("-", answer, variables)]
    return title, tuple(questions), tuple(modes)


def grid(rows: Sequence[Row]) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(width=3, justify="right")
    table.add_column(width=9, no_wrap=True)
    table.add_column(ratio=1)
    for row in rows:
        table.add_row(*row)
    return table


class ReviewView(ThemeAware, FocusOnShow, DocumentScroll):
    """The answers for one plan version; `v` older, `V` newer."""

    DEFAULT_CSS = "ReviewView { padding: 0 1; } ReviewView > Static { height: auto; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "version(-1)", "Older version", id="review.version"),
        Binding("V", "version(1)", "Newer version", id="review.version_newer"),
    ]

    def __init__(self, *, id: str | None = "review-view") -> None:
        super().__init__(id=id)
        self.selected: int | None = None
        """The plan version wanted; None follows the latest."""
        self.result: PlanReview | None = None
        self.versions: tuple[int, ...] = ()
        self.doc = Static(id="review-doc")
        self._shown: Rows | None = None

    def compose(self) -> ComposeResult:
        yield self.doc

    def show(self, result: PlanReview, versions: Sequence[int]) -> None:
        """The review of the version wanted, and every plan version there is."""
        self.result, self.versions = result, tuple(sorted(versions))
        self.rerender()

    def rerender(self) -> None:
        if self.result is None:
            return
        rows = review_rows(self.result, self.versions, self.variables)
        if rows == self._shown:
            return
        self._shown = title, questions, modes = rows
        self.doc.update(
            Group(
                title,
                Text(),
                heading("Seven questions"),
                grid(questions),
                Text(),
                heading("Failure modes"),
                grid(modes),
            )
        )

    @property
    def shown_text(self) -> str:
        """The title and every row as plain text (for tests)."""
        if self._shown is None:
            return ""
        title, questions, modes = self._shown
        rows = [" ".join(cell.plain for cell in row) for row in questions + modes]
        return "\n".join([title.plain, *rows])

    def action_version(self, step: int) -> None:
        """Review the version `step` older or newer than the one shown (wrapping)."""
        versions = self.versions
        current = self.result.plan_version if self.result else None
        if not versions or current not in versions:
            return
        self.selected = versions[(versions.index(current) + step) % len(versions)]
        self.post_message(Reselected())
