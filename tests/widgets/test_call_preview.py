"""What a Claude Code call will do, from its args alone: diffs, content, commands, hosts;
agent text never styles, moves or hides anything; other shapes fall back to raw args."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from widgets.call_preview import MAX_DIFFED, MAX_LINES, call_preview

HOSTILE = [
    "\x1b]0;pwned\x07",
    "\x1b[2J\x1b[H",
    "\x1b]52;c;cm0gLXJmIH4=\x07",
    "[bold red]x[/] [link=https://evil.example]ok[/link] [/]",
    "a\u202eb\u2066c\u2069",
    "zero\u200bwidth",
    "cr\rhidden",
    "line\u2028sep",
    "\x00\x7f\x9b",
]


def plain(tool: str, args: dict[str, Any]) -> str:
    shown = call_preview(tool, args)
    assert shown is not None
    return shown.plain


def test_an_edit_is_a_diff_under_its_path() -> None:
    shown = plain(
        "Edit",
        {
            "file_path": "/repo/app.py",
            "old_string": "def f():\n    return 1\n",
            "new_string": "def f():\n    return 2\n",
        },
    )
    lines = shown.split("\n")
    assert lines[0] == "edit /repo/app.py"
    assert "-    return 1" in lines and "+    return 2" in lines and " def f():" in lines
    assert lines[1].startswith("@@")


def test_replace_all_is_said() -> None:
    args = {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}
    assert plain("Edit", args).split("\n")[0] == "edit a · every occurrence"


def test_a_multi_edit_is_a_diff_per_edit_in_order() -> None:
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]
    shown = plain("MultiEdit", {"file_path": "/f", "edits": edits}).split("\n")
    assert shown[0] == "edit /f · 2 edits, in order"
    assert shown.index("edit 1 of 2") < shown.index("-a") < shown.index("+b")
    assert shown.index("edit 2 of 2") < shown.index("-c") < shown.index("+d")


def test_a_write_is_its_content_with_path_and_size() -> None:
    shown = plain("Write", {"file_path": "/repo/new.txt", "content": "héllo\nworld"})
    lines = shown.split("\n")
    assert lines[0].startswith("write /repo/new.txt · 12 bytes, 2 lines")
    assert lines[1:] == ["+ héllo", "+ world"]


def test_bash_is_the_command_with_its_description() -> None:
    shown = plain(
        "Bash",
        {"command": "rm -rf build &&\nmake", "description": "clean and build", "timeout": 60000},
    )
    assert shown.split("\n") == [
        "description: clean and build",
        "$ rm -rf build &&",
        "  make",
        "timeout 60000 ms",
    ]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://docs.example.com/a?b=c", "host: docs.example.com"),
        ("https://good.example@evil.example/x", "host: evil.example"),  # userinfo is no host
        ("https://\u0430pple.com/", "host: \u0430pple.com = xn--pple-43d.com"),  # Cyrillic a
        ("not a url", "host: none: the URL does not parse"),
    ],
)
def test_web_fetch_sets_the_host_apart(url: str, host: str) -> None:
    shown = call_preview("WebFetch", {"url": url, "prompt": "summarize"})
    assert shown is not None
    lines = shown.plain.split("\n")
    assert lines == [host, f"fetch {url}", "prompt: summarize"]
    if "none" not in host:  # the host itself is emphasised
        start = len("host: ")
        assert any(span.start == start and "bold" in str(span.style) for span in shown.spans)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("deploy", {"target": "prod"}),
        ("Edit", {"file_path": "/f", "old_string": 1, "new_string": "x"}),
        ("Edit", {"file_path": "/f", "old_string": "x"}),
        ("MultiEdit", {"file_path": "/f", "edits": ["x"]}),
        ("Write", {"file_path": ["/f"], "content": "x"}),
        ("Bash", {"description": "no command"}),
        ("WebFetch", {"url": None}),
        ("Edit", ["not", "an", "object"]),
    ],
)
def test_other_shapes_fall_back_to_the_raw_args(tool: str, args: Any) -> None:
    assert call_preview(tool, args) is None


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_strings_are_shown_not_obeyed(hostile: str) -> None:
    cases = [
        ("Edit", {"file_path": hostile, "old_string": hostile, "new_string": "x" + hostile}),
        ("MultiEdit", {"file_path": hostile, "edits": [{"old_string": hostile, "new_string": ""}]}),
        ("Write", {"file_path": hostile, "content": hostile}),
        ("Bash", {"command": hostile, "description": hostile}),
        ("WebFetch", {"url": f"https://{hostile}/", "prompt": hostile}),
    ]
    for tool, args in cases:
        shown = call_preview(tool, args)
        assert shown is not None, tool
        text = shown.plain
        assert not any(c in text for c in "\x1b\x07\x00\x7f\x9b\r\u202e\u2066\u2069\u200b\u2028")
        if hostile.startswith("[bold"):
            assert "[bold red]x[/]" in text  # markup shown, never parsed


@given(
    old=st.text(max_size=200),
    new=st.text(max_size=200),
    path=st.text(max_size=40),
)
def test_any_edit_renders_and_hides_nothing(old: str, new: str, path: str) -> None:
    shown = call_preview("Edit", {"file_path": path, "old_string": old, "new_string": new})
    assert shown is not None
    assert not any(c in shown.plain for c in "\x1b\x07\r\u202e\u2066")


def test_long_inputs_are_capped() -> None:
    content = "\n".join(f"line {i}" for i in range(MAX_LINES + 50))
    shown = plain("Write", {"file_path": "/f", "content": content}).split("\n")
    assert len(shown) == MAX_LINES + 2 and "50 more content lines" in shown[-1]
    huge = "\n".join(["x"] * MAX_DIFFED)
    shown = plain("Edit", {"file_path": "/f", "old_string": huge, "new_string": huge + "y"})
    assert "too long to diff here, see the raw args" in shown
