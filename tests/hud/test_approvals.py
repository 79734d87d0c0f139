"""Pilot flows of the approvals queue and the request screen: decide, refuse, race."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey

from hud.app import HudApp
from hud.screens.approvals import ApprovalsScreen, RequestScreen
from hud.screens.decide import ConfirmDialog, ReasonDialog, TypeToolDialog
from store.writers.agent import authorize
from store.writers.human import HumanWriter
from tests.factory import T0, mission, resume, stamp
from tests.hud.conftest import until
from tests.store.test_plan_binding import V1, without, write_plan
from widgets.keys import key_of
from widgets.request_view import QueueTable, RequestView

HOSTILE = {"cmd": "echo hi \u202e", "clip": "\x1b]52;c;SGVsbG8=\x07", "title": "\x1b]0;pwned\x07"}


def capture(app: HudApp) -> list[str]:
    """Every toast's message (and title) from now on."""
    seen: list[str] = []
    original = app.notify

    def notify(message: str, *args: Any, **kwargs: Any) -> None:
        seen.append(f"{kwargs.get('title', '')}: {message}")
        original(message, *args, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return seen


def decision_of(root: Path, mission_id: str, request_id: str) -> dict[str, Any]:
    return tomllib.loads((root / f"missions/{mission_id}/approvals/{request_id}.toml").read_text())


def queue_keys(app: HudApp) -> list[str]:
    return app.screen.query_one(QueueTable).keys


async def open_request(pilot: Any, app: HudApp, key: str = "beta/r1") -> RequestScreen:
    await until(pilot, lambda: app.scanned.is_set())
    await pilot.press("a")
    await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))
    await until(pilot, lambda: key in queue_keys(app))
    table = app.screen.query_one(QueueTable)
    table.move_cursor(row=queue_keys(app).index(key))
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, RequestScreen))
    screen = app.screen
    assert isinstance(screen, RequestScreen)
    await until(pilot, lambda: screen.review is not None)
    return screen


async def not_offered(pilot: Any, app: HudApp) -> None:
    """A request that waits for no decision offers neither `y` nor `n` (footer, help),
    and the keys do nothing: no dialog, no toast."""
    screen = app.screen
    toasts = capture(app)

    def footer() -> str:
        return " ".join(key.description for key in screen.query(FooterKey))

    # the footer is composed again after the frame that changed the keys
    await until(pilot, lambda: "Approve" not in footer() and "Reject" not in footer())
    assert key_of(screen, "request.approve") is None and key_of(screen, "request.reject") is None
    await pilot.press("y", "n")
    await pilot.pause(0.2)
    assert app.screen is screen and not toasts


def shown(app: HudApp) -> str:
    views = app.screen.query(RequestView)
    if not views:
        return ""
    view = views.first()
    return "\n".join(str(text.plain) for text in view._shown.values())


async def test_queue_badge_and_request_details(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        text = shown(app)
        assert "beta · Deploy the service" in text
        assert "v1 (latest v1) · step s1" in text
        assert '"target": "prod"' in text
        assert "sha256:" in text and "requested:   agent at 2025-01-01 12:00:00Z" in text
        header = str(app.screen.query_one("#hud-header").render())
        assert "? 1 approval " in header


async def test_approve_external_write_with_confirmation(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press(*"looks right", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: (state_dir / "missions/beta/approvals/r1.toml").exists())
        await until(pilot, lambda: "approved by" in shown(app))
        assert app.writer is not None
        saved = decision_of(state_dir, "beta", "r1")
        assert saved["decision"] == "approve" and saved["reason"] == "looks right"
        assert saved["decided_by"] == app.writer.user and saved["origin"] == app.writer.origin
        assert saved["valid_until"] > saved["decided_at"]
        assert (saved["valid_until"] - saved["decided_at"]).total_seconds() == 3600
        assert authorize(state_dir, "beta", "r1").ok


async def test_confirmation_declined_writes_nothing(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        await pilot.press("y", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        await pilot.pause(0.1)
    assert not (state_dir / "missions/beta/approvals/r1.toml").exists()


async def test_reject_needs_a_reason(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ReasonDialog)
        error = app.screen.query_one("#reason-error").render()
        assert "needs a reason" in str(error)
        await pilot.press(*"wrong target", "enter")
        await until(pilot, lambda: (state_dir / "missions/beta/approvals/r1.toml").exists())
    saved = decision_of(state_dir, "beta", "r1")
    assert saved["decision"] == "reject" and saved["reason"] == "wrong target"
    assert "valid_until" not in saved
    assert not authorize(state_dir, "beta", "r1").ok


async def test_irreversible_asks_for_the_tool_name(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    beta = mission(root, "beta", "Drop the table")
    beta.request("r1", risk="irreversible", tool="drop_table", args={"table": "users"})
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        await pilot.press("y", "enter")
        await until(pilot, lambda: isinstance(app.screen, TypeToolDialog))
        await pilot.press(*"drop", "enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, TypeToolDialog)
        assert not (root / "missions/beta/approvals/r1.toml").exists()
        await pilot.press(*"_table", "enter")
        await until(pilot, lambda: (root / "missions/beta/approvals/r1.toml").exists())
    assert decision_of(root, "beta", "r1")["decision"] == "approve"


async def test_read_only_request_is_approved_without_confirmation(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    mission(root, "beta").request("r1", risk="read_only", tool="ls", args={"path": "/"})
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        await pilot.press("y", "enter")
        await until(pilot, lambda: (root / "missions/beta/approvals/r1.toml").exists())
    assert decision_of(root, "beta", "r1")["reason"] == ""


async def test_hostile_args_fail_closed(tmp_path: Path, make_app: Callable[..., HudApp]) -> None:
    root = tmp_path / "state"
    mission(root, "beta").request("r1", args=HOSTILE)
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        toasts = capture(app)
        await open_request(pilot, app)
        text = shown(app)
        assert "cannot approve: tool or args contain control or invisible characters" in text
        assert "\x1b" not in text and "\u202e" not in text
        assert "\\u202e" in text and "\\u001b]52;c;SGVsbG8=\\u0007" in text
        assert not app.screen.check_action("approve", ())  # not offered: it cannot succeed
        assert app.screen.check_action("reject", ())
        await pilot.press("y")
        await pilot.pause(0.2)
        assert isinstance(app.screen, RequestScreen) and not toasts
        assert not (root / "missions/beta/approvals/r1.toml").exists()
        await pilot.press("n", *"hostile args", "enter")
        await until(pilot, lambda: (root / "missions/beta/approvals/r1.toml").exists())
    assert decision_of(root, "beta", "r1")["decision"] == "reject"


async def test_request_not_matching_plan_fails_closed(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", step="s7")
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        toasts = capture(app)
        await open_request(pilot, app)
        assert "step 's7' is not in plan v1" in shown(app)
        assert not app.screen.check_action("approve", ())  # not offered: it cannot succeed
        await pilot.press("y")
        await pilot.pause(0.2)
        assert isinstance(app.screen, RequestScreen) and not toasts
    assert not (root / "missions/beta/approvals/r1.toml").exists()


async def test_stale_request_shows_what_changed(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    beta = resume(state_dir, "beta")
    raw = beta.request("r2", args={"target": "staging", "replicas": 2})
    HumanWriter(state_dir, "alice", "local").decide("beta", "r2", raw, "approve")
    beta.request("r2", args={"target": "prod", "replicas": 2})
    app = make_app(state_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.press("a", "h")
        await until(pilot, lambda: "beta/r2" in queue_keys(app))
        app.open_request("beta", "r2")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        await until(pilot, lambda: "changed since it was approved" in shown(app))
        text = shown(app)
        assert "args.target" in text and '"staging"' in text and '"prod"' in text
        assert "args.replicas" not in text
        await not_offered(pilot, app)
    assert decision_of(state_dir, "beta", "r2")["decided_by"] == "alice"
    assert not authorize(state_dir, "beta", "r2").ok


async def test_expired_request_is_not_approvable(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    mission(root, "beta").request("r1", expires_at=stamp(T0 + timedelta(seconds=10)))
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen))
        assert queue_keys(app) == []
        await pilot.press("h")
        await until(pilot, lambda: queue_keys(app) == ["beta/r1"])
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        await until(pilot, lambda: "⊘ expired" in shown(app))
        await not_offered(pilot, app)
    assert not (root / "missions/beta/approvals/r1.toml").exists()


async def test_two_apps_decide_the_same_request(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    first = make_app(state_dir)
    second = make_app(state_dir, live=False)  # has not seen the first decision land
    second.writer = HumanWriter(state_dir, "bob", "ssh 10.9.8.7")
    async with first.run_test(size=(80, 24)) as one, second.run_test(size=(80, 24)) as two:
        toasts = capture(second)
        await open_request(one, first)
        await open_request(two, second)
        await one.press("y", *"ok", "enter")
        await until(one, lambda: isinstance(first.screen, ConfirmDialog))
        await one.press("y")
        await until(one, lambda: (state_dir / "missions/beta/approvals/r1.toml").exists())
        assert first.writer is not None
        await two.press("n", *"no way", "enter")
        who = first.writer.user
        await until(two, lambda: any(f"already decided by {who} at" in t for t in toasts))
        message = next(t for t in toasts if "already decided" in t)
        assert ": approve (ok)" in message
        await until(two, lambda: "approved by" in shown(second))
    saved = decision_of(state_dir, "beta", "r1")
    assert saved["decision"] == "approve" and saved["decided_by"] == who


async def test_new_request_toast_and_bell(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    (state_dir / "hud.toml").write_text("schema = 1\nbell = true\n")
    app = make_app(state_dir)
    bells: list[int] = []
    async with app.run_test(size=(80, 24)) as pilot:
        toasts = capture(app)
        app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.press("a")
        await until(pilot, lambda: queue_keys(app) == ["beta/r1"])
        resume(state_dir, "alpha").request("r5", tool="send_mail", args={"to": "x@example.com"})
        await until(pilot, lambda: "alpha/r5" in queue_keys(app))
        await until(pilot, lambda: any("alpha/r5: send_mail" in t for t in toasts))
        assert bells
        assert all("beta/r1" not in t for t in toasts)  # known at start: no toast


@pytest.mark.parametrize("key", ["y", "n"])
async def test_read_only_hides_decisions(
    state_dir: Path, make_app: Callable[..., HudApp], key: str
) -> None:
    app = make_app(state_dir, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_request(pilot, app)
        assert screen.check_action("approve", ()) is False
        await pilot.press(key)
        await pilot.pause(0.1)
        assert isinstance(app.screen, RequestScreen)
        active = {b.binding.key for b in app.screen.active_bindings.values()}
        assert key not in active  # hidden from the footer and help
    assert not (state_dir / "missions/beta/approvals/r1.toml").exists()


async def test_a_plan_that_drops_the_step_makes_the_open_request_stale(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    """The issue: plan v2 drops step `metrics` while its request is on screen; `y` used
    to approve it with only "plan v1 is not the latest" shown."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    write_plan(beta, 1, V1)
    beta.request("r1", step="metrics", tool="promql", args={"q": "up"}, risk="read_only")
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_request(pilot, app)
        assert screen.review is not None and screen.review.can_approve
        write_plan(beta, 2, without(V1, "metrics"))
        await until(pilot, lambda: "stale (step-removed)" in shown(app))
        text = shown(app)
        assert "its plan changed: plan v1 no longer holds" in text
        assert "v1 (latest v2) step-removed" in text
        assert "step 'metrics' of plan v1" in text and "Changed since it was decided" not in text
        await not_offered(pilot, app)
        assert app.workspace.pending_requests() == []
    assert not (root / "missions/beta/approvals/r1.toml").exists()


async def test_a_read_only_change_is_a_notice(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    root = tmp_path / "state"
    beta = mission(root, "beta")
    write_plan(beta, 1, V1)
    beta.request("r1", step="metrics", tool="promql", args={"q": "up"}, risk="read_only")
    write_plan(beta, 2, [*V1, {"id": "lint", "title": "Lint the config"}])
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_request(pilot, app)
        await until(pilot, lambda: "notice (read-only-change)" in shown(app))
        assert "v2 adds 'lint' (read_only)" in shown(app)
        await pilot.press("y")
        await until(pilot, lambda: any(isinstance(s, ReasonDialog) for s in app.screen_stack))
        await pilot.press("enter")
        await until(pilot, lambda: (root / "missions/beta/approvals/r1.toml").exists())
    assert decision_of(root, "beta", "r1")["decision"] == "approve"


async def test_a_request_stale_before_it_settles_is_not_announced(
    tmp_path: Path, make_app: Callable[..., HudApp]
) -> None:
    """The issue: a toast announced `refund-batch-resubmit`, stale at once (a newer plan
    dropped its step) and never in the queue. A request is announced only if the queue
    still shows it once the changes around it are folded; one still queued is."""
    from hud.approvals import SETTLE

    root = tmp_path / "state"
    beta = mission(root, "beta")
    write_plan(beta, 1, V1)
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        toasts = capture(app)
        await until(pilot, lambda: app.scanned.is_set())
        beta.request("refund-batch-resubmit", step="metrics", tool="promql", risk="read_only")
        await until(pilot, lambda: app.approvals.pending.count == 1)  # seen pending
        write_plan(beta, 2, without(V1, "metrics"))  # stale just after
        await until(pilot, lambda: app.approvals.pending.count == 0)
        await pilot.pause(SETTLE * 2)
        assert not any("refund-batch-resubmit" in t or "needs you" in t for t in toasts), toasts
        assert app.workspace.pending_requests() == []
        beta.request("r2", step="deploy", tool="kubectl", risk="read_only")
        await until(pilot, lambda: any("beta/r2: kubectl" in t for t in toasts))
        assert app.workspace.pending_requests() != []
