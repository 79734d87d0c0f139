"""`hud replay`, `hud review` and `hud metrics`: what they print, their JSON, exit codes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.commands.metrics import duration
from cli.main import main
from store.index.check import check
from tests.factory import Mission, mission
from tests.store.test_hostile_files import MAKERS, PUT_IN_PLACE

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """`m`: s1 runs and succeeds on its own word, s2 fails; `good`: nothing fails review."""
    path = tmp_path / "state"
    built = mission(path, "m")
    built.step("s1", "running")
    built.usage(0.5, 100, 1)
    built.succeed("s1")
    built.step("s2", "failed", reason="tool error")
    good = Mission(path, "good").intent("Good", success_evidence=["x"], non_goals=["y"])
    good.plan(1)
    return path


def run(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_lists_the_landmarks(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "replay", str(root), "m")
    assert code == 0
    assert "m: 4 events" in out
    assert "s1: succeeded" in out and "s2: failed: tool error" in out


@pytest.mark.parametrize("kind", PUT_IN_PLACE)
@pytest.mark.parametrize("at", [[], ["--at", "1"], ["--json"]])
def test_replay_of_a_log_that_cannot_be_read_says_why(
    root: Path, capsys: Capture, kind: str, at: list[str]
) -> None:
    """Not "0 events" and exit 0: the log is there and not read; its problem and fix."""
    log = root / "missions/m/events.jsonl"
    log.unlink()
    (root.parent / "outside").mkdir()
    MAKERS[kind](log, root.parent / "outside")
    (problem,) = [
        p for p in check(root).missions["m"].problems if p.path == "missions/m/events.jsonl"
    ]
    code, out, err = run(capsys, "replay", str(root), "m", *at)
    assert code == 2 and out == ""
    assert err == f"hud replay: missions/m/events.jsonl {problem.message}\n  fix: {problem.hint}\n"


def test_replay_at_an_event(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "replay", str(root), "m", "--at", "3")
    assert code == 0
    assert "m at seq 3 of 4" in out and "event: step s1 succeeded by agent" in out
    assert "status: idle" in out and "s1  read_only  succeeded (line 3)" in out
    assert "changed since seq 2:" in out and "step s1: running -> succeeded" in out


def test_replay_json(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "replay", str(root), "m", "--at", "4", "--json")
    frame = json.loads(out)
    assert code == 0 and frame["last_seq"] == 4
    assert frame["moment"]["status"] == "failed" and frame["previous"]["seq"] == 3
    assert {"what": "step", "key": "s2", "before": "", "after": "failed"} in frame["changes"]
    code, out, _ = run(capsys, "replay", str(root), "m", "--json")
    assert [mark["kind"] for mark in json.loads(out)["landmarks"]] == ["state", "state"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["replay", "{root}", "m", "--at", "5"], "no event 5: the events log has 4 lines"),
        (["replay", "{root}", "nope"], "no mission nope"),
        (["replay", "{root}/nowhere", "m"], "no such directory"),
        (["replay", "{root}", "a..b"], "unsafe mission id"),
        (["review", "{root}", "nope"], "no mission nope"),
        (["review", "{root}", "m", "--version", "2"], "has no plan v2"),
        (["review", "{root}", "../m"], "unsafe mission id"),
        (["metrics", "{root}/nowhere"], "no such directory"),
    ],
)
def test_what_cannot_run_exits_2(root: Path, capsys: Capture, args: list[str], says: str) -> None:
    code, out, err = run(capsys, *(arg.format(root=root) for arg in args))
    assert code == 2 and out == "" and says in err


def test_review_exits_1_when_an_answer_fails(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "review", str(root), "m")
    assert code == 1
    assert "review of m, plan v1 (latest v1)" in out
    assert " 6. fail    Is completion based on independent evidence?" in out
    assert "missions/m/evidence.jsonl:1  s1: e1 is the agent's own word" in out
    code, out, _ = run(capsys, "review", str(root), "good")
    assert code == 0 and out.rstrip().endswith("nothing failed")


def test_review_json(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "review", str(root), "m", "--json", "--version", "1")
    found = json.loads(out)
    assert code == 1 and found["plan_version"] == 1
    assert len(found["questions"]) == 7 and len(found["failure_modes"]) == 6
    evidence = found["questions"][5]
    assert evidence["verdict"] == "fail"
    assert evidence["cites"][0] == {
        "path": "missions/m/evidence.jsonl",
        "line": 1,
        "note": "s1: e1 is the agent's own word (no observer, no artifact)",
    }


def test_metrics(root: Path, capsys: Capture) -> None:
    code, out, _ = run(capsys, "metrics", str(root), "--since", "3650d")
    assert code == 0
    assert "2 missions" in out
    assert "recovery time           1 not recovered" in out
    code, out, _ = run(capsys, "metrics", str(root), "--since", "3650d", "--json")
    report = json.loads(out)
    assert code == 0 and sorted(report["missions"]) == ["good", "m"]
    assert report["total"]["recovery"]["open"] == 1
    assert len(report["total"]["series"]["calls"]) == 24
    since, until = (datetime.fromisoformat(report[k]) for k in ("since", "until"))
    assert until - since == timedelta(days=3650) and until <= datetime.now(UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("24h", 86400), ("7d", 604800), ("2w", 1209600)],
)
def test_durations(text: str, seconds: int) -> None:
    assert duration(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "0h", "1y", "h", "1.5h", "-1h"])
def test_bad_durations_exit_2(root: Path, text: str, capsys: Capture) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["metrics", str(root), f"--since={text}"])
    assert stopped.value.code == 2
    assert "is not a duration" in capsys.readouterr().err


def test_replay_budget_has_the_units_the_hud_shows(tmp_path: Path, capsys: Capture) -> None:
    """`time 2s of 4h`, `usd $0.50 of $10.00`: the units of the Budget tab and the handoff
    export (one `store.format.text.amount`), never `time 2.00 of 14,400`."""
    from hud.export import handoff_markdown
    from store.format.text import amount
    from store.index.workspace import Workspace

    root = tmp_path / "state"
    built = mission(root, "m")
    built.constraints(budget={"usd": 10.0, "tokens": 100_000, "wall_seconds": 14_400})
    built.step("s1", "running")
    built.usage(0.5, 12_000, 1)
    built.step("s1", "succeeded")
    code, out, _ = run(capsys, "replay", str(root), "m", "--at", "3")
    assert code == 0
    assert "budget: usd $0.50 of $10.00, tokens 12,000 of 100,000, time 2s of 4h" in out
    workspace = Workspace(root, clock=lambda: built.clock)
    workspace.scan()
    state = workspace.missions["m"]
    exported = handoff_markdown(state, built.clock, workspace.settings, {})
    assert "- time: 2s of 4h (0%)" in exported
    assert (amount("time", 3.4), amount("time", 14_400.0), amount("usd", 1.5)) == (
        "3s",
        "4h",
        "$1.50",
    )
