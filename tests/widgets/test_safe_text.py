"""Agent text is data: hostile strings come out visible and inert."""

from __future__ import annotations

import io
import re
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from widgets.safe_text import CONTROL, INVISIBLE, safe, safe_str

DANGEROUS_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
EXTRA_INVISIBLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
EXTRA_INVISIBLE |= set(range(0x180B, 0x1810)) | set(range(0xFE00, 0xFE10))
EXTRA_INVISIBLE |= set(range(0xE0100, 0xE01F0))


def dangerous(char: str, multiline: bool = False) -> bool:
    if multiline and char == "\n":
        return False
    return unicodedata.category(char) in DANGEROUS_CATEGORIES or ord(char) in EXTRA_INVISIBLE


def assert_inert(text: Text, multiline: bool = False) -> None:
    bad = [char for char in text.plain if dangerous(char, multiline)]
    assert bad == [], bad


HOSTILE = [
    pytest.param("\x1b]52;c;ZXZpbA==\x07", "␛]52;c;ZXZpbA==␇", id="osc52-clipboard"),
    pytest.param(
        "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\",
        "␛]8;;http://evil␛\\click␛]8;;␛\\",
        id="osc8-hyperlink",
    ),
    pytest.param("\x1b]0;pwned\x07", "␛]0;pwned␇", id="osc0-title"),
    pytest.param("\x1b[2J", "␛[2J", id="csi-clear"),
    pytest.param("\x9b2J", "⟨U+009B⟩2J", id="c1-csi-clear"),
    pytest.param("\x9d0;pwned\x9c", "⟨U+009D⟩0;pwned⟨U+009C⟩", id="c1-osc-st"),
    pytest.param("\x1bP+q544e\x1b\\", "␛P+q544e␛\\", id="dcs"),
    pytest.param("\x1bc", "␛c", id="esc-reset"),
    pytest.param("\x1b(0lqk", "␛(0lqk", id="esc-charset"),
    pytest.param("\x1b[31mred\x1b[0m", "␛[31mred␛[0m", id="sgr"),
    pytest.param("\x1b]0;unterminated", "␛]0;unterminated", id="osc-unterminated"),
    pytest.param("[link=https://evil]x[/link]", "[link=https://evil]x[/link]", id="link-markup"),
    pytest.param("[/]", "[/]", id="close-markup"),
    pytest.param("[bold]x", "[bold]x", id="bold-markup"),
    pytest.param(
        ":warning: [@click=app.quit]q[/]", ":warning: [@click=app.quit]q[/]", id="actions"
    ),
    pytest.param("abc\u202edcba", "abc⟨U+202E⟩dcba", id="rlo"),
    pytest.param(
        "a\u2066b\u2069\u200e\u200f\u061c", "a⟨U+2066⟩b⟨U+2069⟩⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩", id="bidi"
    ),
    pytest.param("rm\u200b -rf", "rm⟨U+200B⟩ -rf", id="zwsp"),
    pytest.param("\ufeff\u00ad\u2060\u180e", "⟨U+FEFF⟩⟨U+00AD⟩⟨U+2060⟩⟨U+180E⟩", id="invisible"),
    pytest.param("ok\U000e0041\U000e0042", "ok⟨U+E0041⟩⟨U+E0042⟩", id="tag-smuggling"),
    pytest.param("x\ud800", "x⟨U+D800⟩", id="lone-surrogate"),
    pytest.param("a\x00b\x07c\x08d\x7f", "a␀b␇c␈d␡", id="c0-and-del"),
    pytest.param("one\r\ntwo\tx", "one␍␤two␉x", id="crlf-tab"),
    pytest.param("line\u2028sep\x85", "line⟨U+2028⟩sep⟨U+0085⟩", id="line-separators"),
]


@pytest.mark.parametrize(("raw", "shown"), HOSTILE)
def test_hostile_strings_are_shown_not_obeyed(raw: str, shown: str) -> None:
    text = safe(raw)
    assert text.plain == shown
    assert_inert(text)
    assert "\x1b" not in text.plain and "\x07" not in text.plain
    assert safe_str(raw) == shown


def test_plain_text_passes_through_unstyled() -> None:
    text = safe("deploy v1.2 → prod: naïve café 日本 ✓")
    assert text.plain == "deploy v1.2 → prod: naïve café 日本 ✓"
    assert text.spans == []


def test_escape_sequence_is_one_control_span() -> None:
    text = safe("a\x1b]8;;http://evil\x1b\\b")
    assert text.plain == "a␛]8;;http://evil␛\\b"
    assert [(span.start, span.end, span.style) for span in text.spans] == [(1, 19, CONTROL)]


def test_invisible_marker_has_its_own_style() -> None:
    text = safe("a\u202eb\x85")
    assert [(span.start, span.end, span.style) for span in text.spans] == [
        (1, 9, INVISIBLE),
        (10, 18, CONTROL),
    ]


def test_newline_kept_only_when_multiline() -> None:
    assert safe("a\nb").plain == "a␤b"
    assert safe("a\nb", multiline=True).plain == "a\nb"
    assert safe("a\r\nb\x1b[2J\n", multiline=True).plain == "a␍\nb␛[2J\n"


def test_markup_is_never_interpreted_when_rendered() -> None:
    console = Console(record=True, width=80, force_terminal=True, file=io.StringIO())
    console.print(safe("[bold red]x[/] [link=https://evil]y[/link]"))
    assert console.export_text() == "[bold red]x[/] [link=https://evil]y[/link]\n"
    assert "\x1b]8" not in console.export_text(styles=True)


def test_every_dangerous_code_point_is_caught() -> None:
    missed = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if dangerous(chr(code)) and safe(chr(code)).plain == chr(code)
    ]
    assert missed == []


CONSOLE_SGR = re.compile(r"\x1b\[[0-9;]*m")
TRICKY = "\x1b\x07\x9b\x9d\x9c\x90[]\\;/0123mJ\n\r\t\u202e\u200b\ufeff\u2028\ud800"
any_text = st.text(
    st.one_of(st.characters(exclude_categories=()), st.sampled_from(TRICKY)), max_size=80
)


@given(any_text, st.booleans(), st.integers(min_value=0, max_value=40))
def test_no_dangerous_character_survives(raw: str, multiline: bool, cut: int) -> None:
    text = safe(raw, multiline=multiline)
    assert_inert(text, multiline)
    text.truncate(cut)
    assert_inert(text, multiline)


@given(any_text)
def test_rendered_output_carries_only_the_consoles_own_escapes(raw: str) -> None:
    out = io.StringIO()
    console = Console(
        record=True, width=60, force_terminal=True, color_system="truecolor", file=out
    )
    console.print(safe(raw))
    assert "\x1b" not in console.export_text(styles=False)
    assert "\x1b" not in CONSOLE_SGR.sub("", out.getvalue())
