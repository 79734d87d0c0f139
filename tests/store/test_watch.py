"""watch_batches: changed paths arrive relative, debounced briefly, temp files dropped; the
watcher arms in a child process (never holding this one's GIL) that is gone once the
watch ends."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from store.index.watch import DEBOUNCE_MS, watch_batches
from tests.e2e.pty_screen import descendants


def inotify_descriptors() -> int:
    """How many inotify instances this process holds (Linux /proc)."""
    fds = Path("/proc/self/fd")
    found = 0
    for fd in fds.iterdir():
        try:
            found += "inotify" in (fds / fd.name).readlink().name
        except OSError:
            continue  # closed since listed
    return found


async def first_batch_containing(
    batches: AsyncIterator[set[str]], wanted: str, timeout: float
) -> tuple[set[str], set[str]]:
    """The union of batches until one holds `wanted`, and that batch."""
    seen: set[str] = set()
    async with asyncio.timeout(timeout):
        async for batch in batches:
            seen |= batch
            if wanted in batch:
                return seen, batch
    raise AssertionError("the watcher stopped")


async def test_a_written_file_arrives_within_a_second(tmp_path: Path) -> None:
    folder = tmp_path / "missions" / "m"
    folder.mkdir(parents=True)
    stop, armed = asyncio.Event(), asyncio.Event()
    batches = watch_batches(tmp_path, stop, armed=armed.set)
    waiting = asyncio.create_task(
        first_batch_containing(batches, "missions/m/events.jsonl", timeout=10.0)
    )
    await asyncio.wait_for(armed.wait(), 10.0)
    written = time.monotonic()
    (folder / ".intent.toml.tmp42").write_text("temp")
    (folder / "events.jsonl").write_bytes(b'{"seq":1}\n')
    seen, _ = await waiting
    latency = time.monotonic() - written
    stop.set()
    assert latency < 1.0
    assert "missions/m/events.jsonl" in seen
    assert all(not path.startswith("/") for path in seen)  # relative, POSIX
    assert "missions/m/.intent.toml.tmp42" not in seen  # transient files are dropped


async def test_changes_close_together_come_in_one_batch(tmp_path: Path) -> None:
    stop, armed = asyncio.Event(), asyncio.Event()
    batches = watch_batches(tmp_path, stop, armed=armed.set)
    waiting = asyncio.create_task(first_batch_containing(batches, "b.toml", timeout=10.0))
    await asyncio.wait_for(armed.wait(), 10.0)
    for name in ("a.toml", "b.toml"):
        (tmp_path / name).write_text("x")
        (tmp_path / name).write_text("xy")  # twice: the path appears once
    _, batch = await waiting
    stop.set()
    assert batch == {"a.toml", "b.toml"}
    assert DEBOUNCE_MS <= 50


async def test_stop_event_ends_the_iteration(tmp_path: Path) -> None:
    stop = asyncio.Event()

    async def drain() -> int:
        count = 0
        async for _ in watch_batches(tmp_path, stop):
            count += 1
        return count

    task = asyncio.create_task(drain())
    await asyncio.sleep(0.1)
    stop.set()
    async with asyncio.timeout(2.0):
        assert await task == 0


async def test_the_watcher_arms_in_a_child_that_is_gone_once_the_watch_ends(
    tmp_path: Path,
) -> None:
    for n in range(50):
        (tmp_path / "missions" / f"m{n}" / "plan").mkdir(parents=True)
    stop = asyncio.Event()
    armed = asyncio.Event()
    batches = watch_batches(tmp_path, stop, armed=armed.set)
    waiting = asyncio.create_task(
        first_batch_containing(batches, "missions/m49/plan/v1.json", timeout=10.0)
    )
    async with asyncio.timeout(10.0):
        await armed.wait()
    assert inotify_descriptors() == 0  # its inotify instance is the child's
    children = descendants(os.getpid())
    assert children
    (tmp_path / "missions/m49/plan/v1.json").write_text("{}")  # after `armed`: reported
    await waiting
    await batches.aclose()  # the watch's end kills and reaps its child
    assert not descendants(os.getpid()) & children


async def test_the_watchers_child_imports_nothing_from_the_folder_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = tmp_path / "decoy"
    for package in ("store", "watchfiles"):
        (decoy / package).mkdir(parents=True)
        (decoy / package / "__init__.py").write_text("raise SystemExit('imported the decoy')\n")
    monkeypatch.chdir(decoy)
    monkeypatch.setenv("PYTHONPATH", str(decoy))
    watched = tmp_path / "state"
    watched.mkdir()
    stop, armed = asyncio.Event(), asyncio.Event()
    batches = watch_batches(watched, stop, armed=armed.set)
    waiting = asyncio.create_task(first_batch_containing(batches, "hud.toml", timeout=10.0))
    await asyncio.wait_for(armed.wait(), 10.0)
    (watched / "hud.toml").write_text("schema = 1\n")
    await waiting
    await batches.aclose()
