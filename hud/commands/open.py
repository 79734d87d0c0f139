"""Open the HUD on a state directory."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path


def open_app(root: Path, *, read_only: bool, theme: str | None) -> int:
    """Run the HUD; exit 2 when `root` is not a directory."""
    if not root.is_dir():
        print(f"hud: {root}: no such directory", file=sys.stderr)
        return 2
    if not read_only and not os.access(root, os.W_OK):
        read_only = True
    from store.small import prefetch

    gc.disable()  # start-up allocates much and frees little; HudApp collects after its scan
    small = prefetch.start(root)  # before any thread exists: it forks
    try:
        from hud.app import HudApp

        HudApp(root, read_only=read_only, theme=theme, prefetch=small).run()
    finally:
        if small is not None:
            small.close()
    return 0
