"""A mission's handoff as Markdown a reviewer can read without the HUD.

Agent text is neutralised (control, escape and bidi characters made visible) and
Markdown-escaped, so it can neither drive a terminal nor inject links or images.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from store.derivation.derive import budget_use, mission_status, request_status
from store.derivation.mission import MissionState
from store.format.layout import Kind
from store.format.load import LogReader
from store.format.records import Evidence, Settings
from store.format.text import amount, safe_str

_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~])|^([#+=-])", re.MULTILINE)


def md(text: str) -> str:
    """Agent text as inert Markdown: no links, images, HTML, emphasis or headings."""
    return _MARKDOWN.sub(lambda m: "\\" + m.group(0), safe_str(text))


def _when(moment: datetime | None) -> str:
    return moment.isoformat() if moment else "—"


@dataclass(frozen=True, slots=True)
class CitedEvidence:
    """The evidence a mission's handoff cites as verified, and where to read it: plain
    data taken on the event loop, so that a thread can do the reading."""

    root: Path
    relpath: str | None
    ids: frozenset[str]

    @classmethod
    def of(cls, mission: MissionState) -> CitedEvidence:
        handoff = mission.handoff.record if mission.handoff else None
        relpath = mission.evidence.relpath if mission.evidence else None
        return cls(mission.root, relpath, frozenset(handoff.verified if handoff else ()))

    def read(self) -> dict[str, Evidence | None]:
        """The cited records, streamed from the log (never held whole); reads a file.
        None for one the hash chain no longer vouches for (`LogReader.vouches_for`)."""
        if self.relpath is None or not self.ids:
            return {}
        found: dict[str, tuple[Evidence, int]] = {}

        def keep(item: Any, line: int) -> None:
            if item.id in self.ids:
                found[item.id] = item, line

        reader = LogReader(self.root, self.relpath, Kind.EVIDENCE, keep)
        reader.poll()
        return {
            cited: item if reader.vouches_for(line) else None
            for cited, (item, line) in found.items()
        }


def handoff_markdown(
    mission: MissionState,
    now: datetime,
    settings: Settings,
    evidence: Mapping[str, Evidence | None],
) -> str:
    """The whole export: resume point, verified evidence (`CitedEvidence.read()`),
    blockers, plan and requests."""
    out = [f"# Handoff: {md(mission.title)}", ""]
    out.append(f"- Mission: `{mission.id}`, status **{mission_status(mission, now, settings)}**")
    out.append(f"- Exported: {now.isoformat()}")
    handoff = mission.handoff.record if mission.handoff else None
    plan = mission.latest_plan
    if handoff is None:
        out += ["", "_No handoff.json has been written for this mission._"]
    else:
        out += [
            f"- Handoff written: {_when(handoff.at)}",
            f"- Plan version: {handoff.plan_version or '—'}",
            f"- Current step: {md(handoff.current_step or '—')}",
            f"- Resume after event seq: {handoff.resume_after_seq}",
            "",
            "## Summary",
            "",
            md(handoff.summary) or "_none_",
        ]
        out += ["", "## Verified", ""]
        for evidence_id in handoff.verified:
            item = evidence.get(evidence_id)
            if evidence_id not in evidence:
                out.append(f"- {md(evidence_id)}: **not found in evidence.jsonl**")
            elif item is None:
                out.append(
                    f"- {md(evidence_id)}: **unverified**: the hash chain of evidence.jsonl "
                    "breaks at or after it (`hud check`)"
                )
            else:
                out.append(
                    f"- {md(evidence_id)} ({item.verdict}, step {md(item.step)}): "
                    f"{md(item.observed)}; proves {md(item.proves)}"
                )
        if not handoff.verified:
            out.append("_nothing verified yet_")
        for title, items in (("Blockers", handoff.blockers), ("Next steps", handoff.next_steps)):
            out += ["", f"## {title}", ""]
            out += [f"{i}. {md(item)}" for i, item in enumerate(items, 1)] or ["_none_"]
    if plan is not None:
        out += ["", f"## Plan v{plan.version}", "", "| Step | Title | Risk | State |"]
        out.append("|---|---|---|---|")
        for step in plan.steps:
            latest = mission.step_latest.get(step.id)
            state = latest.state if latest else "—"
            out.append(f"| {md(step.id)} | {md(step.title)} | {step.risk} | {state} |")
    out += _requests(mission, now)
    out += _budget(mission, now)
    problems = mission.problems()
    if problems:
        out += ["", "## Problems", ""]
        out += [f"- {p.severity}: `{safe_str(p.where)}` {md(p.message)}" for p in problems]
    return "\n".join(out) + "\n"


def _requests(mission: MissionState, now: datetime) -> list[str]:
    if not mission.requests:
        return []
    out = ["", "## Approval requests", ""]
    for request_id, loaded in sorted(mission.requests.items()):
        status = request_status(mission, request_id, now)
        record = loaded.record
        tool = md(record.tool) if record else "(unreadable)"
        out.append(f"- {md(request_id)}: {status}, tool {tool}")
    return out


def _budget(mission: MissionState, now: datetime) -> list[str]:
    budget = budget_use(mission, now)
    if not budget.limits:
        return []
    out = ["", "## Budget", ""]
    for limit in budget.limits:
        used, limit_ = amount(limit.name, limit.used), amount(limit.name, limit.limit)
        out.append(f"- {limit.name}: {used} of {limit_} ({limit.fraction:.0%})")
    return out
