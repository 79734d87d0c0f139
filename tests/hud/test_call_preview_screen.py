"""The request screen shows what a Claude Code call will do (an edit as a diff, a
command, a URL's host); the raw args are one key away; hostile text is shown, not obeyed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hud.app import HudApp
from tests.factory import mission
from tests.hud.conftest import until
from tests.hud.test_approvals import open_request, shown

EDIT = {
    "file_path": "/repo/app.py",
    "old_string": "def f():\n    return 1",
    "new_string": "def f():\n    return 2",
}


def with_request(tmp_path: Path, tool: str, args: dict[str, Any]) -> Path:
    root = tmp_path / "state"
    mission(root, "beta").request("r1", tool=tool, args=args, risk="reversible_write")
    return root


async def test_an_edit_shows_as_a_diff_and_the_raw_args_one_key_away(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(with_request(tmp_path, "Edit", EDIT))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        text = shown(app)
        assert "What it will do · Edit · r: raw args" in text
        assert "edit /repo/app.py" in text
        assert "-    return 1" in text and "+    return 2" in text
        assert '"old_string"' not in text  # the raw args are not shown meanwhile
        await pilot.press("r")
        await until(pilot, lambda: '"old_string": "def f():\\n    return 1"' in shown(app))
        assert "Args of Edit · r: what it will do" in shown(app)
        assert "+    return 2" not in shown(app)
        await pilot.press("r")
        await until(pilot, lambda: "+    return 2" in shown(app))


async def test_bash_write_and_web_fetch(tmp_path: Path, make_app: Callable[..., HudApp]) -> None:
    cases: list[tuple[str, dict[str, Any], list[str]]] = [
        (
            "Bash",
            {"command": "make clean", "description": "clean up"},
            ["$ make clean", "description: clean up"],
        ),
        (
            "Write",
            {"file_path": "/repo/n.txt", "content": "a\nb"},
            ["write /repo/n.txt · 3 bytes, 2 lines", "+ a"],
        ),
        (
            "WebFetch",
            {"url": "https://ok.example@evil.example/p", "prompt": "read"},
            ["host: evil.example", "fetch https://ok.example@evil.example/p"],
        ),
    ]
    for index, (tool, args, wanted) in enumerate(cases):
        app = make_app(with_request(tmp_path / str(index), tool, args))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_request(pilot, app)
            text = shown(app)
            assert all(part in text for part in wanted), (tool, text)


async def test_another_tool_shows_its_raw_args_and_no_toggle(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(with_request(tmp_path, "deploy", {"target": "prod"}))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_request(pilot, app)
        assert '"target": "prod"' in shown(app) and "What it will do" not in shown(app)
        assert screen.check_action("toggle_raw", ()) is False  # hidden: nothing to toggle
        await pilot.press("r")
        await pilot.pause(0.1)
        assert '"target": "prod"' in shown(app)


async def test_hostile_old_and_new_strings_are_shown_not_obeyed(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    hostile = {
        "file_path": "/repo/\u202etxt.exe",
        "old_string": "\x1b]0;pwned\x07[bold]x[/]",
        "new_string": "\x1b]52;c;cm0gLXJmIH4=\x07 [link=https://evil.example]ok[/link]\u2066",
    }
    app = make_app(with_request(tmp_path, "Edit", hostile))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        text = shown(app)
        assert not any(c in text for c in "\x1b\x07\u202e\u2066")
        assert "[bold]x[/]" in text and "[link=https://evil.example]ok[/link]" in text
        assert "⟨U+202E⟩" in text  # the bidi override is visible
        assert "cannot approve: tool or args contain control or invisible characters" in text
