"""Seed 004's failure modes, each a small mission in tests/fixtures/seed004/<row>/state
with its right answer beside it (expected.json, worked out by hand): what `hud check`
says (validity, status, problems by code, line and severity), the review's verdicts and
the lines they cite, and the metrics over the hour around the run."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from store.analysis.metrics import Ratio, directory_metrics
from store.analysis.review import review
from store.index.check import check
from store.index.workspace import Workspace
from tests.factory import T0

FIXTURES = Path(__file__).parent.parent / "fixtures" / "seed004"
ROWS = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())


def expected(row: str) -> dict[str, Any]:
    return json.loads((FIXTURES / row / "expected.json").read_text(encoding="utf-8"))


def test_every_row_of_the_table_has_a_fixture() -> None:
    assert [expected(row)["row"] for row in ROWS] == [
        "repeats completed work after a restart",
        "forgets an identifier",
        "runaway loops and surprise bills",
        "stale preferences override current instructions",
        "a resumed run cannot find its files",
        "resume fails after a schema change",
        "duplicate side effects after a retry",
    ]


@pytest.mark.parametrize("row", ROWS)
def test_hud_check(row: str) -> None:
    want = expected(row)
    report = check(FIXTURES / row / "state", jobs=1)
    mission = report.missions[want["mission"]]
    assert (report.errors == 0, mission.status.value) == (
        want["check"]["valid"],
        want["check"]["status"],
    )
    found = sorted((p.code, p.line or -1, p.severity) for p in report.all_problems())
    assert found == sorted((c, line or -1, s) for c, line, s in want["check"]["problems"])


@pytest.mark.parametrize("row", ROWS)
def test_review(row: str) -> None:
    want = expected(row)
    workspace = Workspace(FIXTURES / row / "state")
    workspace.scan()
    answers = {a.key: a for a in review(workspace.missions[want["mission"]]).answers}
    assert {key: answers[key].verdict for key in want["review"]} == want["review"]
    for key, lines in want["cites"].items():
        assert sorted({c.line for c in answers[key].cites if c.line}) == lines, answers[key]


@pytest.mark.parametrize("row", ROWS)
def test_metrics(row: str) -> None:
    want = expected(row)
    root = FIXTURES / row / "state"
    workspace = Workspace(root, clock=lambda: T0 + timedelta(hours=1))
    workspace.scan()
    report = directory_metrics(workspace, T0 - timedelta(hours=1))
    metrics = report.missions[want["mission"]]
    for name, value in want["metrics"].items():
        got = getattr(metrics, name)
        assert (Ratio(*value) if isinstance(value, list) else value) == got, name
