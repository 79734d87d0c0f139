"""Opening the live SMALL fixture (1.1 MB progress, 1,206 entries): time to first paint.

Target (issue 6): the live progress file opens to first paint in at most 1.0 s.

Measured in a real pseudo-terminal, the way an operator starts it (`hud DIR`), on a
copy of the fixture, median of RUNS:

* start -> overview painted with the SMALL row (process start, imports, scan, parse,
  validation of all 1,206 entries, first frame that shows the row);
* Enter (SMALL screen painted), then 3 -> the progress timeline painted with #1206;
* append one entry -> it is on screen (the watcher, the incremental re-read).

For scale, the same start on an empty directory (imports and the bare overview), the
difference, and in process: HudApp start (after imports) to the SMALL row, and loading
and validating the six files alone.
"""

from __future__ import annotations

import os
import select
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyte
from ptyprocess import PtyProcess

from bench.measure import with_bytecode

REPO = Path(__file__).resolve().parents[1]
FIXTURE = (REPO / "../shared/fixtures/small/small-protocol-live").resolve()
RUNS = 5
ROWS, COLUMNS = 24, 80


class Terminal:
    def __init__(self, argv: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update(TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS))
        self.started = time.perf_counter()
        self.process = PtyProcess.spawn(argv, dimensions=(ROWS, COLUMNS), env=env)
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)

    def wait_for(self, condition: Callable[[str], bool], timeout: float = 30.0) -> float:
        """Seconds until the screen satisfies `condition` (polled after every read)."""
        start = time.perf_counter()
        while not condition("\n".join(self.screen.display)):
            if time.perf_counter() - start > timeout:
                raise TimeoutError("\n".join(self.screen.display))
            ready, _, _ = select.select([self.process.fd], [], [], 0.01)
            if ready:
                self.stream.feed(self.process.read(1 << 16))
        return time.perf_counter() - start

    def close(self) -> None:
        self.process.write(b"q")
        deadline = time.monotonic() + 5
        while self.process.isalive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if self.process.isalive():
            self.process.terminate(force=True)


def hud_argv(root: Path) -> list[str]:
    script = Path(sys.executable).with_name("hud")
    return (
        [str(script), str(root)]
        if script.exists()
        else [sys.executable, "-m", "cli.main", str(root)]
    )


def one_run(folder: Path) -> tuple[float, float, float]:
    root = folder / "small-protocol-live"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(FIXTURE, root)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    terminal = Terminal(hud_argv(root))
    try:
        terminal.wait_for(lambda text: "SMALL:" in text and "task-29" in text)
        overview = time.perf_counter() - terminal.started
        terminal.process.write(b"\r")
        opened = terminal.wait_for(lambda text: "1 Intent" in text)
        terminal.process.write(b"3")
        timeline = opened + terminal.wait_for(
            lambda text: "1206 " in text and "Resolved the non-fast" in text
        )
        with (root / ".small" / "progress.small.yml").open("a") as handle:
            handle.write(
                "    - command: echo bench-append\n      evidence: appended by the bench\n"
                "      status: completed\n      task_id: task-46\n"
                '      timestamp: "2026-04-02T08:00:00.000000001Z"\n'
            )
        appended = terminal.wait_for(lambda text: "1207 " in text)
    finally:
        terminal.close()
    return overview, timeline, appended


def baseline(folder: Path) -> float:
    """The same HUD on an empty directory: start -> overview painted (imports, app, frame)."""
    empty = folder / "empty"
    empty.mkdir(exist_ok=True)
    terminal = Terminal(hud_argv(empty))
    try:
        terminal.wait_for(lambda text: "Status" in text and "Mission" in text)
        return time.perf_counter() - terminal.started
    finally:
        terminal.close()


def in_app() -> float:
    """In process, after imports: HudApp start -> the SMALL row in the overview table."""
    import asyncio

    from hud.app import HudApp
    from widgets.mission_table import MissionTable

    async def run() -> float:
        app = HudApp(FIXTURE, live=False)
        start = time.perf_counter()
        async with app.run_test(size=(COLUMNS, ROWS)) as pilot:
            table = app.screen.query_one(MissionTable)
            while not table.row_count:
                await pilot.pause(0.005)
            return time.perf_counter() - start

    return asyncio.run(run())


def parse_only() -> float:
    from store.sources.small.workspace import SmallWorkspace

    start = time.perf_counter()
    small = SmallWorkspace(FIXTURE)
    small.apply(".small")
    assert len(small.entries) == 1206 and small.problems() == []
    return time.perf_counter() - start


def main() -> None:
    with_bytecode()
    if not FIXTURE.is_dir():
        print(f"the live SMALL fixture is not at {FIXTURE}", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="hud-small-bench-") as temp:
        runs = [one_run(Path(temp)) for _ in range(RUNS)]
        empty = statistics.median(baseline(Path(temp)) for _ in range(RUNS))
    overview, timeline, appended = (statistics.median(values) for values in zip(*runs, strict=True))
    worst = max(r[0] for r in runs)
    parse = statistics.median(parse_only() for _ in range(RUNS))
    app = statistics.median(in_app() for _ in range(RUNS))
    print(f"SMALL live fixture (1.1 MB progress, 1,206 entries), 80x24 pty, median of {RUNS}:")
    print(
        f"  hud start -> overview painted with the SMALL row: {overview:.2f} s "
        f"(worst {worst:.2f} s; target <= 1.0 s)"
    )
    print(f"  the same on an empty directory (bare HUD start):   {empty:.2f} s")
    print(f"  SMALL's share of the start (difference):           {overview - empty:.2f} s")
    print(f"  in the app, after imports: start -> SMALL row:     {app:.2f} s")
    print(f"  Enter, 3 -> progress timeline painted to #1206:    {timeline:.2f} s")
    print(f"  appended entry -> on screen (watch + tail parse):  {appended * 1000:.0f} ms")
    print(f"  load + validate all six files in process:          {parse:.2f} s")


if __name__ == "__main__":
    main()
