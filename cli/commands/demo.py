"""`hud demo`: a fresh state directory, the simulator writing into it, the HUD on it.

Quitting the HUD stops the simulator (SIGTERM, then SIGKILL after 5 s) and removes
the directory unless `--keep` is given.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from cli.commands import SUMMARIES
from hud import terminal
from hud.output import say


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = SUMMARIES["demo"]
    parser.add_argument("--missions", type=int, default=8, help="how many missions (default 8)")
    parser.add_argument("--rate", type=float, default=20.0, help="events per second (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--theme", help="hud-dark (default), hud-light or hud-high-contrast")
    parser.add_argument("--keep", action="store_true", help="keep the directory afterwards")


def stop(process: subprocess.Popen[bytes]) -> None:
    """End the simulator: politely first, then for sure."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(args: argparse.Namespace) -> int:
    if terminal.refused("hud demo"):
        return 2
    from cli.commands.simulate import command_line
    from hud.app import HudApp

    root = Path(tempfile.mkdtemp(prefix="hud-demo-"))
    args.dir = root
    log = open(root.parent / f"{root.name}.simulator.log", "wb")  # noqa: SIM115
    simulator = subprocess.Popen(
        command_line(args), stdin=subprocess.DEVNULL, stdout=log, stderr=log
    )
    try:
        app = HudApp(root, theme=args.theme)
        app.run()
    finally:
        stop(simulator)
        log.close()
        if args.keep:
            say(f"demo state directory kept: {root}", err=True)
        else:
            shutil.rmtree(root, ignore_errors=True)
            Path(log.name).unlink(missing_ok=True)
    return app.return_code or 0
