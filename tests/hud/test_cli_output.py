"""What every command prints shows agent text visibly: no raw control, C1, bidi or
zero-width character reaches the terminal, in plain text or JSON. JSON stays valid with
the same values (those characters become `\\uXXXX` escapes) and ordinary non-ASCII
stays readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from store.index.check import check
from tests.factory import T0, line_bytes, mission, stamp
from tests.widgets.test_safe_text import dangerous

HIDDEN = "c1 \x9b2J osc \x9d0;x\x9c rlo \u202e zw \u200b esc \x1b[31m nul \x00"
"""What no output may show raw (no DEL: TOML refuses it raw; the request below has one)."""
READABLE = "Déploy ✓ 東京"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """HIDDEN in a title, step titles and reasons, a request, a decision, the handoff and
    a file name."""
    path = tmp_path / "state"
    m1 = mission(path, "m1", f"{READABLE} {HIDDEN}")
    plan = {"schema": 1, "version": 1, "created_at": stamp(T0), "author": HIDDEN}
    plan["steps"] = [{"id": "s1", "title": HIDDEN}, {"id": "s2", "title": HIDDEN}]
    (m1.dir / "plan/v1.json").write_bytes(line_bytes(plan))
    m1.step("s1", "waiting_for_approval", reason=HIDDEN)
    m1.request("r1", summary=f"{READABLE} {HIDDEN} del \x7f")
    m1.request("r0", tool=HIDDEN, summary=HIDDEN)
    m1.decision("r0", "reject", reason=HIDDEN, decided_by=HIDDEN)
    m1.handoff(summary=HIDDEN, blockers=[HIDDEN])
    (m1.dir / f"stray {HIDDEN.replace(chr(0), '')}").write_text("x")
    return path


COMMANDS = {
    "check": ["check", "{root}"],
    "check-json": ["check", "{root}", "--json"],
    "approvals": ["approvals", "{root}", "--all"],
    "approvals-json": ["approvals", "{root}", "--all", "--json"],
    "handoff": ["handoff", "{root}", "m1"],
    "decide-decided": ["decide", "{root}", "m1", "r0", "approve"],
    "decide-refused": ["decide", "{root}", "m1", "r1", "reject"],
    "replay": ["replay", "{root}", "m1"],
    "replay-at": ["replay", "{root}", "m1", "--at", "1"],
    "replay-json": ["replay", "{root}", "m1", "--at", "1", "--json"],
    "review": ["review", "{root}", "m1"],
    "review-json": ["review", "{root}", "m1", "--json"],
    "metrics": ["metrics", "{root}", "--since", "3650d"],
    "metrics-json": ["metrics", "{root}", "--since", "3650d", "--json"],
}


def test_no_command_prints_a_hidden_character(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, args in COMMANDS.items():
        main([arg.format(root=root) for arg in args])
        out, err = capsys.readouterr()
        assert out + err, name
        assert [c for c in out + err if dangerous(c, multiline=True)] == [], name


def test_json_escapes_hidden_characters_and_keeps_every_value(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(root), "--json"]) == 0
    out = capsys.readouterr().out
    assert READABLE in out  # ordinary non-ASCII stays as it is
    assert "\\u009b" in out and "\\u009d" in out and "\\u202e" in out and "\\u200b" in out
    assert json.loads(out) == json.loads(json.dumps(check(root).to_json()))
    assert main(["approvals", str(root), "--all", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.isascii() and "\x7f" not in out and "\\u007f" in out
    by_id = {item["id"]: item for item in json.loads(out)}
    assert by_id["r1"]["summary"] == f"{READABLE} {HIDDEN} del \x7f"
    assert by_id["r0"]["tool"] == HIDDEN
