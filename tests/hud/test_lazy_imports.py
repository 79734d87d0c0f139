"""The HUD loads what the state directory holds, no more: a source's module (SMALL's YAML
parser, loopx's records, loopexec's receipts) loads only where the directory holds that
kind, and what only other commands use (notifications, the servers) never loads.

Each case opens the app (Pilot) in a fresh interpreter, until its scan is done, and
lists the modules it loaded."""

from __future__ import annotations

from pathlib import Path

from tests.factory import three_missions
from tests.fresh import fresh_stdout
from tests.loopx_support import place_loopx
from tests.small_support import VALID, small_fixture

OPEN = """
import asyncio, sys
from pathlib import Path
from hud.app import HudApp

async def main():
    app = HudApp(Path(sys.argv[1]))
    async with app.run_test(size=(100, 24)) as pilot:
        await asyncio.wait_for(app.scanned.wait(), 60)
        await pilot.pause()
    print("\\n".join(sorted(sys.modules)))

asyncio.run(main())
"""

SMALL = {"ruamel.yaml", "store.sources.small.source", "store.sources.small.models"}
LOOPX = {"store.sources.loopx.records", "store.sources.loopx.source"}
LOOPEXEC = {"store.sources.loopexec.runs", "store.sources.loopexec.source"}
NEVER = {"apprise", "asyncssh", "aiohttp", "textual_serve", "hud.notify", "hud.serve", "mcp"}
"""Other commands' libraries: the HUD itself never needs them."""
UNOPENED = {"textual.widgets._text_area", "hud.palette", "textual.drivers.web_driver"}
"""What only a screen not opened yet needs (the editor's TextArea, the palette's
commands) or `hud web` (Textual's web driver)."""


def loaded(root: Path) -> set[str]:
    """The modules a HUD opened on `root` has loaded once its scan is done."""
    return set(fresh_stdout(OPEN, str(root)).split())


def test_a_native_workspace_loads_no_other_source(tmp_path: Path) -> None:
    three_missions(tmp_path)
    modules = loaded(tmp_path)
    assert "store.sources.native.source" in modules  # it did read the missions
    assert modules & (SMALL | LOOPX | LOOPEXEC | NEVER | UNOPENED) == set()


def test_each_source_loads_where_the_directory_holds_it(tmp_path: Path) -> None:
    assert loaded(small_fixture(VALID)) >= SMALL
    modules = loaded(place_loopx("v0.5.1", tmp_path))
    assert modules >= LOOPX
    assert modules & (LOOPEXEC | NEVER) == set()
