"""Keys remapped under `[keys]` in hud.toml show as remapped everywhere the HUD names a
key: the footer, help and its hint, the approvals title, a request's findings, SMALL's
notes, the toasts; and a key no longer bound is named nowhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static
from textual.widgets._footer import FooterKey

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.help import HelpScreen
from hud.screens.small import SmallScreen
from tests.factory import resume
from tests.hud.conftest import until
from tests.small_support import SMALL_NOW, VALID, copy_fixture


def footer(app: HudApp) -> dict[str, str]:
    """Description -> key, as the footer shows them."""
    return {key.description: key.key_display for key in app.screen.query(FooterKey)}


def text_of(app: HudApp, selector: str) -> str:
    """The text of a Static on the current screen ('' until it is there)."""
    found = app.screen.query(selector)
    return str(found.first(Static).render()) if found else ""


def keymap(root: Path, keys: dict[str, str]) -> None:
    lines = "\n".join(f'"{binding}" = "{key}"' for binding, key in keys.items())
    (root / "hud.toml").write_text(f"schema = 1\n[keys]\n{lines}\n")


async def test_quit_remapped_follows_in_footer_help_and_hint(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    keymap(state_dir, {"quit": "Q", "help.close": "escape"})
    app = make_app(state_dir, live=False)
    exits: list[object] = []
    async with app.run_test(size=(120, 30)) as pilot:
        app.exit = lambda *args, **kwargs: exits.append(args)  # type: ignore[method-assign]
        await until(pilot, lambda: app.scanned.is_set() and footer(app).get("Quit") == "Q")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        table = app.screen.query_one("#keys")
        rows = {
            str(table.get_row_at(i)[2]): str(table.get_row_at(i)[0]) for i in range(table.row_count)
        }
        assert rows["quit"] == "Q"
        assert text_of(app, "#help-hint").startswith("esc: close")
        await pilot.press("q")  # no longer help's close key either
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "q")
        assert exits == []
        await pilot.press("Q")
        assert exits


async def test_remapped_keys_in_the_approvals_and_request_texts(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    keymap(
        state_dir,
        {
            "approvals.all": "H",
            "approvals.filter": "f",
            "request.approve": "A",
            "request.reject": "R",
            "approvals": "ctrl+a",
        },
    )
    app = make_app(state_dir, live=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.press("ctrl+a")
        await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))
        await until(pilot, lambda: "H: all" in text_of(app, "#approvals-title"))
        title = text_of(app, "#approvals-title")
        assert "⏎: review" in title and "h:" not in title
        footer_keys = {key.key_display for key in app.screen.query(FooterKey)}
        assert "f" in footer_keys and "/" not in footer_keys
        app.approvals.announce([("beta", "r1")])

        def toasts() -> list[str]:
            return [str(n.message) for n in app._notifications]

        await until(pilot, lambda: bool(toasts()))  # notify posts a message
        assert any(message.endswith("(^a: approvals)") for message in toasts()), toasts()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        screen = app.screen
        await until(pilot, lambda: screen.review is not None)
        findings = text_of(app, "#request-findings")
        assert "(A)" in findings and "(R)" in findings and "(y)" not in findings


async def test_read_only_names_no_decision_key(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    resume(state_dir, "beta").request("r2", risk="read_only", tool="ls", args={"path": "/"})
    app = make_app(state_dir, live=False, read_only=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        app.open_request("beta", "r2")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        screen = app.screen
        await until(pilot, lambda: screen.review is not None)
        findings = text_of(app, "#request-findings")
        assert "(y)" not in findings and "(n)" not in findings
        assert "read-only" in findings


async def test_small_notes_name_the_edit_keys(tmp_path: Path) -> None:
    """The key that edits constraints is `E`: the note says so (it said `e`)."""
    root = copy_fixture(VALID, tmp_path / "small")
    app = HudApp(root, clock=lambda: SMALL_NOW, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.scanned.is_set() and bool(app.summaries))
        app.open_mission(next(iter(app.summaries)))
        await until(pilot, lambda: isinstance(app.screen, SmallScreen))
        await until(pilot, lambda: "E edits" in text_of(app, "#intent-text"))
        text = text_of(app, "#intent-text")
        assert "e edits" in text and "c copies" in text
    read_only = HudApp(root, clock=lambda: SMALL_NOW, live=False, read_only=True)
    async with read_only.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: read_only.scanned.is_set() and bool(read_only.summaries))
        read_only.open_mission(next(iter(read_only.summaries)))
        await until(pilot, lambda: isinstance(read_only.screen, SmallScreen))
        await until(pilot, lambda: "read-only" in text_of(read_only, "#intent-text"))
        assert "edits" not in text_of(read_only, "#intent-text")
