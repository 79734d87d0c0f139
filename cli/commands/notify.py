"""`hud notify DIR`: send a notification when an agent needs a human.

Watches DIR as the HUD does and tells each target (an Apprise URL: ntfy, Slack, Matrix,
e-mail, ...) once when a request becomes pending, shortly before a pending request
expires, when a mission needs you for another reason (a problem, a budget overrun, a
step out of attempts), and when a request it was told of is withdrawn or expires
unanswered. Targets come from notify.toml in your config folder, from DIR's hud.toml
when notify.toml trusts DIR, and from --to. See docs/notifications.md.

Exit 0 after SIGINT, SIGTERM or SIGHUP; 2 cannot run (no such directory, a bad
notify.toml or target, no target at all).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cli.commands import SUMMARIES
from hud.output import say

if TYPE_CHECKING:
    from hud.notify.notifier import Notifier

EXIT_CANNOT_RUN = 2


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n", 1)[1] if __doc__ else SUMMARIES["notify"]
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("dir", type=Path, help="the state directory")
    add_target_options(parser, "--to")
    parser.add_argument(
        "--web-url",
        metavar="URL",
        help="the address of `hud web`: each notification links to its request there",
    )
    parser.add_argument(
        "--ssh",
        metavar="COMMAND",
        help="how to reach `hud serve`, shown in each notification "
        "(e.g. 'ssh -p 2222 review.example.org')",
    )
    parser.add_argument(
        "--targets",
        action="store_true",
        help="list the targets (secrets hidden) and what each lets through, then exit",
    )


def add_target_options(parser: argparse.ArgumentParser, to: str) -> None:
    """The target options `hud notify` and `hud serve --notify` share (`to`: the name
    of the repeatable option that adds a target for this run)."""
    parser.add_argument(
        to,
        action="append",
        default=[],
        metavar="URL",
        dest="notify_to",
        help="also notify this Apprise URL, for this run (repeatable)",
    )
    parser.add_argument(
        "--workspace-targets",
        action="store_true",
        help="use the [[notify]] targets of DIR's hud.toml for this run, as if notify.toml "
        "trusted DIR (whoever can write DIR chooses them: docs/notifications.md)",
    )


def prepare(root: Path, args: argparse.Namespace, prefix: str) -> Notifier | None:
    """The notifier `args` describe for `root`, or None after saying (on stderr, after
    `prefix`) why it cannot run."""
    from hud.notify.config import ConfigError, config_path, gather, load_config, trusts
    from hud.notify.courier import Courier, Pace
    from hud.notify.events import Lead
    from hud.notify.message import Answer
    from hud.notify.notifier import Notifier
    from hud.notify.sent import SentRecord, state_folder
    from store.format.load import load_document
    from store.format.records import Settings

    try:
        config = load_config(config_path())
        loaded = load_document(root, "hud.toml", Settings)
        workspace_targets = loaded.record.notify if loaded.record is not None else []
        trusted = getattr(args, "workspace_targets", False) or trusts(config, root)
        targets, notes = gather(config, workspace_targets, trusted, args.notify_to)
        if trusted:
            notes += [
                f"{p.where}: {p.message}: its targets not used"
                for p in loaded.problems
                if p.code != "missing"
            ]
    except ConfigError as error:
        say(f"{prefix}: {error}", err=True)
        return None
    for note in notes:
        say(f"{prefix}: {note}", err=True)
    if not targets:
        say(
            f"{prefix}: no notification target: add one with --to URL, or [[target]] url = "
            "... in notify.toml (docs/notifications.md)",
            err=True,
        )
        return None
    record = SentRecord(state_folder(), root)
    if record.problem is not None:
        say(f"{prefix}: {record.problem}", err=True)
    answer = Answer(
        ssh=getattr(args, "ssh", None) or config.ssh,
        web_url=getattr(args, "web_url", None) or config.web_url,
    )
    pace = Pace(config.burst, config.refill_seconds, config.retry_seconds, config.retry_max_seconds)
    report = _Reporter(prefix)
    couriers = [Courier(target, record, pace, answer, report) for target in targets]
    for target in targets:
        say(f"{prefix}: notifying {target.shown} (from {target.origin})")
    lead = Lead(config.lead_seconds, config.lead_fraction)
    return Notifier(root, couriers, lead, report, config.settle_seconds)


class _Reporter:
    """Prints the notifier's lines, each with the time: what was sent on stdout, failures
    on stderr. Once stdout is closed (`hud notify DIR | head -1`), `stop` is set and
    nothing more goes to stdout; a stop by a signal still says what went out as it ends."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.stop = asyncio.Event()
        self.closed_pipe = False

    def __call__(self, text: str, failure: bool) -> None:
        if self.closed_pipe and not failure:
            return
        try:
            say(f"{time.strftime('%H:%M:%S')} {self.prefix}: {text}", err=failure)
            (sys.stderr if failure else sys.stdout).flush()
        except BrokenPipeError:
            if not failure:
                self.closed_pipe = True
                self.stop.set()


def run(args: argparse.Namespace) -> int:
    root = args.dir.resolve()
    if not root.is_dir():
        say(f"hud notify: {args.dir}: no such directory", err=True)
        return EXIT_CANNOT_RUN
    notifier = prepare(root, args, "hud notify")
    if notifier is None:
        return EXIT_CANNOT_RUN
    if args.targets:
        for courier in notifier.couriers:
            spec = courier.target.spec
            said = "; ".join(
                f"{name}: {','.join(values)}"
                for name, values in (
                    ("missions", spec.missions),
                    ("risks", spec.risks),
                    ("severities", spec.severities),
                )
                if values
            )
            say(f"{courier.target.shown} ({courier.target.origin}): {said or 'everything'}")
        return 0
    return asyncio.run(_notify(notifier))


async def _notify(notifier: Notifier) -> int:
    assert isinstance(notifier.report, _Reporter)
    stop = notifier.report.stop  # set by a closed stdout, and by a signal
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    await notifier.run(stop)
    if notifier.report.closed_pipe:
        raise BrokenPipeError  # `hud` ends quietly, 141
    return 0
