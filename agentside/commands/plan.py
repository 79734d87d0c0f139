"""`hud agent plan DIR --mission M FILE`: write the next plan version.

FILE (or `-` for stdin) holds `{"steps": [...], "reason": "...", "assumptions": [...],
"expected_evidence": [...]}`; a step is `{"id", "title", "depends_on", "risk", "effect",
"verification", "recovery", "needs_approval"}` as in docs/format.md. Versions after 1
need a reason. Plan versions are immutable: this never rewrites one.
"""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from agentside.commands import guarded, read_input, target
from agentside.mission import Proposal, Unusable, propose
from agentside.output import EXIT_OK, emit
from store.writers.agent import AgentWriter, InvalidRecord


def build(parser: argparse.ArgumentParser) -> None:
    target(parser)
    parser.add_argument("file", help="the proposal as JSON (- for stdin)")


def _run(writer: AgentWriter, args: argparse.Namespace) -> int:
    data = read_input(args.file)
    try:
        proposal = Proposal.model_validate_json(data)
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise Unusable(f"{args.file} is not JSON: {exc.errors()[0]['msg']}") from exc
        raise InvalidRecord(f"the proposal does not validate: {_summary(exc)}") from exc
    plan = propose(writer, proposal)
    emit(
        args.json,
        {"mission": writer.mission, "version": plan.version, "steps": len(plan.steps)},
        f"plan v{plan.version} of {writer.mission}: {', '.join(s.id for s in plan.steps)}",
    )
    return EXIT_OK


def _summary(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(proposal)'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )


def run(args: argparse.Namespace) -> int:
    return guarded(args, _run)
