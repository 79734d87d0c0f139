"""`hud notify` against a local receiver: each event type reaches it, once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.factory import mission
from tests.notify.receiver import Receiver
from tests.notify.support import args, file_request, running, until, write_config


def now() -> datetime:
    return datetime.now(UTC)


async def test_a_new_request_is_sent_with_what_to_decide_and_how(
    root: Path, config: Path, receiver: Receiver
) -> None:
    write_config(config, ssh="ssh -p 2222 hud.example.org")
    given = args(receiver.url(), web_url="https://hud.example.org/base/")
    async with running(root, given):
        assert receiver.received == []  # nothing pending yet
        file_request(root, "alpha", "r-1", tool="deploy", summary="ship v2 to prod")
        assert await until(lambda: len(receiver.received) == 1)
    sent = receiver.received[0]
    assert sent["title"] == "Approval needed: alpha/r-1"
    assert sent["type"] == "warning"
    body = sent["message"]
    assert "alpha/r-1: deploy (external_write, plan v1)" in body
    assert "ship v2 to prod" in body
    assert "Expires: never" in body
    assert "Answer: ssh -p 2222 hud.example.org" in body
    assert "Open: https://hud.example.org/base/?open=alpha/r-1" in body


async def test_the_link_url_encodes_the_ids(root: Path, config: Path, receiver: Receiver) -> None:
    from hud.notify.events import Event
    from hud.notify.message import Answer

    link = Answer(web_url="https://h/").link(Event("pending", "a b", "r#1?x"))
    assert link == "https://h/?open=a%20b/r%231%3Fx"


async def test_a_request_about_to_expire_is_sent_again_as_expiring(
    root: Path, config: Path, receiver: Receiver
) -> None:
    write_config(config, lead_seconds=60, lead_fraction=1.0)
    async with running(root, args(receiver.url())):
        file_request(root, "alpha", "far", expires_at=now() + timedelta(hours=1))
        file_request(root, "alpha", "soon", expires_at=now() + timedelta(seconds=30))
        assert await until(lambda: len(receiver.received) == 3)
    titles = sorted(receiver.titles())
    assert titles == [
        "Approval needed: alpha/far",
        "Approval needed: alpha/soon",
        "Expiring soon: alpha/soon",
    ]
    expiring = next(m for m in receiver.received if m["title"].startswith("Expiring"))
    assert expiring["type"] == "failure"
    assert "Expires: in " in expiring["message"]


async def test_a_lead_is_a_fraction_of_a_short_lifetime(
    root: Path, config: Path, receiver: Receiver
) -> None:
    """A request that lives 40 s is warned of 10 s before (a quarter), not 5 min before."""
    write_config(config, lead_seconds=300, lead_fraction=0.25)
    async with running(root, args(receiver.url())):
        file_request(root, "alpha", "short", valid_for=timedelta(seconds=40))
        assert await until(lambda: len(receiver.received) == 1)
        assert not await until(lambda: len(receiver.received) > 1, timeout=1.0)
    assert receiver.titles() == ["Approval needed: alpha/short"]


async def test_expired_unanswered_follows_a_pending_it_told_of(
    root: Path, config: Path, receiver: Receiver
) -> None:
    async with running(root, args(receiver.url())):
        file_request(root, "alpha", "r1", expires_at=now() + timedelta(seconds=2))
        assert await until(lambda: "Request expired unanswered: alpha/r1" in receiver.titles())
    assert receiver.titles() == [
        "Approval needed: alpha/r1",
        "Expiring soon: alpha/r1",
        "Request expired unanswered: alpha/r1",
    ]
    assert receiver.received[-1]["type"] == "info"


async def test_an_old_expired_request_nobody_was_told_of_is_not_news(
    root: Path, config: Path, receiver: Receiver
) -> None:
    file_request(
        root, "alpha", "old", expires_at=now() - timedelta(minutes=5), at=now() - timedelta(hours=1)
    )
    async with running(root, args(receiver.url())):
        file_request(root, "alpha", "new")
        assert await until(lambda: len(receiver.received) == 1)
        assert not await until(lambda: len(receiver.received) > 1, timeout=1.0)
    assert receiver.titles() == ["Approval needed: alpha/new"]


async def test_a_withdrawn_request_is_told_to_whoever_heard_of_it(
    root: Path, config: Path, receiver: Receiver
) -> None:
    from store.writers.agent import AgentWriter

    async with running(root, args(receiver.url())):
        file_request(root, "alpha", "r1")
        assert await until(lambda: len(receiver.received) == 1)
        AgentWriter(root, "alpha", "agent").waiter("r1", "withdrawn", "the user pressed Esc")
        assert await until(lambda: len(receiver.received) == 2)
    withdrawn = receiver.received[1]
    assert withdrawn["title"] == "Request withdrawn: alpha/r1"
    assert "withdrew the request: the user pressed Esc" in withdrawn["message"]


async def test_a_mission_over_budget_needs_you(
    root: Path, config: Path, receiver: Receiver
) -> None:
    async with running(root, args(receiver.url())):
        assert receiver.received == []
        from tests.factory import resume

        resume(root, "alpha").usage(25.0, 1000, 3)  # the budget is $10
        assert await until(lambda: len(receiver.received) == 1)
    sent = receiver.received[0]
    assert sent["title"] == "Mission needs you: alpha"
    assert "usage past the budget: usd 25 of 10 (2.5x)" in sent["message"]
    assert sent["type"] == "failure"


async def test_a_broken_file_needs_you_once_and_again_when_it_breaks_anew(
    root: Path, config: Path, receiver: Receiver
) -> None:
    intent = root / "missions" / "alpha" / "intent.toml"
    good = intent.read_text()
    async with running(root, args(receiver.url())):
        intent.write_text("schema = 1\ntitle = [\n")
        assert await until(lambda: len(receiver.received) == 1)
        assert receiver.received[0]["title"] == "Mission needs you: alpha"
        assert "intent.toml" in receiver.received[0]["message"]
        intent.write_text(good)
        assert not await until(lambda: len(receiver.received) > 1, timeout=1.0)
        intent.write_text("schema = 1\ntitle = [\n")  # broken again: news again
        assert await until(lambda: len(receiver.received) == 2)
    assert receiver.titles() == ["Mission needs you: alpha"] * 2


async def test_each_event_is_sent_once_across_restarts(
    root: Path, config: Path, receiver: Receiver
) -> None:
    file_request(root, "alpha", "r1")
    async with running(root, args(receiver.url())):
        assert await until(lambda: len(receiver.received) == 1)
    async with running(root, args(receiver.url())):  # a restart: r1 was sent
        file_request(root, "alpha", "r2")
        assert await until(lambda: len(receiver.received) == 2)
        assert not await until(lambda: len(receiver.received) > 2, timeout=1.0)
    assert receiver.titles() == ["Approval needed: alpha/r1", "Approval needed: alpha/r2"]
    record = next((root.parent / "sent").glob("sent-*.json"))
    assert oct(record.stat().st_mode & 0o777) == "0o600"
    keys = next(iter(json.loads(record.read_text())["targets"].values()))
    assert set(keys) == {"pending:alpha/r1", "pending:alpha/r2"}
    assert not any(p.name.startswith("sent") for p in root.rglob("*"))  # never in DIR


async def test_filters_pick_missions_risks_and_severities(
    root: Path, config: Path, tmp_path: Path
) -> None:
    mission(root, "beta").step("s1", "running")
    with Receiver() as alpha_only, Receiver() as risky, Receiver() as urgent:
        write_config(
            config,
            targets=[
                {"url": alpha_only.url(), "missions": ["al*"]},
                {"url": risky.url(), "risks": ["irreversible"]},
                {"url": urgent.url(), "severities": ["critical"]},
            ],
        )
        async with running(root, args()):
            file_request(root, "alpha", "a1", risk="reversible_write")
            file_request(root, "beta", "b1", risk="irreversible")
            assert await until(lambda: len(alpha_only.received) == 1 and len(risky.received) == 1)
            assert not await until(lambda: len(urgent.received) > 0, timeout=1.0)
    assert alpha_only.titles() == ["Approval needed: alpha/a1"]
    assert risky.titles() == ["Approval needed: beta/b1"]
    assert urgent.received == []


def test_hud_serve_notify_tells_how_to_reach_it(tmp_path: Path) -> None:
    """`hud serve --notify`: the notifier runs beside the server, and a notification says
    the ssh command of the port it listens on."""
    from tests.e2e.serve_support import served

    config = tmp_path / "notify.toml"
    write_config(config)
    env = {"HUD_NOTIFY_CONFIG": str(config), "HUD_NOTIFY_STATE": str(tmp_path / "sent")}
    with Receiver() as receiver:
        with served(tmp_path, "--notify", "--notify-to", receiver.url(), env=env) as server:
            assert receiver.wait_for(lambda: len(receiver.received) == 1)
        sent = receiver.received[0]
    assert sent["title"] == "Approval needed: beta/r1"
    assert f"Answer: ssh -p {server.port} 127.0.0.1" in sent["message"]


async def test_a_bug_in_a_step_ends_the_run_with_it(
    root: Path, config: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notifier whose loop died would look alive and tell no one: it ends, loudly."""
    import asyncio

    from cli.commands.notify import prepare
    from hud.notify import notifier as loop

    def broken(*_: object) -> list[object]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(loop, "derive_events", broken)
    notifier = prepare(root, args(receiver.url()), "hud notify")
    assert notifier is not None
    with pytest.raises(RuntimeError, match="a bug"):
        await asyncio.wait_for(notifier.run(asyncio.Event()), 20)


async def test_another_source_needing_you_for_its_errors_is_sent(
    tmp_path: Path, config: Path, receiver: Receiver
) -> None:
    """A loopexec run with broken receipts needs you as a mission does: one event per
    error, as the workspace's problems name them."""
    import shutil

    from tests.small_support import LOOPEXEC_FIXTURES

    root = tmp_path / "project"
    shutil.copytree(LOOPEXEC_FIXTURES / "bad", root)
    async with running(root, args(receiver.url())):
        assert await until(lambda: len(receiver.received) == 2)
        assert not await until(lambda: len(receiver.received) > 2, timeout=1.0)
    assert receiver.titles() == ["Mission needs you: loopexec:broken"] * 2
    said = "\n".join(m["message"] for m in receiver.received)
    assert ".loopexec/run-broken.jsonl:2:" in said and ".loopexec/run-broken.jsonl:3:" in said


async def test_a_waiter_that_dies_is_a_withdrawal(
    root: Path, config: Path, receiver: Receiver
) -> None:
    """Its lock drops with it and no file changes: the notifier tests held leases."""
    from store.derivation.lease import Lease

    lease = Lease.take(root, "alpha", "r1")
    file_request(root, "alpha", "r1")
    async with running(root, args(receiver.url())):
        assert await until(lambda: len(receiver.received) == 1)
        lease.release()  # as the kernel does for a killed process
        assert await until(lambda: len(receiver.received) == 2)
    assert receiver.titles()[1] == "Request withdrawn: alpha/r1"
    assert "nobody waiting: the process that filed it is gone" in receiver.received[1]["message"]
