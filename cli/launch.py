"""Open the HUD on a state directory."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

from cli.commands import sign_key_signer
from hud import driver, terminal
from hud.output import say
from hud.roles import Identity, Role

if TYPE_CHECKING:
    from hud.opening import Target


def open_app(
    root: Path,
    *,
    read_only: bool,
    theme: str | None,
    identity: Identity = (None, None),
    sign_key: Path | None = None,
    role: Role = "operator",
    saves: Path | None = None,
    opening: Target | None = None,
) -> int:
    """Run the HUD; exit 2 when `root` is not a directory, `sign_key` cannot sign or there
    is no terminal, 129 when the terminal went away. Under `hud web` (Textual's web
    driver) it draws for a browser, through the pipes of its server."""
    if not root.is_dir():
        say(f"hud: {root}: no such directory", err=True)
        return 2
    signer = None
    if sign_key is not None:
        signer = sign_key_signer(sign_key, "hud")
        if signer is None:
            return 2
    if not driver.web() and terminal.refused("hud"):
        return 2
    if not read_only and not os.access(root, os.W_OK):
        read_only = True
    from store.index import prefetch

    gc.disable()  # start-up allocates much and frees little; HudApp collects after its scan
    small = prefetch.start(root)  # before any thread exists: it forks
    try:
        from hud.app import HudApp

        app = HudApp(
            root,
            read_only=read_only,
            theme=theme,
            prefetch=small,
            identity=identity,
            signer=signer,
            role=role,
            saves=saves,
            opening=opening,
        )
        app.run()
    finally:
        if small is not None:
            small.close()
    return app.return_code or 0
