"""A `name: value` line wraps under its value, at any width, and draws nothing else."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region

from store.format.problems import Problem
from widgets.hanging import HANG, NARROWEST_BODY, Document, hang_wrap
from widgets.problem_list import ProblemList
from widgets.tabs.common import bullets, field_line, hanging, join_lines

CONSOLE = Console(width=200)
POLICY = "signatures optional; auto: nothing; valid for 1800 s"


def lines_of(text: Text) -> list[str]:
    return text.plain.split("\n")


def test_a_long_value_wraps_under_its_start() -> None:
    text = Text("  ").append_text(field_line("in force", POLICY, 10))
    assert lines_of(hang_wrap(text, 40, CONSOLE)) == [
        "  in force:  signatures optional; auto:",
        "             nothing; valid for 1800 s",
    ]


def test_a_bullet_and_a_hanging_prefix_wrap_under_their_body() -> None:
    text = join_lines(
        [
            bullets(["a run killed at any batch finishes on restart with the same rows"]),
            hanging(Text("why v2: "), Text("the first plan forgot the rollback step entirely")),
        ]
    )
    assert lines_of(hang_wrap(text, 36, CONSOLE)) == [
        "  • a run killed at any batch",
        "    finishes on restart with the",
        "    same rows",
        "why v2: the first plan forgot the",
        "        rollback step entirely",
    ]


def test_what_cannot_hang_is_left_to_the_widget() -> None:
    digest = "sha256:" + "ab" * 32
    fits = field_line("plan", "v1 (latest v1)", 10)
    unmarked = Text("a plain line that is much longer than the width it is given here")
    text = join_lines([field_line("digest", digest, 10), fits, unmarked])
    assert lines_of(hang_wrap(text, 40, CONSOLE)) == lines_of(text)
    narrow = field_line("a long field name", POLICY, 20)
    assert lines_of(hang_wrap(narrow, 20 + NARROWEST_BODY - 1, CONSOLE)) == lines_of(narrow)


def test_the_marks_are_taken_out_and_every_character_keeps_its_style() -> None:
    text = field_line("summary", Text("ship it", style="bold"), 10)
    hung = hang_wrap(text, 80, CONSOLE)
    assert hung.plain == text.plain
    assert [span for span in text.spans if span.style == HANG]
    assert not [span for span in hung.spans if span.style == HANG]
    assert [hung.get_style_at_offset(CONSOLE, i) for i in range(len(hung))] == [
        text.get_style_at_offset(CONSOLE, i).clear_meta_and_links() for i in range(len(text))
    ]


words = st.text(alphabet="abcdefghij", min_size=1, max_size=12)


@given(
    name=st.text(alphabet="abcdefgh", min_size=1, max_size=12),
    body=st.lists(words, min_size=1, max_size=30),
    width=st.integers(min_value=1, max_value=120),
)
def test_any_line_keeps_its_words_and_fits_when_it_hangs(
    name: str, body: list[str], width: int
) -> None:
    text = field_line(name, " ".join(body), 14)
    hung = lines_of(hang_wrap(text, width, CONSOLE))
    assert " ".join(hung).split() == text.plain.split()
    if len(hung) > 1:
        assert all(len(line) <= width for line in hung)
        start = len(hung[0]) - len(hung[0].lstrip()) + len(f"{name}:".ljust(14)) + 1
        assert all(line[:start].isspace() and line[start] != " " for line in hung[1:])


class Shows(App[None]):
    def compose(self) -> ComposeResult:
        yield Document(id="doc")


async def test_a_document_wraps_again_when_its_width_changes() -> None:
    app = Shows()
    async with app.run_test(size=(40, 10)) as pilot:
        document = app.query_one(Document)
        document.update(Text("  ").append_text(field_line("in force", POLICY, 10)))
        await pilot.pause()
        assert str(document.content).split("\n")[1] == "             nothing; valid for 1800 s"
        await pilot.resize_terminal(100, 10)
        await pilot.pause()
        assert str(document.content) == "  in force:  " + POLICY
        await pilot.resize_terminal(30, 10)
        await pilot.pause()
        assert str(document.content).split("\n")[1].startswith("             ")


class Lists(App[None]):
    CSS = "ProblemList { height: 1fr; border: none; }"

    def compose(self) -> ComposeResult:
        yield ProblemList(id="problems")


def drawn(widget: ProblemList) -> list[str]:
    width, height = widget.size
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


async def test_a_problem_s_message_and_fix_hang_under_their_start() -> None:
    hint = "a runaway loop or a surprise bill: stop the run, raise [budget] in constraints.toml"
    problem = Problem("missions/m/events.jsonl", 10, "over-budget", "usage past the budget", hint)
    app = Lists()
    async with app.run_test(size=(60, 12)) as pilot:
        problems = app.query_one(ProblemList)
        problems.show({"m": [problem]})
        await pilot.pause()
        lines = [line for line in drawn(problems) if line.strip()]
        fix = next(i for i, line in enumerate(lines) if "fix: a runaway" in line)
        start = lines[fix].index("a runaway")
        assert lines[fix + 1][:start].isspace() and lines[fix + 1][start] != " "
        await pilot.resize_terminal(40, 14)
        await pilot.pause()
        lines = [line for line in drawn(problems) if line.strip()]
        fix = next(i for i, line in enumerate(lines) if "fix: a runaway" in line)
        assert all(line[:start].isspace() for line in lines[fix + 1 : fix + 3])


def test_the_whole_text_s_style_stays_the_whole_text_s() -> None:
    """Textual draws a text's own style and a span of it differently (a theme's red):
    the wrapped text keeps it as its own."""
    text = Text("✗ error", style="bold red")
    text.append("\n").append_text(field_line("fix", POLICY, 6))
    hung = hang_wrap(text, 30, CONSOLE)
    assert len(lines_of(hung)) > 2
    assert hung.style == "bold red"
    assert not [span for span in hung.spans if span.style == "bold red"]
