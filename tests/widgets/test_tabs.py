"""The mission tabs' widgets: agent text shown escaped, rows updated by key, no idle redraw.

Each widget is hosted alone in a small app; assertions read what reached the screen
(the compositor's lines) or the Text the widget built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widget import Widget

from store.derivation.derive import Budget, Limit
from store.derivation.view import StepLatest, UsagePoint
from store.format.load import EVENT_ADAPTER
from store.format.problems import Problem
from store.format.records import Constraints, Evidence, Handoff, Intent, Plan, validate
from widgets.keyed_table import KeyedTable
from widgets.tabs.budget import BudgetView, budget_text
from widgets.tabs.evidence import EvidenceView
from widgets.tabs.execution import ExecutionView
from widgets.tabs.handoff import HandoffView
from widgets.tabs.intent import IntentView
from widgets.tabs.log_view import LogView
from widgets.tabs.plan import PlanVersion, PlanView

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
LINK = "[link=x]y[/]"
HOSTILE = f"{OSC52} {LINK}"
OSC52_SHOWN = "␛]52;c;ZXZpbA==␇"
T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


class Host(App[None]):
    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


def screen_text(app: App[Any]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_inert(shown: str) -> None:
    """Nothing terminal-active reached the screen, and the hostile text is visible."""
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert OSC52_SHOWN in shown
    assert LINK in shown


def stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def event(seq: int, type: str, **fields: Any) -> Any:
    raw = {
        "seq": seq,
        "at": stamp(T0 + timedelta(seconds=seq)),
        "prev": "0" * 64,
        "type": type,
        "actor": "agent",
        **fields,
    }
    return validate(EVENT_ADAPTER, raw)


def evidence(seq: int, **fields: Any) -> Evidence:
    raw = {
        "seq": seq,
        "at": stamp(T0 + timedelta(seconds=seq)),
        "prev": "0" * 64,
        "id": f"e{seq}",
        "step": "s1",
        "observed": "ok",
        "method": "pytest",
        "proves": "works",
        "verdict": "pass",
        **fields,
    }
    return validate(Evidence, raw)


def plan(version: int, steps: list[dict[str, Any]], **fields: Any) -> Plan:
    data = {
        "schema": 1,
        "version": version,
        "created_at": stamp(T0),
        "author": "agent",
        "steps": steps,
        **fields,
    }
    if version > 1:
        data.setdefault("reason", "re-plan")
    return validate(Plan, data)


@pytest.fixture
def spy_refresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Widget]]:
    """Record every widget that asks to be redrawn."""
    calls: list[Widget] = []
    original = Widget.refresh

    def refresh(self: Widget, *args: Any, **kwargs: Any) -> Any:
        calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Widget, "refresh", refresh)
    yield calls


async def run_with(widget: Widget, feed: Callable[[], None], size: tuple[int, int]) -> str:
    app = Host(widget)
    async with app.run_test(size=size) as pilot:
        feed()
        await pilot.pause()
        return screen_text(app)


# ---- intent -------------------------------------------------------------------------------


def hostile_intent() -> Intent:
    return validate(
        Intent,
        {
            "schema": 1,
            "title": HOSTILE,
            "objective": f"first line\n{HOSTILE}",
            "non_goals": [HOSTILE],
            "scope": {"include": ["src/"], "exclude": [HOSTILE]},
            "success_evidence": ["tests pass"],
            "open_decisions": ["which window?"],
            "created_by": "alice",
            "created_at": "2025-01-01T12:00:00Z",
            "revision": 3,
        },
    )


def hostile_constraints() -> Constraints:
    return validate(
        Constraints,
        {
            "schema": 1,
            "rule": [
                {"id": "no-prod", "rule": HOSTILE, "severity": "error"},
                {"id": "quiet", "rule": "keep logs small", "severity": "warn"},
            ],
            "budget": {"usd": 10.0, "tokens": 1000, "wall_seconds": 7200},
            "approval": {"auto": ["read_only"], "valid_for_seconds": 1800},
            "tools": {"allow": ["psql"], "deny": [HOSTILE]},
        },
    )


async def test_intent_renders_fields_escaped() -> None:
    view = IntentView()
    problem = Problem("missions/m/constraints.toml", 4, "schema", HOSTILE, "fix it", "warn")
    shown = await run_with(
        view,
        lambda: view.show(hostile_intent(), hostile_constraints(), constraints_problems=[problem]),
        (160, 48),
    )
    assert_inert(shown)
    for expected in (
        "revision 3",
        "created by alice at 2025-01-01 12:00:00Z",
        "Non-goals",
        "which window?",
        "no-prod",
        "⚠ warn",
        "$10.00",
        "2h",
        "◇ read only",
        "30m",
        "psql",
        "missions/m/constraints.toml:4",
    ):
        assert expected in shown, expected
    # the document, never raw TOML
    assert "[budget]" not in shown and "schema = 1" not in shown


async def test_intent_missing_and_invalid_files_are_said() -> None:
    view = IntentView()
    problem = Problem("missions/m/intent.toml", 2, "bad-toml", "invalid TOML", "fix line 2")
    shown = await run_with(view, lambda: view.show(None, None, intent_problems=[problem]), (80, 24))
    assert "missions/m/intent.toml:2 invalid TOML" in shown
    assert "could not be loaded" in shown
    assert "No constraints.toml" in shown


async def test_intent_does_not_redraw_unchanged(spy_refresh: list[Widget]) -> None:
    view = IntentView()
    app = Host(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.show(hostile_intent(), hostile_constraints())
        await pilot.pause()
        spy_refresh.clear()
        for _ in range(3):
            view.show(hostile_intent(), hostile_constraints())
        await pilot.pause()
        assert spy_refresh == []


# ---- plan --------------------------------------------------------------------------------


def plan_versions() -> list[PlanVersion]:
    v1 = plan(
        1,
        [
            {"id": "s1", "title": "Dump schema"},
            {"id": "s2", "title": HOSTILE, "risk": "reversible_write"},
        ],
        author=HOSTILE,
    )
    v2 = plan(
        2,
        [
            {"id": "s1", "title": "Dump schema", "verification": HOSTILE},
            {"id": "s2", "title": "Copy rows", "risk": "external_write", "depends_on": ["s1"]},
            {"id": "s3", "title": "Switch", "risk": "irreversible", "needs_approval": True},
        ],
        reason=HOSTILE,
        assumptions=[HOSTILE],
    )
    return [PlanVersion(1, v1), PlanVersion(2, v2)]


async def test_plan_steps_diff_and_keys() -> None:
    view = PlanView()
    app = Host(view)
    states = {
        "s1": StepLatest.of(event(1, "step", step="s1", plan_version=2, state="succeeded"), 1),
        "s2": StepLatest.of(
            event(2, "step", step="s2", plan_version=1, state="outcome_unknown"), 2
        ),
    }
    async with app.run_test(size=(160, 48)) as pilot:
        view.show(plan_versions(), states)
        await pilot.pause()
        shown = screen_text(app)
        assert_inert(shown)  # reason in the versions table, verification in the details
        assert "v2 (latest) · 3 steps" in shown
        assert "▲ irreversible" in shown
        assert "✓ succeeded" in shown
        assert "! outcome unknown (v1)" in shown  # its latest state came from plan v1
        assert view.steps_table.keys == ["s1", "s2", "s3"]

        await pilot.press("d")
        shown = screen_text(app)
        assert "Diff v1 → v2" in shown
        assert "+ s3" in shown
        assert "risk: ↺ reversible write → ↗ external write" in shown
        assert "depends_on: (none) → s1" in shown
        assert_inert(shown)  # old title of s2, new verification of s1, assumptions

        await pilot.press("d", "v")
        assert view.current == 1
        assert view.steps_table.keys == ["s1", "s2"]
        assert_inert(screen_text(app))  # title of s2 in v1, author in the versions table
        await pilot.press("V")
        assert view.current == 2


async def test_plan_base_key_picks_diff_base() -> None:
    view = PlanView()
    app = Host(view)
    versions = [
        *plan_versions(),
        PlanVersion(3, plan(3, [{"id": "s1", "title": "Dump schema"}], reason="shrink")),
    ]
    async with app.run_test(size=(80, 24)) as pilot:
        view.show(versions, {})
        await pilot.pause()
        assert view.base_version == 2
        await pilot.press("b")
        assert view.diffing and view.base_version == 1
        assert "Diff v1 → v3" in screen_text(app)


async def test_plan_invalid_version_is_shown_as_a_problem() -> None:
    view = PlanView()
    bad = PlanVersion(
        2, None, (Problem("missions/m/plan/v2.json", None, "bad-json", HOSTILE, "fix"),)
    )
    shown = await run_with(view, lambda: view.show([*plan_versions()[:1], bad], {}), (160, 48))
    assert "✗ invalid" in shown
    assert "missions/m/plan/v2.json" in shown
    assert_inert(shown)


# ---- execution ----------------------------------------------------------------------------


def timeline() -> list[tuple[int, Any]]:
    return [
        (1, event(1, "step", step="s1", plan_version=1, state="running", reason=HOSTILE)),
        (2, event(2, "attempt", step="s1", attempt=1, phase="started", tool=HOSTILE)),
        (
            3,
            event(
                3,
                "attempt",
                step="s1",
                attempt=1,
                phase="finished",
                tool="copy",
                outcome="unknown",
            ),
        ),
        (4, event(4, "step", step="s1", plan_version=1, state="outcome_unknown")),
        (5, Problem("missions/m/events.jsonl", 5, "bad-json", HOSTILE, "fix the line")),
        (6, event(6, "error", message=HOSTILE, step="s2")),
        (7, event(7, "usage", usd=1.5, tokens=1200, steps=2)),
    ]


async def test_execution_renders_events_escaped() -> None:
    view = ExecutionView()
    app = Host(view)
    async with app.run_test(size=(160, 48)) as pilot:
        view.show(timeline(), total=7)
        await pilot.pause()
        shown = screen_text(app)
        assert "! outcome unknown needs a human" in shown
        assert "■ #1 finished copy → ! unknown needs a human after 1s" in shown
        assert "✗ problem" in shown
        assert "$1.50 · 1,200 tokens · 2 steps" in shown
        assert "\x1b" not in shown and "\x07" not in shown
        whats = [view.table.cells_of(str(line))[4].plain for line in (1, 2, 5, 6)]
        for what in whats:
            assert OSC52_SHOWN in what and LINK in what
        # the highlighted (last) line in full below the table
        assert "line 7" in shown


async def test_execution_follow_appends_and_sticks_to_bottom() -> None:
    view = ExecutionView()
    app = Host(view)
    async with app.run_test(size=(80, 24)) as pilot:
        lines = [(n, event(n, "heartbeat")) for n in range(1, 101)]
        view.show(lines, total=100)
        await pilot.pause()
        assert view.table.row_count == 100
        assert view.table.cursor_row == 99
        first_row = view.table.cells_of("1")
        view.show([(101, event(101, "heartbeat"))], total=101)
        await pilot.pause()
        assert view.table.row_count == 101
        assert view.table.cursor_row == 100
        assert view.table.cells_of("1") is first_row  # appended, not rebuilt

        await pilot.press("f")  # stop following
        assert not view.following
        view.show([(102, event(102, "heartbeat"))], total=102)
        await pilot.pause()
        assert view.table.cursor_row == 100
        assert "paused" in screen_text(app)
        await pilot.press("f")
        assert view.table.cursor_row == 101
        await pilot.press("up")
        assert not view.following


async def test_execution_marks_the_lines_the_chain_no_longer_vouches_for() -> None:
    """The chain breaks at seq 3 (line 2 no longer chains): lines 2 on are marked ✗."""
    view = ExecutionView()
    app = Host(view)
    async with app.run_test(size=(120, 24)) as pilot:
        lines = [(n, event(n, "heartbeat")) for n in range(1, 5)]
        view.show(lines, total=4)
        await pilot.pause()
        assert view.table.cells_of("2")[0].plain == "2"
        view.show([], total=4, chain_broken_at=3, unverified_from=2)
        await pilot.pause()
        assert [view.table.cells_of(str(n))[0].plain for n in range(1, 5)] == [
            "1",
            "✗2",
            "✗3",
            "✗4",
        ]
        assert "✗ chain broken at seq 3: lines 2 on unverified" in screen_text(app)


async def test_execution_filters_cycle_step_and_type() -> None:
    view = ExecutionView()
    app = Host(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.show(timeline(), total=7)
        await pilot.pause()
        await pilot.press("s")
        assert view.step_filter == "s1"
        assert view.table.keys == ["1", "2", "3", "4"]
        await pilot.press("s")
        assert view.step_filter == "s2"
        assert view.table.keys == ["6"]
        await pilot.press("c", "t")
        assert view.type_filter == "step"
        assert view.table.keys == ["1", "4"]
        await pilot.press("t", "t")
        assert view.type_filter == "problem"
        assert view.table.keys == ["5"]
        assert "type problem" in screen_text(app)


async def test_execution_window_drops_old_lines() -> None:
    from widgets.tabs.execution import SHOWN, WINDOW

    view = ExecutionView()
    app = Host(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.show([(n, event(n, "heartbeat")) for n in range(1, WINDOW + 51)])
        await pilot.pause()
        assert len(view.lines) == WINDOW
        assert view.table.row_count == SHOWN
        assert view.table.keys[-1] == str(WINDOW + 50)
        view.show([(1, event(1, "heartbeat"))], reset=True)
        await pilot.pause()
        assert view.table.keys == ["1"]


async def test_execution_idle_update_does_not_redraw(spy_refresh: list[Widget]) -> None:
    view = ExecutionView()
    app = Host(view)
    async with app.run_test(size=(80, 24)) as pilot:
        view.show(timeline(), total=7)
        await pilot.pause()
        spy_refresh.clear()
        for _ in range(3):
            view.show([], total=7)
        await pilot.pause()
        assert spy_refresh == []


# ---- evidence -------------------------------------------------------------------------------


async def test_evidence_table_checks_and_chain() -> None:
    view = EvidenceView()
    app = Host(view)
    artifact = {"path": "out/dump.sql", "sha256": "a" * 64, "bytes": 12}
    items = [
        (1, evidence(1, observed=HOSTILE, method=HOSTILE, proves=HOSTILE, artifact=artifact)),
        (2, evidence(2, id=HOSTILE, step="s2", verdict="fail")),
        (3, Problem("missions/m/evidence.jsonl", 3, "schema", HOSTILE, "fix")),
    ]
    async with app.run_test(size=(160, 48)) as pilot:
        view.show(items, checks={"out/dump.sql": "mismatch"}, total=3)
        await pilot.pause()
        shown = screen_text(app)
        assert "✓ chain intact" in shown
        assert "✓ pass" in shown and "✗ fail" in shown
        assert "✗ mismatch out/dump.sql" in shown
        assert "\x1b" not in shown and "\x07" not in shown
        for line in ("1", "2", "3"):
            cells = " ".join(c.plain for c in view.table.cells_of(line))
            assert OSC52_SHOWN in cells and LINK in cells
        before = view.table.cells_of("2")
        view.show([], checks={"out/dump.sql": "ok"}, total=3, chain_broken_at=2)
        await pilot.pause()
        shown = screen_text(app)
        assert "✗ chain broken at seq 2" in shown
        assert "✓ sha256 ok" in shown
        assert view.table.cells_of("2") is before  # only the artifact row changed
        await pilot.press("g")  # detail of the first entry: observed, method, proves in full
        detail = screen_text(app)
        assert "observed: " + OSC52_SHOWN in detail


# ---- budget -----------------------------------------------------------------------------------


def usage() -> list[UsagePoint]:
    return [UsagePoint(T0 + timedelta(minutes=10 * i), 0.5 * i, 100 * i, i) for i in range(7)]


def budget(deadline: datetime) -> Budget:
    now = T0 + timedelta(hours=1)
    return Budget(
        (
            Limit("usd", 3.0, 10.0, 3.0, now + timedelta(hours=7 / 3)),
            Limit("tokens", 600.0, 1000.0, 600.0, now + timedelta(minutes=40)),
            Limit("steps", 6.0, 5.0, 6.0, None),
        ),
        deadline,
    )


def test_budget_text_projection_before_deadline() -> None:
    now = T0 + timedelta(hours=1)
    text = budget_text(budget(T0 + timedelta(hours=2)), usage(), now, 78).plain
    assert "⚠ projected to run out before the deadline: tokens at 2025-01-01 13:40Z" in text
    assert "$3.00 of $10.00" in text
    assert "burn $3.00/h" in text
    assert "600 of 1,000" in text
    assert "✗ exhausted" in text  # steps: 6 of 5
    assert "!120%" in text
    assert "Spend (USD, cumulative)  $0.00 → $3.00 over 1h" in text


def test_budget_text_within_deadline_and_without_limits() -> None:
    now = T0 + timedelta(hours=1)
    out = now + timedelta(hours=9)
    calm = Budget(
        (Limit("usd", 1.0, 10.0, 1.0, out),), now - timedelta(hours=2) + timedelta(hours=10)
    )
    assert (
        "no limit is projected to run out before the deadline" in budget_text(calm, [], now).plain
    )
    empty = budget_text(Budget((), None), [], now).plain
    assert "No budget limits" in empty and "no usage events yet" in empty


def test_budget_a_wall_clock_budget_ending_before_the_deadline_is_no_warning() -> None:
    """Time 30m of 2h (ends 13:30Z), deadline 18:00Z, $1 of $10 at $1/h (out 22:00Z):
    nothing runs out before the deadline by its burn rate; the time line says its end."""
    now = T0 + timedelta(hours=1)
    calm = Budget(
        (
            Limit("usd", 1.0, 10.0, 1.0, now + timedelta(hours=9)),
            Limit("time", 1800.0, 7200.0, 3600.0, now + timedelta(minutes=90)),
        ),
        T0 + timedelta(hours=6),
    )
    text = budget_text(calm, [], now, 78).plain
    assert "⚠" not in text
    assert "✓ no limit is projected to run out before the deadline" in text
    assert "elapsed since the first event · ends 14:30Z (in 1h 30m)" in text
    assert "burn rate unknown" not in text
    assert "burn $1.00/h · runs out 22:00Z (in 9h)" in text


def test_budget_burn_rate_unknown_is_said_once() -> None:
    """No burn rate for usd, tokens or steps yet: one line says so, no gauge repeats it,
    and nothing claims that no limit runs out."""
    now = T0 + timedelta(hours=1)
    young = Budget(
        (
            Limit("usd", 0.5, 10.0, None, None),
            Limit("tokens", 100.0, 1000.0, None, None),
            Limit("steps", 1.0, 20.0, None, None),
            Limit("time", 60.0, 7200.0, 3600.0, now + timedelta(seconds=7140)),
        ),
        T0 + timedelta(hours=6),
    )
    text = budget_text(young, [], now, 78).plain
    assert text.count("burn rate unknown yet") == 1
    assert "burn rate unknown yet: too little usage history (needs 1m)" in text
    assert "no limit is projected" not in text and "projected to run out" not in text
    assert "$0.50 of $10.00" in text and "100 of 1,000" in text and "1 of 20" in text


async def test_budget_view_fits_80_columns() -> None:
    view = BudgetView()
    now = T0 + timedelta(hours=1)
    shown = await run_with(
        view, lambda: view.show(budget(now + timedelta(hours=1)), usage(), now), (80, 24)
    )
    assert "usd" in shown and "before the deadline" in shown
    assert all(len(line) <= 80 for line in shown.splitlines())


# ---- handoff ------------------------------------------------------------------------------


async def test_handoff_renders_escaped() -> None:
    view = HandoffView()
    handoff = validate(
        Handoff,
        {
            "schema": 1,
            "at": "2025-01-01T12:30:00Z",
            "plan_version": 2,
            "current_step": HOSTILE,
            "summary": f"Copied half.\n{HOSTILE}",
            "verified": ["e1", HOSTILE],
            "blockers": [HOSTILE],
            "next_steps": ["check", HOSTILE],
            "resume_after_seq": 41,
        },
    )
    shown = await run_with(
        view,
        lambda: view.show(handoff, step_state="outcome_unknown", verdicts={"e1": "pass"}),
        (160, 48),
    )
    assert_inert(shown)
    assert "Verified evidence" in shown and "Copied half." in shown
    for expected in (
        "plan v2",
        "! outcome unknown",
        "resume after seq 41",
        "Copied half.",
        "✓ pass e1",
        "Blockers (1)",
        "2. ",
    ):
        assert expected in view.shown_text, expected


async def test_handoff_missing() -> None:
    view = HandoffView()
    shown = await run_with(view, lambda: view.show(None), (80, 24))
    assert "No handoff.json yet" in shown


# ---- the keyed table ----------------------------------------------------------------------


async def test_keyed_table_updates_cells_in_place() -> None:
    table = KeyedTable((("a", "A", 5, 5), ("b", "B", 0, 0)))
    app = Host(table)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = [(str(n), (Text(str(n)), Text("x"))) for n in range(5)]
        assert table.set_rows(rows)
        await pilot.pause()
        assert not table.set_rows(rows)  # nothing changed
        table.move_cursor(row=3)
        changed = [*rows[:3], ("3", (Text("3"), Text("y"))), rows[4]]
        assert table.set_rows(changed)
        assert table.get_cell("3", "b").plain == "y"
        # dropped at the top, appended at the bottom: the cursor keeps its row
        moved = [*changed[2:], ("5", (Text("5"), Text("z")))]
        table.set_rows(moved)
        assert table.keys == ["2", "3", "4", "5"]
        assert table.selected_key == "3"
        # reordered: rebuilt, cursor still on its key
        table.set_rows(list(reversed(moved)))
        assert table.keys == ["5", "4", "3", "2"]
        assert table.selected_key == "3"


async def test_keyed_table_append_rows_adds_at_the_bottom() -> None:
    table = KeyedTable((("a", "A", 5, 5), ("b", "B", 0, 0)))
    table.append_rows([("0", (Text("0"), Text("x")))])  # before the columns: kept for mount
    app = Host(table)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert table.keys == ["0"]
        table.move_cursor(row=0)
        table.append_rows([(str(n), (Text(str(n)), Text("x"))) for n in (1, 2)])
        assert table.keys == ["0", "1", "2"]
        assert table.row_count == 3
        assert table.get_cell("2", "a").plain == "2"
        assert table.selected_key == "0"


@pytest.mark.parametrize("view_type", [ExecutionView, EvidenceView])
async def test_both_log_tabs_keep_their_window_one_way(view_type: type[LogView]) -> None:
    """The Execution and Evidence tabs keep lines by one rule (`LogView.show`): the last
    `WINDOW`, their cells dropped with them, all of it dropped on a reset."""
    assert ExecutionView.show is LogView.show  # Evidence adds only its `checks`
    view = view_type()
    app = Host(view)
    make = evidence if view_type is EvidenceView else (lambda n: event(n, "heartbeat"))
    async with app.run_test(size=(80, 24)) as pilot:
        view.show([(n, make(n)) for n in range(1, LogView.WINDOW + 51)])
        await pilot.pause()
        assert [line for line, _ in view.lines] == list(range(51, LogView.WINDOW + 51))
        assert min(view._cells) >= 51  # the dropped lines' cells went with them
        view.show([(1, make(1))], reset=True)
        await pilot.pause()
        assert [line for line, _ in view.lines] == [1]
