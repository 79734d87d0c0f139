"""watch_batches: changed paths arrive relative, debounced briefly, temp files dropped."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from store.index.watch import DEBOUNCE_MS, watch_batches


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
    stop = asyncio.Event()
    batches = watch_batches(tmp_path, stop)
    waiting = asyncio.create_task(
        first_batch_containing(batches, "missions/m/events.jsonl", timeout=3.0)
    )
    await asyncio.sleep(0.2)  # let the watcher start
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
    stop = asyncio.Event()
    batches = watch_batches(tmp_path, stop)
    waiting = asyncio.create_task(first_batch_containing(batches, "b.toml", timeout=3.0))
    await asyncio.sleep(0.2)
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
