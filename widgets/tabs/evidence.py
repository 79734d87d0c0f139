"""Evidence: observations with verdict, method, what they prove, and artifact checks.

The view hands over evidence log lines as they arrive and the result of checking each
cited artifact's sha256 (keyed by the artifact path the evidence cites): `ok`,
`mismatch`, `missing`, `unreadable` (a symlink, not a regular file) or absent
(not checked yet).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Static

from store.format.problems import Problem
from store.format.records import Evidence
from widgets.filter import filter_bindings
from widgets.hanging import Document
from widgets.keyed_table import Column, KeyedTable
from widgets.safe_text import safe
from widgets.status import theme_style
from widgets.tabs.common import DocumentScroll, hanging, join_lines, verdict_text
from widgets.tabs.log_view import Line, LogView
from widgets.words import plural

WINDOW = LogView.WINDOW
"""Evidence lines kept in memory (the last ones); all of them are shown."""

COLUMNS: tuple[Column, ...] = (
    ("seq", "Seq", 4, 6),
    ("id", "Id", 12, 24),
    ("step", "Step", 7, 14),
    ("verdict", "Verdict", 7, 12),
    ("method", "Method", 7, 20),
    ("proves", "Proves", 0, 0),
    ("artifact", "Artifact", 10, 40),
)

CHECK_WORDS = {
    "ok": ("✓ sha256 ok", "$success"),
    "mismatch": ("✗ mismatch", "$error bold"),
    "missing": ("✗ missing", "$error bold"),
    "unreadable": ("✗ unreadable", "$error bold"),
}


def check_text(
    check: str | None, variables: Mapping[str, str] | None = None, *, short: bool = False
) -> Text:
    """An artifact check result: `✓ sha256 ok`, `✗ mismatch`, `✗ missing`, `… unchecked`.

    `short` says `✓ ok` for a matching artifact (narrow tables)."""
    if check is None:
        return Text("… unchecked", style="dim")
    word, style = CHECK_WORDS.get(check, (f"? {check}", "$warning"))
    if short and check == "ok":
        word = "✓ ok"
    return Text(word, style=theme_style(style, variables))


def unverified_text(variables: Mapping[str, str] | None = None) -> Text:
    """The verdict shown for an entry the hash chain no longer vouches for."""
    return Text("✗ unverified", style=theme_style("$error bold", variables))


def evidence_detail(
    item: Evidence | Problem,
    line: int,
    check: str | None,
    variables: Mapping[str, str] | None,
    *,
    verified: bool = True,
) -> Text:
    if isinstance(item, Problem):
        text = Text(f"line {line}  ", style="bold")
        text.append("✗ ", style=theme_style("$error bold", variables))
        text.append_text(safe(f"{item.where} {item.message}"))
        if item.hint:
            text.append(" · fix: ", style="dim")
            text.append_text(safe(item.hint))
        return text
    head = Text(f"seq {item.seq}  ", style="bold")
    head.append_text(safe(item.id))
    head.append("  step ", style="dim")
    head.append_text(safe(item.step))
    head.append("  ")
    if verified:
        head.append_text(verdict_text(item.verdict, variables))
    else:
        head.append_text(unverified_text(variables))
        head.append(f" (says {item.verdict}: the hash chain breaks at or after it)", "dim")
    head.append(f"  {item.at.isoformat()}", style="dim")
    parts = [head]
    for name, value in (
        ("observed", item.observed),
        ("method", item.method),
        ("proves", item.proves),
    ):
        parts.append(hanging(Text(f"{name}: ", style="dim"), safe(value, multiline=True)))
    if item.artifact is not None:
        artifact = Text("artifact: ", style="dim")
        artifact.append_text(safe(item.artifact.path))
        artifact.append(f"  {item.artifact.bytes:,} bytes  sha256 {item.artifact.sha256[:16]}…  ")
        artifact.append_text(check_text(check, variables))
        parts.append(artifact)
    return join_lines(parts)


class EvidenceView(LogView):
    """Chain status line, the evidence table, and the highlighted entry in full."""

    BINDINGS: ClassVar[list[BindingType]] = [*filter_bindings("evidence")]

    DEFAULT_CSS = """
    EvidenceView { height: 1fr; }
    EvidenceView > #evidence-status { height: auto; padding: 0 1; background: $panel; }
    EvidenceView > KeyedTable { height: 1fr; }
    EvidenceView > #evidence-detail { height: 1fr; min-height: 4; padding: 0 1;
        border-top: solid $panel; }
    """

    def __init__(self, *, id: str | None = "evidence-view") -> None:
        super().__init__(id=id)
        self._cells: dict[int, tuple[tuple[str | None, bool], tuple[Text, ...]]] = {}
        self._checks: dict[str, str] = {}
        self._problems: tuple[Problem, ...] = ()
        self.table = KeyedTable(
            COLUMNS, id="evidence-table", on_relayout=self.relayout, ids=("id", "step")
        )
        self.status = Static(id="evidence-status")
        self.detail = Document(id="evidence-detail-text")

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.compose_filter()
        yield self.table
        with DocumentScroll(id="evidence-detail"):
            yield self.detail

    def show(
        self,
        lines: Iterable[Line],
        *,
        reset: bool = False,
        checks: Mapping[str, str] | None = None,
        total: int | None = None,
        chain_broken_at: int | None = None,
        seq_broken_at: int | None = None,
        unverified_from: int | None = None,
        file_problems: Sequence[Problem] = (),
    ) -> None:
        """Append these evidence lines (`LogView.show`); `checks` maps cited artifact
        paths to results."""
        if checks is not None:
            self._checks = dict(checks)
        super().show(
            lines,
            reset=reset,
            total=total,
            chain_broken_at=chain_broken_at,
            seq_broken_at=seq_broken_at,
            unverified_from=unverified_from,
            file_problems=file_problems,
        )

    def _verified(self, line: int) -> bool:
        return self._unverified_from is None or line < self._unverified_from

    def _check_of(self, item: Any) -> str | None:
        if isinstance(item, Evidence) and item.artifact is not None:
            return self._checks.get(item.artifact.path)
        return None

    def _row(self, line: int, item: Any) -> tuple[Text, ...]:
        state = (self._check_of(item), self._verified(line))
        check, verified = state
        cached = self._cells.get(line)
        if cached is not None and cached[0] == state:
            return cached[1]
        variables = self.variables
        if isinstance(item, Problem):
            problem = Text("✗ ", style=theme_style("$error bold", variables))
            problem.append_text(safe(item.message))
            cells: tuple[Text, ...] = (
                Text(f"L{line}", style="dim"),
                Text(""),
                Text(""),
                Text("✗ problem", style=theme_style("$error bold", variables)),
                Text(""),
                problem,
                Text(""),
            )
        else:
            artifact = Text("")
            if item.artifact is not None:
                artifact = check_text(check, variables, short=not self.table.wide)
                if self.table.wide:
                    artifact.append(" ")
                    artifact.append_text(safe(item.artifact.path))
            cells = (
                Text(str(item.seq)),
                safe(item.id),
                safe(item.step),
                verdict_text(item.verdict, variables) if verified else unverified_text(variables),
                safe(item.method),
                safe(item.proves),
                artifact,
            )
        self._cells[line] = (state, cells)
        return cells

    def refresh_rows(self) -> None:
        rows = self.filtered([(str(line), self._row(line, item)) for line, item in self._buffer])
        self.table.set_rows(rows)
        self.table.styles.max_height = len(rows) + 1
        self.update_status()
        self.update_detail()

    def status_text(self) -> Text:
        variables = self.variables
        bad = theme_style("$error bold", variables)
        text = Text()
        if self._chain_broken_at is not None:
            text.append(f"✗ chain broken at seq {self._chain_broken_at}", style=bad)
        elif self._total:
            text.append("✓ chain intact", style=theme_style("$success", variables))
        elif self._file_problems:  # (said under this line)
            text.append("evidence log not read", style=bad)
        else:
            text.append("no evidence yet", style="dim")
        if self._seq_broken_at is not None:
            text.append(" · ")
            text.append(f"✗ seq gap at {self._seq_broken_at}", style=bad)
        shown = [(line, item) for line, item in self._buffer if isinstance(item, Evidence)]
        items = [item for _, item in shown]
        if items:
            trusted = [item for line, item in shown if self._verified(line)]
            passed = sum(1 for item in trusted if item.verdict == "pass")
            entries = plural(len(items), "entry", "entries")
            text.append(f" · {entries}: {passed:,} pass", style="dim")
            failed = len(trusted) - passed
            if failed:
                text.append(f", {failed:,} fail", style=bad)
            if len(trusted) < len(items):
                text.append(f", {len(items) - len(trusted):,} unverified", style=bad)
            if self._total > len(self._buffer):
                text.append(f" (last {len(self._buffer):,} of {self._total:,} lines)", "dim")
        checks = [self._check_of(item) for item in items if item.artifact is not None]
        if checks:
            ok = sum(1 for check in checks if check == "ok")
            text.append(f" · artifacts {ok} ✓", style="dim")
            wrong = sum(1 for check in checks if check not in ("ok", None))
            if wrong:
                text.append(f" {wrong} ✗", style=bad)
        if self.needle:
            text.append(f" · {plural(self.table.row_count, 'row')} match ", style="dim")
            words = safe(self.needle)
            words.stylize("bold reverse")
            text.append_text(words)
        problems = sum(1 for _, item in self._buffer if isinstance(item, Problem))
        if problems:
            text.append(f" · {plural(problems, 'bad line')}", style=bad)
        return text

    def detail_for(self, line: int, record: Any) -> Text:
        return evidence_detail(
            record, line, self._check_of(record), self.variables, verified=self._verified(line)
        )
