"""`hud`: open the HUD on a state directory, or run one of its subcommands."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cli import commands
from hud.output import say
from hud.roles import ROLES


def _app_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hud",
        description="Operator HUD: watch a state directory of AI-agent missions live.",
        epilog="subcommands (each has --help):\n" + commands.summaries(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dir",
        nargs="?",
        help="state directory (default: $HUD_STATE_DIR, else the current directory)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="never write anything: no decision, no edit, no export, no screenshot",
    )
    parser.add_argument(
        "--role",
        choices=ROLES,
        default="operator",
        help="reviewer (as --read-only), approver (decides requests, edits nothing) or "
        "operator (the default: everything)",
    )
    parser.add_argument("--theme", help="hud-dark (default), hud-light or hud-high-contrast")
    parser.add_argument(
        "--sign-key",
        type=Path,
        metavar="PATH",
        help="sign every decision: a private key file, or a .pub held by ssh-agent",
    )
    parser.add_argument(
        "--open",
        type=_request,
        metavar="MISSION/REQUEST",
        help="open that request's screen once the directory is read (a notification's link)",
    )
    parser.add_argument("--version", action=_Version)
    # Set by `hud serve` for an approver's session (docs/ssh-reviewers.md), not for people:
    # who decides (the key's name) and from where (the key's fingerprint, the client).
    parser.add_argument("--as-user", help=argparse.SUPPRESS)
    parser.add_argument("--origin", help=argparse.SUPPRESS)
    parser.add_argument("--save-to", type=Path, help=argparse.SUPPRESS)  # its private folder
    return parser


def _request(text: str) -> tuple[str, str]:
    """`--open`'s MISSION/REQUEST (argparse says why when it is not two ids)."""
    from hud.opening import parse

    try:
        return parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class _Version(argparse.Action):
    """`--version`, reading the installed version only when asked (importlib.metadata
    costs tens of milliseconds at every start otherwise)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import version

        say(f"hud {version('operator-hud')}")
        parser.exit()


def default_dir(given: Path | None) -> Path:
    """DIR, else $HUD_STATE_DIR, else the current directory."""
    if given is not None:
        return given
    return Path(os.environ.get("HUD_STATE_DIR") or ".")


EXIT_CLOSED_PIPE = 141
"""Exit code when stdout was closed early (`hud check DIR | head -1`): 128 + SIGPIPE,
what a shell reports for a program a closed pipe ends, so `set -o pipefail` sees it."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run `hud ARGS`; every command ends quietly (no traceback) when stdout closes."""
    try:
        try:
            return _main(argv)
        finally:  # what is still buffered is written now, not at exit where none catches it
            sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_CLOSED_PIPE


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush fails no more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a file (a test's capture): nothing to flush at exit
        pass


def _unknown(word: str | None) -> bool:
    """True (having said so) when `word`, given where a directory may be, is neither an
    existing path nor a subcommand, but reads as a command (`commands.unknown`)."""
    if word is None or Path(word).exists():
        return False
    unknown = commands.unknown(word)
    if unknown is not None:
        say(f"hud: {unknown}", err=True)
    return unknown is not None


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["agent"]:  # the agents' side: loaded only here, never by the HUD
        from agentside.cli import main as agent_main

        return agent_main(args[1:])
    if args and args[0] in commands.NAMES:
        build, run = commands.load(args[0])
        parser = argparse.ArgumentParser(
            prog=f"hud {args[0]}", formatter_class=argparse.RawDescriptionHelpFormatter
        )
        build(parser)
        return run(parser.parse_args(args[1:]))
    first = args[0] if args and not args[0].startswith("-") else None
    if _unknown(first):  # before parsing: `hud revew DIR` is a typo, not two directories
        return 2
    options = _app_parser().parse_args(args)
    given: str | None = options.dir  # as typed: Path("./x") would read "x"
    if _unknown(given):
        return 2
    from cli import launch  # the HUD's modules load only to open it

    return launch.open_app(
        default_dir(Path(given) if given is not None else None),
        read_only=options.read_only,
        theme=options.theme,
        identity=(options.as_user, options.origin),
        sign_key=options.sign_key,
        role=options.role,
        saves=options.save_to,
        opening=options.open,
    )


if __name__ == "__main__":
    sys.exit(main())
