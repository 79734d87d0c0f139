"""Roles: a reviewer browses, an approver decides requests and nothing else, an operator
does everything. The keys the role does not allow are hidden and do nothing, and the
acts themselves refuse: an approver's HUD holds a decider, never a writer."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import TextArea

from hud.acts.documents import edit_document
from hud.acts.session import Decider, HumanWriter, Session, inline
from hud.app import HudApp
from hud.screens.approvals import RequestScreen
from hud.screens.mission import MissionScreen
from store.format.layout import Kind
from tests.hud.conftest import until

EDITS = ("edit_intent", "edit_constraints", "adjust_budget")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_an_approver_decides_and_edits_nothing(
    state_dir: Path, make_app: Callable[..., HudApp]
) -> None:
    constraints = state_dir / "missions/beta/constraints.toml"
    before = digest(constraints)
    app = make_app(state_dir, role="approver")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        assert app.writer is None and isinstance(app.decider, Decider) and not app.read_only
        assert app.screen.check_action("new_mission", ()) is False
        app.push_screen(MissionScreen("beta"))
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        screen = app.screen
        for action in EDITS:
            assert screen.check_action(action, ()) is False
        shown = {binding.action for _, binding, enabled, _ in screen.active_bindings.values()}
        assert not set(EDITS) & shown
        for key in ("E", "e", "b", "plus"):
            await pilot.press(key)
            await pilot.pause(0.1)
            assert app.screen is screen, key  # no editor opened
        app.push_screen(RequestScreen("beta", "r1"))
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        await until(pilot, lambda: app.screen.review is not None)
        assert app.screen.check_action("approve", ()) is True
        assert app.screen.check_action("reject", ()) is True
    assert digest(constraints) == before


async def test_an_operator_may_edit(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir)  # no role: the local HUD, an operator
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        assert app.role == "operator" and app.writer is not None
        app.push_screen(MissionScreen("beta"))
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        screen = app.screen
        assert all(screen.check_action(action, ()) for action in EDITS[:2])  # budget: its tab
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.focused, TextArea))  # the editor opened


async def test_a_reviewer_may_not_decide(state_dir: Path, make_app: Callable[..., HudApp]) -> None:
    app = make_app(state_dir, role="reviewer")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        assert app.writer is None and app.decider is None and app.read_only
        app.push_screen(RequestScreen("beta", "r1"))
        await until(pilot, lambda: isinstance(app.screen, RequestScreen))
        assert app.screen.check_action("approve", ()) is False


class _NoAsk:
    """An editor that would save anything: never reached without a writer."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"asked {name}")


async def test_an_approvers_session_cannot_edit_even_when_asked(state_dir: Path) -> None:
    from store.index.workspace import Workspace

    writer = HumanWriter(state_dir, "bob", "test")
    session = Session(
        Workspace(state_dir),
        None,
        lambda _: None,
        lambda *a, **k: None,
        inline,
        lambda _: asyncio.sleep(0),
        decider=Decider(writer),
    )
    before = digest(state_dir / "missions/beta/constraints.toml")
    saved = await edit_document(session, _NoAsk(), "beta", Kind.CONSTRAINTS)  # type: ignore[arg-type]
    assert saved is None
    assert digest(state_dir / "missions/beta/constraints.toml") == before
    assert session.decisions is session.decider
    for name in ("replace", "replace_small", "create_document", "create_mission", "root"):
        assert not hasattr(session.decider, name)


@pytest.mark.parametrize("role", ["reviewer", "approver", "operator"])
def test_the_cli_takes_a_role(role: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli import launch
    from cli.main import main

    seen: dict[str, object] = {}
    monkeypatch.setattr(launch, "open_app", lambda root, **options: seen.update(options) or 0)
    main([str(tmp_path), f"--role={role}"])
    assert seen["role"] == role
    main([str(tmp_path)])
    assert seen["role"] == "operator"
