"""Subcommands of `hud`: each module offers `build(parser)` and `run(args) -> exit code`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

Build = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]

NAMES = ("check", "simulate", "demo", "handoff", "approvals", "decide")


def registry() -> dict[str, tuple[Build, Run]]:
    """Subcommand name -> (add its arguments, run it)."""
    table = {}
    for name in NAMES:
        module = import_module(f"hud.commands.{name}")
        table[name] = (module.build, module.run)
    return table


def summaries() -> str:
    """One line per subcommand, from each module's SUMMARY, for `hud --help`."""
    return "\n".join(
        f"  {name:<10} {import_module(f'hud.commands.{name}').SUMMARY}" for name in NAMES
    )


def run_app(root: Path, *, read_only: bool, theme: str | None) -> int:
    """Open the HUD on `root`."""
    from hud.commands.open import open_app

    return open_app(root, read_only=read_only, theme=theme)
