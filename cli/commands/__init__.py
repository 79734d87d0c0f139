"""Subcommands of `hud`: each module offers `build(parser)` and `run(args) -> exit code`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.trust.sshsig import AgentSigner, KeySigner

Build = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]

SUMMARIES = {
    "check": "verify every invariant of a state directory",
    "simulate": "play simulated agents writing into a state directory",
    "demo": "open the HUD on a fresh directory with a simulated agent writing into it",
    "handoff": "export a mission's handoff as Markdown (stdout or a file)",
    "approvals": "list pending approval requests (soonest expiry, then highest risk, first)",
    "decide": "approve or reject one approval request (same checks as the HUD)",
    "replay": "a mission as it was at one event, and what changed from the one before",
    "review": "answer the review questions for a plan version (exit 1 when one fails)",
    "metrics": "coordination metrics over a window, per mission and across the directory",
    "serve": "an SSH server, a HUD per session: reviewers read, approvers decide, operators edit",
    "notify": "send a notification (ntfy, Slack, e-mail, ...) when an agent needs a human",
    "web": "the HUD in a browser, per session: reviewers read, approvers decide, operators edit",
}
"""Subcommand name -> one line for `hud --help` (modules load only when run)."""
NAMES = tuple(SUMMARIES)
ROUTED = {"agent": "for agent runtimes: plans, steps, evidence, approvals"}
"""Subcommands `cli.main` hands to another program (not in NAMES): listed after them."""


def load(name: str) -> tuple[Build, Run]:
    """A subcommand's (add its arguments, run it), importing only its module."""
    module = import_module(f"cli.commands.{name}")
    return module.build, module.run


def summaries() -> str:
    """One line per subcommand (the routed ones last), for `hud --help`."""
    listed = {**SUMMARIES, **ROUTED}
    return "\n".join(f"  {name:<10} {summary}" for name, summary in listed.items())


def unknown(word: str) -> str | None:
    """What to say when `hud WORD` names neither a directory nor a subcommand: a word
    without a path's `/` or leading `.` or `~` was meant as a command (None: a path)."""
    if "/" in word or word.startswith((".", "~")):
        return None
    from difflib import get_close_matches

    names = [*NAMES, *ROUTED]
    close = get_close_matches(word, names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return (
        f"unknown command {word!r}{hint} (commands: {', '.join(names)}; "
        f"a directory is opened as ./{word})"
    )


def sign_key_signer(path: Path, prefix: str) -> KeySigner | AgentSigner | None:
    """The signer `--sign-key PATH` names (`hud.acts.session.signer_from`); None when it
    cannot sign, said on stderr after `prefix:` (the command)."""
    from hud.acts.session import SigError, signer_from
    from hud.output import printable, say

    try:
        return signer_from(path)
    except SigError as exc:
        say(f"{prefix}: --sign-key: {printable(str(exc))}", err=True)
        return None
