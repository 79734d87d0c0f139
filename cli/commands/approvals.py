"""`hud approvals DIR [--json] [--all]`: the approval queue, for scripts and terminals."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from hud.output import printable, say
from store.format.text import countdown
from store.index.approval_checks import QueueItem, Review, approval_queue, review
from store.index.workspace import Workspace, group_by_mission
from widgets.json_text import json_text


def build(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "List the pending approval requests of every mission, soonest expiry first, then "
        "highest risk, with what blocks approving each. Exit 0, or 2 when DIR is not a "
        "directory."
    )
    parser.add_argument("dir", type=Path, help="the state directory")
    parser.add_argument("--json", action="store_true", help="machine-readable output (ASCII)")
    parser.add_argument(
        "--all", action="store_true", help="every request: also decided, stale and expired"
    )


def _time(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


def to_json(item: QueueItem, checked: Review) -> dict[str, Any]:
    """One request as `--json` shows it: what it asks, its digest, and the checks."""
    request = checked.request
    return {
        "mission": item.mission,
        "id": item.request_id,
        "status": item.status.value,
        "risk": item.risk,
        "tool": item.tool,
        "step": item.step,
        "plan_version": item.plan_version,
        "summary": item.summary,
        "requested_by": request.requested_by if request else None,
        "requested_at": _time(item.requested_at),
        "expires_at": _time(item.expires_at),
        "nobody_waiting": item.nobody_waiting,
        "digest": checked.digest,
        "args": checked.raw.get("args") if checked.raw else None,
        "can_approve": checked.can_approve,
        "can_reject": checked.can_reject,
        "blockers": list(checked.blockers),
        "warnings": list(checked.warnings),
        "confirmation": checked.confirmation,
        "plan_binding": _binding_json(checked),
        "signature": _signature_json(checked),
    }


def _signature_json(checked: Review) -> dict[str, Any] | None:
    """The decision's signature state (`store.trust.signatures`), None when undecided."""
    state = checked.signature
    if state is None:
        return None
    return {
        "state": state.kind,
        "required": state.required,
        "principal": state.principal or None,
        "fingerprint": state.fingerprint or None,
        "why": state.why or None,
        "message": state.describe(),
    }


def _binding_json(checked: Review) -> dict[str, Any]:
    """What newer plan versions mean for the request (`store.derivation.plan_binding`): `rule` is a
    stale rule, `read-only-change` (a notice) or null; `message` names steps and versions."""
    binding = checked.binding
    return {
        "rule": binding.rule,
        "stale": binding.stale,
        "message": binding.reason,
        "plan_version": binding.plan_version,
        "latest_plan_version": binding.latest_version,
        "changes": [
            {
                "version": change.version,
                "step": change.step,
                "kind": change.kind,
                "fields": list(change.fields),
                "risk": change.risk,
            }
            for change in binding.changes
        ],
    }


def run(args: argparse.Namespace) -> int:
    root: Path = args.dir
    if not root.is_dir():
        say(f"hud approvals: {root}: no such directory", err=True)
        return 2
    workspace = Workspace.cached(root)  # logs read from where they were verified before
    workspace.apply(asking(workspace))
    workspace.flush_cache()
    now = workspace.clock()
    queue = approval_queue(workspace, now, everything=args.all)
    items = [item for item in queue if item.mission in workspace.missions]  # decidable here
    reviews = [review(workspace.missions[i.mission], i.request_id, now) for i in items]
    if args.json:
        listed = [to_json(item, checked) for item, checked in zip(items, reviews, strict=True)]
        say(json_text(listed, ascii=True))
        return 0
    say(render(items, reviews, now))
    return 0


def asking(workspace: Workspace) -> list[str]:
    """The paths the queue is made of: everything outside `missions/` (the trust files,
    other sources' questions), and the missions that hold requests; a mission without
    one adds nothing to the queue, and is not read."""
    missions, other = group_by_mission(workspace.walk())
    requesting = (
        paths
        for mission_id, paths in missions.items()
        if any(path.split("/")[2:3] == ["approvals"] for path in paths)
    )
    return [*other, *(path for paths in requesting for path in paths)]


def render(items: list[QueueItem], reviews: list[Review], now: datetime) -> str:
    """A table, one request a line, with its blockers and warnings under it."""
    if not items:
        return "no pending approval requests"
    rows = [("EXPIRES", "RISK", "REQUEST", "TOOL", "STEP", "SUMMARY")]
    for item in items:
        when = countdown(item.expires_at, now) if item.status.value == "pending" else ""
        if item.nobody_waiting and item.status.value == "pending":
            when = "nobody waiting"
        rows.append(
            (
                when or item.status.value,
                item.risk,
                f"{item.mission}/{item.request_id}",
                printable(item.tool),
                printable(item.step),
                printable(item.summary),
            )
        )
    widths = [max(len(row[c]) for row in rows) for c in range(5)]
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[5]]).rstrip())
        if index == 0:
            continue
        checked = reviews[index - 1]
        for blocker in checked.blockers:
            lines.append(f"    cannot approve: {printable(blocker)}")
        for warning in checked.warnings:
            lines.append(f"    warning: {printable(warning)}")
    pending = sum(1 for i in items if i.status.value == "pending")
    lines.append(f"{pending} pending")
    return "\n".join(lines)
