"""Hostile agent text through every display sink, in the running HUD (Pilot).

Each hostile string (Rich and content markup, ANSI CSI and OSC, C1 CSI and OSC, a bidi
override, a zero-width space, NUL, a very long one) is written into a mission's title,
step titles, step reasons, an error, evidence, the handoff, a request's tool and
summary, a decision's reason and author, a file name, the state directory's name and
the current folder's. Then the HUD is driven through every sink of `hud.display.SINKS`
that can hold agent text: the header, the command palette (discovery and search), the
toasts (a mission needing you, a new request, an export), screen titles, every mission
tab, the request and problems screens. The app keeps running, the text is shown as
`plain()` shows it, and nothing on screen is a raw control, a link or an action.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from hud.app import HudApp
from hud.display import plain
from hud.screens.approvals import RequestScreen
from hud.screens.mission import MissionScreen
from hud.screens.mission_views import TABS
from hud.screens.problems import ProblemsScreen
from tests.factory import T0, Mission, line_bytes, mission, stamp
from tests.hud.conftest import until
from tests.widgets.test_safe_text import dangerous
from widgets.header import HudHeader

HOSTILE = {
    "close-tag": "release [/bold] notes",
    "link": "[link=http://evil.example]notes[/link]",
    "click": "[@click=app.quit]quit[/]",
    "csi-osc": "\x1b[2J\x1b]0;pwned\x07 title",
    "osc8": "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",
    "c1": "c1 \x9b2J \x9d0;x\x9c end",
    "bidi": "rlo \u202eevil",
    "zero-width": "zero\u200bwidth",
    "nul": "nul \x00 byte",
    "long": "long " + "[b]x" * 2000 + " [/]",
}


def file_name(text: str) -> str:
    """`text` as a file name: no NUL or slash, at most 200 bytes."""
    name = text.replace("\x00", "").replace("/", "")
    return name.encode()[:200].decode(errors="ignore") or "x"


def hostile_state(base: Path, text: str) -> Path:
    """A state directory named after `text`, with `text` in every agent-written field."""
    root = base / f"state {file_name(text)}"
    root.mkdir()
    m1 = mission(root, "m1", text)
    plan = {
        "schema": 1,
        "version": 1,
        "created_at": stamp(T0),
        "author": text,
        "steps": [{"id": "s1", "title": text}, {"id": "s2", "title": text}],
    }
    (m1.dir / "plan/v1.json").write_bytes(line_bytes(plan))
    m1.step("s1", "running", reason=text)
    m1.event("error", message=text, step="s1")
    m1.append(
        "evidence", id="e1", step="s1", observed=text, method=text, proves=text, verdict="pass"
    )
    m1.handoff(summary=text, blockers=[text], next_steps=[text])
    m1.request("r1", tool=text, summary=text)
    m1.request("r0", tool="deploy", summary=text)
    m1.decision("r0", "reject", reason=text, decided_by=text)
    (m1.dir / file_name(text)).write_text("stray")
    mission(root, "m2", text).step("s1", "running")
    return root


def screen_problems(app: HudApp) -> list[str]:
    """What on screen is not plain text: raw controls, links, click actions."""
    found = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            found += [repr(c) for c in segment.text if dangerous(c)]
            style = segment.style
            if style is not None and (style.link or "@click" in (style.meta or {})):
                found.append(f"link or action on {segment.text!r}")
    return found


def toasts(app: HudApp) -> list[str]:
    """Every toast as Textual holds it (after HudApp.notify); none renders markup."""
    assert all(not n.markup for n in app._notifications)
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def palette_prompts(app: HudApp, pilot: Pilot[None], query: str) -> list[str]:
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*query)
    commands = app.screen.query_one(CommandList)
    await until(pilot, lambda: any("m1" in str(o.prompt) for o in commands.options))
    shown = [str(option.prompt) for option in commands.options]
    assert screen_problems(app) == []
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, CommandPalette))
    return shown


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.slow
async def test_hostile_text_reaches_every_sink_visible_and_inert(
    text: str,
    tmp_path: Path,
    make_app: Callable[..., HudApp],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = hostile_state(tmp_path, text)
    cwd = tmp_path / f"cwd {file_name(text)}"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    shown = plain(text, multiline=True)
    app = make_app(root)
    async with app.run_test(size=(120, 40), notifications=True, tooltips=True) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and len(app.summaries) == 2)
        await pilot.pause(0.1)
        header = app.screen.query_one(HudHeader)._shown
        assert header is not None and header.plain.endswith(plain(root.name)[-20:])
        assert screen_problems(app) == []

        for query in ("", "m1"):  # discovery, then search
            prompts = await palette_prompts(app, pilot, query)
            assert any(plain(f"Mission: m1 {text}") in p for p in prompts), prompts

        Mission(root, "m2").request("r2", tool=text, summary=text)  # m2 now needs you
        await until(pilot, lambda: len(toasts(app)) >= 2)
        assert f"needs you: m2 needs you: {shown}" in toasts(app)
        assert f"New approval request: m2/r2: {shown} · external_write (a: approvals)" in toasts(
            app
        )

        app.open_mission("m1")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        screen = app.screen
        screen.sub_title = text
        assert screen.sub_title == plain(text)
        await until(pilot, lambda: bool(screen.query(TabbedContent)))
        for tab in TABS:  # set, not pressed: a press waits out the tab animation
            screen.query_one(TabbedContent).active = tab.id
            await pilot.pause(0.05)
            assert screen_problems(app) == [], tab.id
        await pilot.press("x")
        export = cwd / "m1-handoff.md"
        await until(pilot, lambda: any("handoff written to" in t for t in toasts(app)))
        assert f": handoff written to {plain(export)}" in toasts(app)
        assert "# Handoff: " in export.read_text()

        for opened in (RequestScreen("m1", "r1"), RequestScreen("m1", "r0"), ProblemsScreen()):
            await app.push_screen(opened)
            await pilot.pause(0.1)
            assert app.screen is opened and screen_problems(app) == [], type(opened).__name__
        assert app.is_running
        assert all(not any(dangerous(c, True) for c in t) for t in toasts(app))


def bottom_line_shows(app: HudApp, text: str) -> Callable[[], bool]:
    """Whether the screen's last line (the footer) holds `text`: polled, as the footer may
    be drawn after the scan."""
    return lambda: text in app.screen._compositor.render_strips()[-1].text


async def test_hostile_keys_in_hud_toml_show_visibly_in_the_footer(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    for key in ("\x1b[2J", "\u202e", "[/bold]", "\x9b1m"):
        keys = f'"overview.filter" = {json.dumps(key)}'
        (state_dir / "hud.toml").write_text(f"schema = 1\n[keys]\n{keys}\n", "utf-8")
        app = make_app(state_dir)
        async with app.run_test(size=(120, 24)) as pilot:
            await until(pilot, app.scanned.is_set)
            await pilot.pause(0.1)
            assert screen_problems(app) == [], repr(key)
            [binding] = [
                active.binding
                for active in app.screen.active_bindings.values()
                if active.binding.id == "overview.filter"
            ]
            shown = app.get_key_display(binding)
            assert shown == plain(shown)
            await until(pilot, bottom_line_shows(app, f"{shown} Filter"))
