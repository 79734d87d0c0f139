"""Pilot flows of what operators write: new mission, edit, invalid, conflict, history, budget."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static, TabbedContent, TextArea

import hud.acts.budget as budget
import hud.acts.missions as missions
import hud.editor as editor
from hud import saving
from hud.app import HudApp
from hud.screens.edit import (
    BudgetAdjustScreen,
    ConflictScreen,
    InvalidScreen,
    NewMissionScreen,
    TomlEditorScreen,
)
from hud.screens.history import HistoryScreen
from hud.screens.mission import MissionScreen
from store.writers.human import HumanWriter
from tests.hud.conftest import until
from widgets.mission_table import MissionTable

ALPHA_INTENT = "missions/alpha/intent.toml"
ALPHA_CONSTRAINTS = "missions/alpha/constraints.toml"


def rows(app: HudApp) -> list[str]:
    table = app.screen.query_one(MissionTable)
    return list(table.order)


def shown(app: HudApp, selector: str) -> str:
    """The plain text of a Static on the current screen."""
    return str(app.screen.query_one(selector, Static).render())


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["space" if char == " " else char for char in text])


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def no_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)


@pytest.fixture
def fake_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], Path]:
    """Set $VISUAL to a Python script with `body` (it gets the file path as argv[1]).

    A headless app cannot be suspended, so `run_external` is replaced by the same call
    without `app.suspend()`; everything else (temp file, read back) is the real path.
    Returns the log file the script may append to.
    """

    def run_without_suspend(app: HudApp, command: list[str], path: Path) -> bool:
        return subprocess.run([*command, str(path)], check=False).returncode == 0

    monkeypatch.setattr(editor, "run_external", run_without_suspend)

    def install(body: str) -> Path:
        script = tmp_path / "editor.py"
        log = tmp_path / "editor.log"
        script.write_text(
            "import sys, pathlib\n"
            f"log = pathlib.Path({str(log)!r})\n"
            "path = pathlib.Path(sys.argv[1])\n"
            "text = path.read_text()\n" + body
        )
        monkeypatch.setenv("VISUAL", f"{sys.executable} {script}")
        monkeypatch.delenv("EDITOR", raising=False)
        return log

    return install


async def open_alpha(app: HudApp, pilot: Pilot[None]) -> MissionScreen:
    await until(pilot, lambda: len(app.summaries) == 3)
    app.open_mission("alpha")
    await until(pilot, lambda: isinstance(app.screen, MissionScreen))
    screen = app.screen
    assert isinstance(screen, MissionScreen)
    await until(pilot, lambda: bool(screen.query(TabbedContent)))
    await pilot.pause()
    return screen


# ---- new mission ------------------------------------------------------------------------------


async def test_new_mission_form_creates_both_files_and_the_row_appears(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        await pilot.press("n")
        assert isinstance(app.screen, NewMissionScreen)
        await type_text(pilot, "Ship the new API!")
        assert "id: ship-the-new-api" in shown(app, "#mission-id")
        screen = app.screen
        screen.query_one("#objective", TextArea).load_text("v2 of the API in production")
        screen.query_one("#non_goals", TextArea).load_text("no UI work\n\n  no billing  \n")
        screen.query_one("#include", TextArea).load_text("api/")
        screen.query_one("#exclude", TextArea).load_text("db/migrations/")
        screen.query_one("#success_evidence", TextArea).load_text("smoke test passes on prod")
        screen.query_one("#open_decisions", TextArea).load_text("rollout date")
        screen.query_one("#limit-usd", Input).value = "25.5"
        screen.query_one("#limit-tokens", Input).value = "200,000"
        screen.query_one("#limit-wall_seconds", Input).value = "2h"
        screen.query_one("#limit-deadline", Input).value = "2025-02-01T18:00:00Z"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, NewMissionScreen))
        await until(pilot, lambda: "ship-the-new-api" in rows(app))
        await pilot.pause(0.3)  # the watcher sees the new folder: not a problem
        assert app.workspace.unknown == {}
        assert app.summaries["ship-the-new-api"].problems == 0

    folder = state_dir / "missions/ship-the-new-api"
    intent = tomllib.loads((folder / "intent.toml").read_text())
    assert intent["schema"] == 1
    assert intent["title"] == "Ship the new API!"
    assert intent["objective"] == "v2 of the API in production"
    assert intent["non_goals"] == ["no UI work", "no billing"]
    assert intent["scope"] == {"include": ["api/"], "exclude": ["db/migrations/"]}
    assert intent["success_evidence"] == ["smoke test passes on prod"]
    assert intent["open_decisions"] == ["rollout date"]
    assert intent["created_by"]
    assert intent["created_at"].tzinfo is not None
    constraints = tomllib.loads((folder / "constraints.toml").read_text())
    assert constraints["budget"] == {
        "usd": 25.5,
        "tokens": 200_000,
        "wall_seconds": 7200,
        "deadline": datetime(2025, 2, 1, 18, 0, tzinfo=UTC),
    }


async def test_new_mission_validates_as_typed_and_refuses_bad_fields(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    (state_dir / "missions/ship-it").mkdir()  # taken: the id gets a suffix
    before = files(state_dir)
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        await pilot.press("n")
        screen = app.screen
        await pilot.press("ctrl+s")  # no title
        assert "required" in shown(app, "#title-error")
        await type_text(pilot, "Ship it")
        assert "id: ship-it-2" in shown(app, "#mission-id")
        tokens = screen.query_one("#limit-tokens", Input)
        tokens.focus()
        await type_text(pilot, "1.5")
        await pilot.pause()
        assert "whole number" in shown(app, "#limit-tokens-error")
        deadline = screen.query_one("#limit-deadline", Input)
        deadline.focus()
        await type_text(pilot, "2025-02-01 18:00")
        await pilot.pause()
        assert "zone" in shown(app, "#limit-deadline-error")
        await pilot.press("ctrl+s")
        assert app.screen is screen
        assert "fix the marked fields" in shown(app, "#form-error")
        assert files(state_dir) == before
        tokens.value = "1500"
        deadline.value = ""
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "ship-it-2" in rows(app))
    assert (state_dir / "missions/ship-it-2/intent.toml").exists()
    assert not (state_dir / "missions/ship-it/intent.toml").exists()


def test_mission_ids_are_safe_unique_slugs() -> None:
    taken = {"ship-it", "ship-it-2"}
    assert missions.unique_mission_id("Ship it", taken.__contains__) == "ship-it-3"
    assert missions.mission_slug("  Déploy ÜBER  service!! ") == "deploy-uber-service"
    assert missions.mission_slug("../../etc/passwd") == "etc-passwd"
    assert missions.mission_slug("✓✓✓") == "mission"
    assert len(missions.mission_slug("x" * 300)) <= 64


# ---- edit -------------------------------------------------------------------------------------


async def test_edit_intent_in_external_editor_saves_as_written_with_history(
    state_dir: Path, make_app: Callable[..., HudApp], fake_editor: Callable[[str], Path]
) -> None:
    fake_editor(
        "text = text.replace('objective = \"an objective\"',"
        " '# why: the old one was vague\\nobjective = \"a sharper objective\"  # reviewed')\n"
        "path.write_text(text)\n"
    )
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")
        history = state_dir / "missions/alpha/history/intent.r1.toml"
        await until(pilot, history.exists)
        await until(pilot, lambda: "sharper" in (app.workspace.missions["alpha"].intent.text or ""))
        await pilot.pause(0.3)  # the watcher sees history/ appear: not a problem
        assert app.workspace.unknown == {}
    text = (state_dir / ALPHA_INTENT).read_text()
    assert '# why: the old one was vague\nobjective = "a sharper objective"  # reviewed\n' in text
    data = tomllib.loads(text)
    assert data["revision"] == 2
    assert data["edited_by"]
    assert "an objective" in history.read_text()


async def test_unchanged_edit_writes_nothing(
    state_dir: Path, make_app: Callable[..., HudApp], fake_editor: Callable[[str], Path]
) -> None:
    log = fake_editor("log.write_text('ran')\n")
    before = files(state_dir)
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("E")
        await until(pilot, log.exists)
        await pilot.pause(0.2)
        assert isinstance(app.screen, MissionScreen)
    assert files(state_dir) == before


async def test_editor_that_fails_drops_the_edit(
    state_dir: Path, make_app: Callable[..., HudApp], fake_editor: Callable[[str], Path]
) -> None:
    log = fake_editor("path.write_text('garbage = ['); log.write_text('ran'); sys.exit(1)\n")
    before = files(state_dir)
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")
        await until(pilot, log.exists)
        await pilot.pause(0.2)
        assert isinstance(app.screen, MissionScreen)
    assert files(state_dir) == before


async def test_invalid_external_edit_names_line_and_column_and_reopens_with_text(
    state_dir: Path, make_app: Callable[..., HudApp], fake_editor: Callable[[str], Path]
) -> None:
    log = fake_editor(
        "runs = (log.read_text() if log.exists() else '') + 'x'\n"
        "log.write_text(runs)\n"
        "if 'BROKEN' in text:\n"
        "    text = text.replace('oops = = BROKEN', 'note = \"fixed\"')\n"
        "else:\n"
        "    text = text + 'oops = = BROKEN\\n'\n"
        "path.write_text(text)\n"
    )
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, InvalidScreen))
        lines = (state_dir / ALPHA_INTENT).read_text().count("\n")
        message = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert f"line {lines + 1}, column 8" in message
        assert "oops = = BROKEN" in message  # the excerpt shows the offending line
        assert not (state_dir / "missions/alpha/history").exists()
        await pilot.press("e")  # back into the editor: it gets the broken text again
        await until(pilot, lambda: (state_dir / "missions/alpha/history").exists())
    assert log.read_text() == "xx"
    data = tomllib.loads((state_dir / ALPHA_INTENT).read_text())
    assert data["note"] == "fixed" and data["revision"] == 2


async def test_in_app_editor_when_no_editor_is_set_and_invalid_text_is_kept(
    state_dir: Path, make_app: Callable[..., HudApp], no_editor: None
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        area = app.screen.query_one(TextArea)
        broken = area.text.replace("usd = 10.0", 'usd = "ten"')
        area.load_text(broken)
        await pilot.press("ctrl+s")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, TomlEditorScreen)
                and app.screen.query_one("#editor-error", Static).display
            ),
        )
        error = shown(app, "#editor-error")
        assert "budget.usd" in error and "line" in error and "column" in error
        area = app.screen.query_one(TextArea)
        assert area.text == broken  # the text is kept for re-editing
        await pilot.press("escape")  # an unsaved edit: the first esc only warns
        assert isinstance(app.screen, TomlEditorScreen) and app.screen.query_one(TextArea) is area
        assert area.cursor_location == (broken.splitlines().index('usd = "ten"'), 0)
        area.load_text(broken.replace('usd = "ten"', "usd = 12.5"))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
    data = tomllib.loads((state_dir / ALPHA_CONSTRAINTS).read_text())
    assert data["budget"]["usd"] == 12.5 and data["revision"] == 2
    assert (state_dir / "missions/alpha/history/constraints.r1.toml").exists()


async def test_external_editor_falls_back_to_in_app_when_terminal_cannot_suspend(
    state_dir: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISUAL", "definitely-not-run")
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")  # headless: app.suspend() is not supported
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))


async def test_the_editor_copy_is_never_made_inside_the_state_directory(
    state_dir: Path,
    make_app: Callable[..., HudApp],
    fake_editor: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HOME and every temp folder inside STATE_DIR: no copy anywhere there (the old code
    fell back to HOME); the in-app editor instead."""
    log = fake_editor("log.write_text(str(path))\n")
    monkeypatch.setenv("HOME", str(state_dir))
    monkeypatch.setattr(tempfile, "tempdir", str(state_dir / "missions"))
    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(saving, "TEMP_FALLBACKS", (state_dir,))
    before = files(state_dir)
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        assert any("no folder for the editor's copy" in n.message for n in app._notifications)
        assert not log.exists()
        assert files(state_dir) == before
        assert [p for p in state_dir.rglob("*") if "hud-edit" in p.name] == []
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))


# ---- conflict ----------------------------------------------------------------------------------


async def test_conflict_shows_theirs_against_yours_and_re_edits_on_top_of_theirs(
    state_dir: Path, make_app: Callable[..., HudApp], no_editor: None
) -> None:
    app = make_app(state_dir)
    path = state_dir / ALPHA_INTENT
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        area = app.screen.query_one(TextArea)
        mine = area.text.replace('"an objective"', '"my objective"')
        area.load_text(mine)
        theirs = path.read_text().replace("Migrate the database", "Migrate the database NOW")
        path.write_text(theirs)  # another operator saved meanwhile
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        diff = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert '-title = "Migrate the database NOW"' in diff
        assert '+title = "Migrate the database"' in diff
        assert '-objective = "an objective"' in diff
        assert '+objective = "my objective"' in diff
        assert path.read_text() == theirs
        await pilot.press("t")  # re-edit theirs
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        area = app.screen.query_one(TextArea)
        assert area.text == theirs
        area.load_text(theirs.replace('"an objective"', '"my objective"'))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
    data = tomllib.loads(path.read_text())
    assert data["title"] == "Migrate the database NOW"
    assert data["objective"] == "my objective"
    kept = state_dir / "missions/alpha/history/intent.r1.toml"
    assert kept.read_text() == theirs


async def test_conflict_can_be_dropped(
    state_dir: Path, make_app: Callable[..., HudApp], no_editor: None
) -> None:
    app = make_app(state_dir)
    path = state_dir / ALPHA_INTENT
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, TomlEditorScreen))
        area = app.screen.query_one(TextArea)
        area.load_text(area.text + "# mine\n")
        path.write_text(path.read_text() + "# theirs\n")
        theirs = path.read_text()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
    assert path.read_text() == theirs
    assert not (state_dir / "missions/alpha/history").exists()


# ---- history -----------------------------------------------------------------------------------


def two_revisions(root: Path) -> None:
    """alpha's intent edited by bob: r1 (the fixture's) kept, r2 current."""
    path = root / ALPHA_INTENT
    old = path.read_text()
    bob = HumanWriter(root, "bob", "local", clock=lambda: datetime(2025, 1, 2, 9, 30, tzinfo=UTC))
    import hashlib

    bob.replace(
        ALPHA_INTENT,
        old.replace('"an objective"', '"zero downtime"'),
        hashlib.sha256(old.encode()).hexdigest(),
    )


async def test_history_lists_revisions_with_who_and_when_and_diffs_them(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    two_revisions(state_dir)
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: len(screen.revisions) == 3)
        assert list(screen.revisions) == [
            ALPHA_INTENT,
            "missions/alpha/history/intent.r1.toml",
            ALPHA_CONSTRAINTS,
        ]
        table = screen.table
        who = table.get_row(ALPHA_INTENT)
        assert "edited by bob" in who[3].plain and "2025-01-02 09:30:00Z" in who[4].plain
        # the cursor row (current intent) against its predecessor
        diff = shown(app, "#diff-text")
        assert '-objective = "an objective"' in diff
        assert '+objective = "zero downtime"' in diff
        assert "intent r1 → intent r2" in shown(app, "#diff-title")
        # the first revision shows as a whole
        await pilot.press("j")
        assert "first revision" in shown(app, "#diff-title")
        # mark two rows: their diff, older first
        await pilot.press("space", "k", "space")
        assert screen.marked == ["missions/alpha/history/intent.r1.toml", ALPHA_INTENT]
        assert "intent r1 → intent r2 (current)" in shown(app, "#diff-title")
        await pilot.press("escape")
        assert isinstance(app.screen, MissionScreen)


async def test_history_follows_a_new_revision_live(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: len(screen.revisions) == 2)
        two_revisions(state_dir)
        await until(pilot, lambda: len(screen.revisions) == 3)


# ---- budget -------------------------------------------------------------------------------------


async def test_budget_adjust_changes_one_line_through_the_checked_path(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    path = state_dir / ALPHA_CONSTRAINTS
    path.write_text(path.read_text().replace("usd = 10.0", "usd = 10.0  # approved by finance"))
    before = path.read_text()
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_alpha(app, pilot)
        await pilot.press("b")  # not on the Budget tab: nothing
        await pilot.pause()
        assert app.screen is screen
        screen.action_tab("budget")
        await pilot.pause()
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, BudgetAdjustScreen))
        await pilot.press("enter")  # the first limit: usd
        field = app.screen.query_one("#value", Input)
        assert field.value == "10" and field.has_focus
        field.value = "-3"
        await pilot.pause()
        assert "0 or more" in shown(app, "#value-error")
        await pilot.press("enter")
        assert isinstance(app.screen, BudgetAdjustScreen)
        field.value = "15"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        await until(pilot, lambda: (state_dir / "missions/alpha/history").exists())
    after = path.read_text()
    assert "usd = 15  # approved by finance\n" in after
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert sorted(changed) == sorted(
        [
            "usd = 15  # approved by finance",
            "revision = 2",
            *[line for line in changed if line.startswith(("edited_by", "edited_at"))],
        ]
    )
    assert tomllib.loads(after)["budget"]["tokens"] == 100_000
    assert (state_dir / "missions/alpha/history/constraints.r1.toml").read_text() == before


async def test_budget_adjust_conflict_reapplies_on_top_of_theirs(
    state_dir: Path, make_app: Callable[..., HudApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = state_dir / ALPHA_CONSTRAINTS
    app = make_app(state_dir)
    real = budget.set_table_value

    def racing(text: str, table: str, key: str, value: object) -> str | None:
        if "steps = 99" not in path.read_text():  # someone saves while the dialog is open
            path.write_text(path.read_text().replace("steps = 20", "steps = 99"))
        return real(text, table, key, value)

    monkeypatch.setattr(budget, "set_table_value", racing)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_alpha(app, pilot)
        screen.action_tab("budget")
        await pilot.pause()
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, BudgetAdjustScreen))
        await pilot.press("down", "enter")  # tokens
        app.screen.query_one("#value", Input).value = "5000"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        diff = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "-steps = 99" in diff and "+steps = 20" in diff
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
    data = tomllib.loads(path.read_text())
    assert data["budget"] == {"usd": 10.0, "tokens": 5000, "steps": 99}


# ---- read-only ----------------------------------------------------------------------------------


async def test_read_only_reaches_no_write_path_but_history_stays(
    state_dir: Path, make_app: Callable[..., HudApp], no_editor: None
) -> None:
    two_revisions(state_dir)
    before = files(state_dir)
    app = make_app(state_dir, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(rows(app)) == 3)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, NewMissionScreen)
        screen = await open_alpha(app, pilot)
        screen.action_tab("budget")
        await pilot.pause()
        for key in ("e", "E", "b", "plus"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key
        keys = {binding.action for _, binding, enabled, _ in screen.active_bindings.values()}
        assert "edit_intent" not in keys or not screen.check_action("edit_intent", ())
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await until(pilot, lambda: "zero downtime" in shown(app, "#diff-text"))
    assert files(state_dir) == before


async def test_a_constraints_edit_below_the_workspace_floor_is_refused(
    state_dir: Path, make_app: Callable[..., HudApp], fake_editor: Callable[[str], Path]
) -> None:
    """Issue 21: the HUD saves no constraints below policy.toml, naming field and floor."""
    (state_dir / "policy.toml").write_text(
        "schema = 1\n[approval]\nnever_auto = ['external_write', 'irreversible']\n"
    )
    fake_editor("path.write_text(\"schema = 1\\n[approval]\\nauto = ['external_write']\\n\")\n")
    before = (state_dir / ALPHA_CONSTRAINTS).read_bytes()
    app = make_app(state_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_alpha(app, pilot)
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, InvalidScreen))
        message = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "below the workspace floor: [approval] auto includes external_write" in message
        assert "never_auto = ['external_write', 'irreversible']" in message
    assert (state_dir / ALPHA_CONSTRAINTS).read_bytes() == before
