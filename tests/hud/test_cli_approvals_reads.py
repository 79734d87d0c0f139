"""`hud approvals` reads what the queue is made of: the missions that hold requests (and
everything outside missions/), through the verified-prefix cache; its answer is the one
a whole scan gives."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from cli.commands.approvals import asking
from cli.main import main
from store.index.approval_checks import approval_queue
from store.index.workspace import Workspace
from tests.factory import T0, mission, three_missions


def test_approvals_reads_only_the_missions_that_hold_requests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUD_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "state"
    three_missions(root)
    delta = mission(root, "delta")
    delta.step("s1", "waiting_for_approval")
    delta.request("r9", expires_at=(T0 + timedelta(days=3650)).isoformat())
    (root / "missions/gamma/approvals").mkdir()  # a folder, no request in it: not read
    read = asking(Workspace(root))
    assert {p.split("/")[1] for p in read if p.startswith("missions/")} == {"beta", "delta"}
    whole = Workspace(root)
    whole.scan()
    expected = [
        (i.mission, i.request_id, i.status.value, i.risk)
        for i in approval_queue(whole, whole.clock())
    ]
    assert expected
    for _ in range(2):  # the second through the cache
        assert main(["approvals", str(root), "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert [(i["mission"], i["id"], i["status"], i["risk"]) for i in listed] == expected
    assert main(["approvals", str(root), "--all", "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    full = approval_queue(whole, whole.clock(), everything=True)
    assert [(i["mission"], i["id"]) for i in every] == [(i.mission, i.request_id) for i in full]
