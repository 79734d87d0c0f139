"""The decision's re-check reads the request again first (`Session.reread`): a request
that is gone by the time the human has answered is seen gone, and nothing is written.
A deleted request needs no digest to be seen: this holds without the digest binding."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.commands.decide import Flags
from cli.main import main
from hud.app import HudApp
from hud.screens.decide import ReasonDialog
from store.format.layout import decision_path, request_path
from store.index.approval_checks import Review, Verdict
from tests.factory import mission, stamp
from tests.hud.conftest import until
from tests.hud.test_approvals import capture, open_request


async def test_the_hud_sees_a_request_gone_before_the_re_check(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir, live=False)  # no watcher: only the act's re-read can see it
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        toasts = capture(app)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press(*"too late")
        (state_dir / request_path("beta", "r1")).unlink()  # the agent withdrew it meanwhile
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ReasonDialog))
        await pilot.pause(0.2)
        assert not (state_dir / decision_path("beta", "r1")).exists(), toasts
        assert any("gone" in toast for toast in toasts), toasts


def test_hud_decide_sees_a_request_gone_before_the_re_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "state"
    later = stamp(datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2))
    mission(root, "beta", "Deploy").request("ro", risk="read_only", tool="ls", expires_at=later)
    asked = Flags.reason

    async def reason(self: Flags, review: Review, verdict: Verdict) -> str | None:
        (root / request_path("beta", "ro")).unlink()  # withdrawn while the human answered
        return await asked(self, review, verdict)

    monkeypatch.setattr(Flags, "reason", reason)
    assert main(["decide", str(root), "beta", "ro", "reject", "--reason", "late"]) == 1
    assert not (root / decision_path("beta", "ro")).exists()
