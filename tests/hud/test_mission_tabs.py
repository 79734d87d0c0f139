"""Pilot tests of the mission screen's tabs over a state directory an agent wrote."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import TabbedContent

from hud.app import HudApp
from hud.screens.mission import MissionScreen
from store.writers.agent import AgentWriter
from tests.factory import T0, Mission, toml_text
from tests.hud.conftest import until
from tests.store.test_hostile_files import MAKERS, PUT_IN_PLACE
from widgets.mission_table import MissionTable
from widgets.tabs.execution import ExecutionView

HOSTILE = "\x1b]52;c;ZXZpbA==\x07 [link=x]y[/]"
OSC52_SHOWN = "␛]52;c;ZXZpbA==␇"

CONSTRAINTS = """
[[rule]]
id = "no-prod"
rule = "Never write to prod without approval"
severity = "error"

[budget]
usd = 10.0
tokens = 100000
steps = 20
deadline = 2025-01-01T18:00:00Z

[approval]
auto = ["read_only"]
valid_for_seconds = 3600

[tools]
allow = ["psql"]
deny = ["rm"]
"""


TAB_TEXTS = [
    "Migrate",
    "v2 (latest)",
    "following",
    "chain intact",
    "deadline",
    "Copied",
    "● LIVE",
    "Seven questions",
]
"""What each tab (keys 1 to 8) shows of mission alpha."""


def build(root: Path) -> AgentWriter:
    """Mission `alpha`: intent, constraints, plan v1 and v2, events, evidence, handoff."""
    human = Mission(root, "alpha")
    human.intent(
        "Migrate the database",
        non_goals=["No schema redesign"],
        open_decisions=["Which window?"],
        created_by="alice",
    )
    (human.dir / "constraints.toml").write_text(toml_text({"schema": 1}) + CONSTRAINTS)
    moments = iter(T0 + timedelta(seconds=n) for n in range(10_000))
    agent = AgentWriter(root, "alpha", "agent-1", clock=lambda: next(moments))
    agent.write_plan(
        [
            {"id": "s1", "title": "Dump schema"},
            {"id": "s2", "title": "Copy rows", "risk": "reversible_write"},
        ]
    )
    agent.write_plan(
        [
            {"id": "s1", "title": "Dump schema"},
            {"id": "s2", "title": "Copy rows in batches", "risk": "external_write"},
            {"id": "s3", "title": "Switch traffic", "risk": "irreversible"},
        ],
        reason="copy in batches; add the cutover",
    )
    agent.step("s1", "running", 2, HOSTILE)
    agent.attempt("s1", 1, "started", "pg_dump", {"db": "main"})
    agent.attempt("s1", 1, "finished", "pg_dump", outcome="ok")
    agent.evidence(
        "s1", "dump written", "pg_dump", "schema captured", artifact=b"dump", artifact_name="d.sql"
    )
    agent.step("s1", "succeeded", 2)
    agent.usage(2.5, 25_000, 3)
    agent.step("s2", "outcome_unknown", 2, "connection dropped")
    agent.write_handoff(
        "Copied half the rows.",
        plan_version=2,
        current_step="s2",
        verified=["ev-1"],
        blockers=["db unreachable"],
        next_steps=["check the copy"],
    )
    return agent


SLOW = 15.0
"""Seconds to wait for the screen: generous, a loaded CI machine is slow."""


def screen_text(app: HudApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def active_tab(app: HudApp) -> str:
    return app.screen.query_one(TabbedContent).active


async def open_alpha(pilot: Any, app: HudApp) -> None:
    await until(pilot, lambda: bool(app.screen.query(MissionTable)), timeout=SLOW)
    await until(pilot, lambda: app.screen.query_one(MissionTable).row_count == 1, timeout=SLOW)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, MissionScreen), timeout=SLOW)


async def show_tab(pilot: Any, app: HudApp, key: str, expected: str) -> str:
    await pilot.press(key)
    try:
        await until(pilot, lambda: expected in screen_text(app), timeout=SLOW)
    except AssertionError:
        raise AssertionError(f"{expected!r} not on the screen:\n{screen_text(app)}") from None
    return screen_text(app)


ORIGINAL_REFRESH = Widget.refresh


def recording(seen: list[Widget]) -> Callable[..., Any]:
    """Widget.refresh, noting which widget asked to be redrawn."""

    def refresh(self: Widget, *args: Any, **kwargs: Any) -> Any:
        seen.append(self)
        return ORIGINAL_REFRESH(self, *args, **kwargs)

    return refresh


@pytest.fixture
def agent_dir(tmp_path: Path) -> Iterator[tuple[Path, AgentWriter]]:
    root = tmp_path / "state"
    root.mkdir()
    yield root, build(root)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_every_tab_shows_its_content(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp], size: tuple[int, int]
) -> None:
    root, _ = agent_dir
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await open_alpha(pilot, app)
        shown = await show_tab(pilot, app, "1", "Migrate the database")
        assert active_tab(app) == "intent"
        assert "Which window?" in shown and "Non-goals" in shown
        if size[0] >= 120:  # beside the intent when wide
            assert "no-prod" in shown and "◇ read only" in shown
            assert "in force:  signatures optional; auto: read_only; valid for 3600 s" in shown

        shown = await show_tab(pilot, app, "2", "v2 (latest) · 3 steps")
        assert "copy in batches" in shown
        assert "✓ succeeded" in shown and "! outcome unk" in shown
        shown = await show_tab(pilot, app, "d", "Diff v1 → v2")
        assert "+ s3" in shown and "↗ external write" in shown

        shown = await show_tab(pilot, app, "3", "▼ following")
        assert "outcome unknown needs a human" in shown
        assert OSC52_SHOWN in shown or "␛]52" in shown  # the step's reason, cut to the column
        assert "\x1b" not in shown and "\x07" not in shown

        shown = await show_tab(pilot, app, "4", "✓ chain intact")
        assert "schema captured" in shown
        assert "✓ ok" in shown or "✓ sha256 ok" in shown

        shown = await show_tab(pilot, app, "5", "deadline 2025-01-01 18:00Z")
        assert "$2.50 of $10.00" in shown and "25,000 of 100,000" in shown

        shown = await show_tab(pilot, app, "6", "Copied half the rows.")
        assert "db unreachable" in shown and "✓ pass ev-1" in shown
        assert "! outcome unknown" in shown

        for line in screen_text(app).splitlines():
            assert len(line) <= size[0]


async def test_execution_shows_appended_event_live(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp]
) -> None:
    root, agent = agent_dir
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        await show_tab(pilot, app, "3", "▼ following")
        view = app.screen.query_one(ExecutionView)
        rows = view.table.row_count
        agent.clock = lambda: T0 + timedelta(hours=1)
        agent.error("disk full on the replica", "s2")
        await until(pilot, lambda: "disk full on the replica" in screen_text(app), timeout=SLOW)
        assert view.table.row_count == rows + 1
        assert view.table.cursor_row == rows  # follow mode sticks to the bottom
        await pilot.press("t")  # filter by type: step first
        await until(pilot, lambda: view.type_filter == "step", timeout=SLOW)
        assert "disk full" not in screen_text(app)


@pytest.mark.slow
async def test_tab_keys_cycle_and_switch(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp]
) -> None:
    root, _ = agent_dir
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        for key, tab in zip(
            "654321",
            reversed(["intent", "plan", "execution", "evidence", "budget", "handoff"]),
            strict=True,
        ):
            await pilot.press(key)
            assert active_tab(app) == tab
        await pilot.press("right_square_bracket")
        assert active_tab(app) == "plan"
        # a tab's keys work as soon as it shows: its widget has the focus
        await pilot.press("v")
        await until(pilot, lambda: "v1 (older version)" in screen_text(app), timeout=SLOW)
        # going back to a tab whose focus was in it: the hidden tab never pulls itself back
        ids = ["intent", "plan", "execution", "evidence", "budget", "handoff"]
        for key in "d343424234d1":
            await pilot.press(key)
            if key.isdigit():
                assert active_tab(app) == ids[int(key) - 1], key


async def test_idle_hud_redraws_nothing(
    agent_dir: tuple[Path, AgentWriter],
    make_app: Callable[..., HudApp],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, _ = agent_dir
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        screen = app.screen
        assert isinstance(screen, MissionScreen)
        tabs = screen.query_one(TabbedContent)
        for key, expected in zip(
            "12345678",
            TAB_TEXTS,
            strict=True,
        ):
            await show_tab(pilot, app, key, expected)
            await pilot.pause(0.1)
            pane = tabs.get_pane(active_tab(app))
            inside = {pane, *pane.walk_children()}
            redrawn: list[Widget] = []
            monkeypatch.setattr(Widget, "refresh", recording(redrawn))
            for _ in range(3):
                screen.workspace_changed(None)  # what the 15 s tick does
            await pilot.pause()
            monkeypatch.setattr(Widget, "refresh", ORIGINAL_REFRESH)
            assert [w for w in redrawn if w in inside] == [], key


def test_tabs_are_the_eight_in_order() -> None:
    from hud.screens.mission_views import TABS

    assert [(t.id, t.title) for t in TABS] == [
        ("intent", "Intent"),
        ("plan", "Plan"),
        ("execution", "Execution"),
        ("evidence", "Evidence"),
        ("budget", "Budget"),
        ("handoff", "Handoff"),
        ("replay", "Replay"),
        ("review", "Review"),
    ]


async def test_tab_keys_have_ids_and_show_in_help(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp]
) -> None:
    from hud.screens.help import key_rows

    root, _ = agent_dir
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        expected = {
            "2": {"plan.version", "plan.version_newer", "plan.diff", "plan.base"},
            "3": {"execution.follow", "execution.step", "execution.type", "execution.clear"},
        }
        for key, ids in expected.items():
            await pilot.press(key)
            await pilot.pause(0.1)
            shown = {str(row[2]) for row in key_rows(app.screen)}
            assert ids <= shown, ids - shown


async def test_theme_change_keeps_tabs_rendering(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp]
) -> None:
    root, _ = agent_dir
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        for key, expected in zip(
            "12345678",
            TAB_TEXTS,
            strict=True,
        ):
            await show_tab(pilot, app, key, expected)
            await pilot.press("ctrl+t")
            await until(pilot, lambda e=expected: e in screen_text(app), timeout=SLOW)


def change_one_byte_of_line_1(log: Path) -> None:
    """A letter of line 1's observation, changed in place: valid JSON, broken chain."""
    data = bytearray(log.read_bytes())
    at = data.index(b"dump written")
    data[at] = ord("D")
    log.write_bytes(bytes(data))


async def test_an_altered_evidence_line_never_shows_a_pass(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp]
) -> None:
    """One byte of evidence line 1 changed: `hud check` says the chain breaks at seq 2
    (line 1 no longer chains), and the tab shows line 1 and every later one unverified."""
    from store.index.check import check
    from widgets.tabs.evidence import EvidenceView

    root, agent = agent_dir
    agent.evidence("s2", "rows copied", "count(*)", "half the rows are there")
    change_one_byte_of_line_1(root / "missions/alpha/evidence.jsonl")
    found = [p.message for p in check(root).missions["alpha"].problems if "chain" in p.message]
    assert found and "lines 1 on are unverified" in found[0]
    app = make_app(root)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_alpha(pilot, app)
        shown = await show_tab(pilot, app, "4", "✗ chain broken at seq 2")
        view = app.screen.query_one(EvidenceView)
        for line in ("1", "2"):
            cells = [cell.plain for cell in view.table.cells_of(line)]
            assert "✓ pass" not in cells and "✗ unverified" in cells, cells
        assert "Dump written" in shown
        assert "0 pass" in shown and "2 unverified" in shown
        await show_tab(pilot, app, "6", "Copied half the rows.")
        assert "✓ pass ev-1" not in screen_text(app)  # the handoff cites it: unverified now


def test_the_handoff_export_does_not_cite_an_altered_line_as_verified(
    agent_dir: tuple[Path, AgentWriter], capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.main import main

    root, agent = agent_dir
    agent.evidence("s2", "rows copied", "count(*)", "half the rows are there")
    assert main(["handoff", str(root), "alpha"]) == 0
    assert "- ev-1 (pass, step s1): dump written" in capsys.readouterr().out
    change_one_byte_of_line_1(root / "missions/alpha/evidence.jsonl")
    assert main(["handoff", str(root), "alpha"]) == 0
    out = capsys.readouterr().out
    assert "- ev-1: **unverified**: the hash chain of evidence.jsonl breaks" in out
    assert "(pass, step s1)" not in out


@pytest.mark.parametrize("kind", PUT_IN_PLACE)
@pytest.mark.parametrize(
    ("log", "key", "status"),
    [
        ("events", "3", "following"),
        ("evidence", "4", "evidence log not read"),
        ("events", "7", "The events log is not read"),
    ],
)
async def test_a_log_that_cannot_be_read_says_why_in_its_tab(
    agent_dir: tuple[Path, AgentWriter],
    make_app: Callable[..., HudApp],
    kind: str,
    log: str,
    key: str,
    status: str,
) -> None:
    """A log that is not a regular file is a problem of the file itself (no line): its
    tab says so, with the fix, where its lines would be (not only an empty table)."""
    from store.index.check import check

    root, _ = agent_dir
    path = root / f"missions/alpha/{log}.jsonl"
    path.unlink()
    (root.parent / "outside").mkdir()
    MAKERS[kind](path, root.parent / "outside")
    (problem,) = [p for p in check(root).missions["alpha"].problems if p.path.endswith(path.name)]
    assert problem.line is None
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        shown = await show_tab(pilot, app, key, status)
        await until(pilot, lambda: "fix:" in screen_text(app), timeout=SLOW)
        flat = "".join(screen_text(app).split())  # (a long path breaks anywhere)
        assert f"missions/alpha/{log}.jsonl" in flat
        assert "".join(problem.message.split()) in flat, shown
        assert "".join(problem.hint.split()) in flat


async def test_a_log_replaced_by_a_fifo_says_so_live_and_recovers(
    agent_dir: tuple[Path, AgentWriter], make_app: Callable[..., HudApp]
) -> None:
    root, _ = agent_dir
    path = root / "missions/alpha/events.jsonl"
    kept = path.read_bytes()
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_alpha(pilot, app)
        await show_tab(pilot, app, "3", "outcome unknown needs a human")
        path.unlink()
        os.mkfifo(path)
        await until(pilot, lambda: "is a FIFO" in screen_text(app), timeout=SLOW)
        path.unlink()
        path.write_bytes(kept)
        await until(pilot, lambda: "is a FIFO" not in screen_text(app), timeout=SLOW)
        await until(
            pilot, lambda: "outcome unknown needs a human" in screen_text(app), timeout=SLOW
        )
