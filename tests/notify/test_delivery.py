"""`hud notify`'s deliveries: a burst is paced and summed up, hostile text stays text,
a failing target is reported and retried, and no secret of a target URL is shown."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hud.notify.message import inert
from tests.factory import mission, toml_text
from tests.notify.receiver import Receiver
from tests.notify.support import args, file_request, running, until, write_config

SECRET = "s3cretTok3n"


def covered(message: dict[str, str]) -> int:
    """How many events one received message tells of (one, or a digest's count)."""
    found = re.match(r"(\d+) more notifications$", message["title"])
    return int(found.group(1)) if found else 1


async def test_a_burst_of_500_requests_is_paced_and_summed_up_in_a_digest(
    root: Path, config: Path, receiver: Receiver
) -> None:
    write_config(config, burst=5, refill_seconds=1.0)
    async with running(root, args(receiver.url())) as notifier:
        for n in range(500):
            file_request(root, "alpha", f"r{n:03d}")
        assert await until(lambda: sum(map(covered, receiver.received)) >= 500, timeout=60)
        sends = notifier.couriers[0].sends
    assert sum(map(covered, receiver.received)) == 500  # each told once, none lost
    assert len(receiver.received) == sends <= 15  # not 500 messages
    digests = [m for m in receiver.received if covered(m) > 1]
    assert digests, "a burst past the limit is summed up"
    assert "pending" in digests[0]["message"] and "- and " in digests[0]["message"]
    record = next((root.parent / "sent").glob("sent-*.json"))
    keys = next(iter(json.loads(record.read_text())["targets"].values()))
    assert {f"pending:alpha/r{n:03d}" for n in range(500)} <= set(keys)


async def test_a_message_on_its_way_as_hud_notify_stops_is_said_and_kept_as_sent(
    root: Path, config: Path, receiver: Receiver
) -> None:
    """Stopped by a signal while a message is out (posted, its answer not back yet), `hud
    notify` still says it went and records it: the next run does not send it again."""
    file_request(root, "alpha", "r1")
    receiver.answering.clear()
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "notify", str(root), "--to", receiver.url()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert await until(lambda: len(receiver.received) == 1, timeout=30)
        process.send_signal(signal.SIGTERM)
        threading.Timer(0.5, receiver.answering.set).start()  # answered as it stops
        out, err = await asyncio.to_thread(process.communicate, timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "sent pending:alpha/r1" in out
    file_request(root, "alpha", "r2")
    async with running(root, args(receiver.url())):
        assert await until(lambda: len(receiver.received) == 2)
        await asyncio.sleep(0.5)
    assert ["r1" in m["message"] for m in receiver.received] == [True, False]


HOSTILE = (
    "\u202eevil\u202c \x1b[31mred\x1b[0m \x07 zero\u200bwidth "
    "<!channel> <!here> <@U024BE7LH> @everyone @room "
    "[click here](https://evil.example/steal) <https://evil.example|ok> "
    "<a href='https://evil.example'>x</a> www.evil.example " + "long " * 200
)


def test_inert_text_holds_no_mention_link_markup_or_control() -> None:
    shown = inert(HOSTILE)
    for raw in ("<", ">", "@", "](", "://", "www.", "\u202e", "\x1b", "\x07", "\u200b"):
        assert raw not in shown
    assert "⟨U+202E⟩" in shown and "␛[31m" in shown and "␇" in shown
    assert "‹!channel›" in shown and "＠everyone" in shown and "https[:]//evil" in shown
    assert len(shown) == 200 and shown.endswith("…")


async def test_hostile_agent_text_arrives_as_inert_text(
    root: Path, config: Path, receiver: Receiver
) -> None:
    mission(root, "bad").step("s1", "running")
    file_request(root, "bad", "r1", tool="<@U1> deploy https://x.example", summary=HOSTILE)
    async with running(root, args(receiver.url())):
        assert await until(lambda: len(receiver.received) == 1)
    sent = receiver.received[0]
    text = sent["title"] + "\n" + sent["message"]
    for raw in ("<", "@", "://", "\u202e", "\x1b", "\x07", "\u200b", "]("):
        assert raw not in text
    assert "⟨U+202E⟩evil⟨U+202C⟩" in text
    assert len(sent["message"]) <= 1500


async def test_a_failing_target_is_reported_retried_with_back_off_and_delivered(
    root: Path, config: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(config, retry_seconds=0.3)
    receiver.fail = 3  # three 500s, then accepted
    file_request(root, "alpha", "r1")
    async with running(root, args(receiver.url(f"bob:{SECRET}@"))):
        assert await until(lambda: len(receiver.received) == 1, timeout=20)
    assert receiver.attempts == 4
    err = capsys.readouterr().err
    failures = [line for line in err.splitlines() if "failed" in line]
    assert len(failures) == 3
    assert "json://…@127.0.0.1" in failures[0]
    waits = [float(re.search(r"again in ([\d.]+)s", line).group(1)) for line in failures]
    assert waits == [0.3, 0.6, 1.2]  # doubling
    assert SECRET not in err


async def test_a_refused_target_is_reported_and_the_others_still_get_theirs(
    root: Path, config: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once closed
    refused = f"json://user:{SECRET}@127.0.0.1:{port}/{SECRET}"
    file_request(root, "alpha", "r1")
    async with running(root, args(refused, receiver.url())) as notifier:
        assert await until(lambda: len(receiver.received) == 1)
        assert await until(lambda: notifier.couriers[0].failures >= 2, timeout=20)
    out, err = capsys.readouterr()
    assert f"delivery to json://…@127.0.0.1:{port}/… failed" in err
    assert SECRET not in out + err


def test_targets_are_listed_without_their_secrets(config: Path, root: Path) -> None:
    write_config(
        config,
        targets=[
            {"url": f"ntfys://alice:{SECRET}@ntfy.example.org/{SECRET}", "risks": ["irreversible"]},
            {"url": f"slack://T1AAAA/B1BBBB/{SECRET}/#ops"},
        ],
    )
    shown = subprocess.run(
        [sys.executable, "-m", "cli.main", "notify", str(root), "--targets"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert SECRET not in shown
    assert "ntfys://…@ntfy.example.org/… (notify.toml): risks: irreversible" in shown
    assert "slack://" in shown


def test_workspace_targets_are_used_only_where_the_person_trusts_the_workspace(
    config: Path, root: Path
) -> None:
    (root / "hud.toml").write_text(
        toml_text({"schema": 1}) + '\n[[notify]]\nurl = "json://agent.example/"\n'
    )
    command = [sys.executable, "-m", "cli.main", "notify", str(root), "--targets"]
    untrusted = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert untrusted.returncode == 2  # no target of its own: nothing to run
    assert "hud.toml names 1 notification target(s), not used" in untrusted.stderr
    assert "agent.example" not in untrusted.stdout
    write_config(config, trust_workspaces=[str(root)])
    trusted = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    assert "json://agent.example/ (hud.toml): everything" in trusted.stdout
    once = subprocess.run(
        [*command[:-1], "--workspace-targets", "--targets"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "HUD_NOTIFY_CONFIG": str(config.parent / "none.toml")},
    )
    assert "json://agent.example/ (hud.toml)" in once.stdout


def test_a_bad_notify_toml_or_target_stops_the_run_saying_why(config: Path, root: Path) -> None:
    config.write_text("schema = 1\nburst = 0\n")
    bad = subprocess.run(
        [sys.executable, "-m", "cli.main", "notify", str(root), "--to", "json://h/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "burst" in bad.stderr
    config.write_text("schema = 1\n")
    unknown = subprocess.run(
        [sys.executable, "-m", "cli.main", "notify", str(root), "--to", f"nope://{SECRET}@h/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unknown.returncode == 2 and "'nope' target Apprise cannot use" in unknown.stderr
    assert SECRET not in unknown.stderr


@pytest.mark.parametrize(
    "url",
    [
        f"ntfys://{SECRET}@ntfy.example.org/topic",  # a token as the user name
        f"ntfys://alice:{SECRET}@ntfy.example.org/{SECRET}",
        f"json://127.0.0.1:9/{SECRET}?token={SECRET}",
        f"slack://T1AAAA/B1BBBB/{SECRET}/#ops",
        f"https://hooks.slack.com/services/T1AAAA/B1BBBB/{SECRET}",
        f"tgram://123456789:{SECRET}/4242",
        f"pover://{SECRET}@{SECRET}",
        f"mailtos://user:{SECRET}@mail.example.org",
        f"discord://1234/{SECRET}",
    ],
)
def test_a_target_is_shown_without_any_secret(url: str) -> None:
    from hud.notify.config import make_target
    from store.format.records import NotifyTarget

    shown = make_target(NotifyTarget(url=url), "--to").shown
    assert SECRET not in shown and "://" in shown


def test_a_closed_stdout_ends_hud_notify_quietly(
    root: Path, config: Path, receiver: Receiver
) -> None:
    """`hud notify DIR | head -1`: the next line it prints ends it, exit 141, no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "notify", str(root), "--to", receiver.url()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        assert "notifying" in process.stdout.readline()
        assert "watching" in process.stdout.readline()
        process.stdout.close()  # as `head -2` does
        file_request(root, "alpha", "r1")  # a send: a line to print
        assert process.wait(timeout=30) == 141
        assert process.stderr.read() == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
