"""Decide one approval request, once: check, ask, check again, write.

The HUD's request screen and `hud decide` both run `decide`; they differ only in how
they ask (`DecideAsk`: dialogs, or flags) and in how they say the `Outcome`.
1. check the request as it is (`store.index.approval_checks.refusal`, the reason aside);
2. ask for the reason, then, approving, the confirmation its risk needs: a yes for an
   external write, the tool name typed for an irreversible action;
3. read the request again (`Session.reread`: returns once the workspace holds it) and
   check again against it as it is now, bound to the digest first seen (or `digest`, the
   one the human reviewed elsewhere), with the reason;
4. sign it with the session's signer, if any (`store.trust.signatures.payload`, version 2:
   bound to the state directory's id, workspace.toml, created at the first decision);
5. write the decision once (`HumanWriter.decide`): someone who decided first wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from hud.acts.session import AlreadyDecided, HumanWriteError, Session
from store.format.layout import decision_path, request_path
from store.format.records import Decision
from store.index.approval_checks import Review, Verdict, refusal
from store.trust.signatures import NAMESPACE, payload
from store.trust.sshsig import SigError

Status = Literal[
    "gone", "refused", "cancelled", "read_only", "changed", "taken", "failed", "decided"
]


class DecideAsk(Protocol):
    """How the human is asked; None or False: they did not go on."""

    async def reason(self, review: Review, verdict: Verdict) -> str | None: ...

    async def confirm(self, review: Review) -> bool:
        """Approving an external write: yes or no."""
        ...

    async def type_tool(self, review: Review) -> bool:
        """Approving an irreversible action: the tool's name, typed."""
        ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a decision ended: `decided` (ours in `decision`), `taken` (theirs, None when it
    does not load), or why not (`message` for refused, changed and failed)."""

    verdict: Verdict
    status: Status
    review: Review | None = None
    """The request as last checked."""
    message: str = ""
    decision: Decision | None = None


async def decide(
    session: Session,
    ask: DecideAsk,
    look: Callable[[], Review | None],
    verdict: Verdict,
    digest: str | None = None,
) -> Outcome:
    """Decide the request `look()` reviews as it is now (None: it is gone)."""
    current = look()
    if current is None:
        return Outcome(verdict, "gone")
    problem = refusal(current, verdict, "" if verdict == "approve" else "-", digest)
    if problem is not None:
        return Outcome(verdict, "refused", current, problem)
    seen = digest if digest is not None else current.digest
    reason = await ask.reason(current, verdict)
    if reason is None or not await _confirmed(ask, current, verdict):
        return Outcome(verdict, "cancelled", current)
    writer = session.decisions
    if writer is None:
        return Outcome(verdict, "read_only", current)
    mission, request_id = current.mission, current.request_id
    await session.reread([request_path(mission, request_id)])
    current = look()
    if current is None:
        return Outcome(verdict, "gone")
    problem = refusal(current, verdict, reason, seen_digest=seen)
    if problem is not None or current.raw is None or current.digest is None:
        return Outcome(verdict, "changed", current, problem or "the request does not load")
    relpath = decision_path(mission, request_id)
    now = writer.clock()
    until = current.valid_until(now) if verdict == "approve" else None
    signature = None
    try:
        workspace: str | Exception = writer.workspace_id()  # made at the first decision
    except (HumanWriteError, OSError) as exc:
        workspace = exc  # needed only to sign (payload version 2)
    if session.signer is not None:
        if isinstance(workspace, Exception):
            return Outcome(verdict, "failed", current, f"not signed, nothing written: {workspace}")
        fields = writer.decision_fields(request_id, current.digest, verdict, reason, until, now)
        signed = payload(mission, **fields, workspace=workspace)
        try:
            signature = await session.signer.sign(signed, NAMESPACE)
        except SigError as exc:
            return Outcome(verdict, "failed", current, f"not signed, nothing written: {exc}")
    try:
        decision = writer.decide(
            mission, request_id, current.raw, verdict, reason, until, now, signature
        )
    except AlreadyDecided as exc:
        session.wrote([relpath])
        return Outcome(verdict, "taken", current, decision=exc.decision)
    except (HumanWriteError, OSError) as exc:
        return Outcome(verdict, "failed", current, str(exc))
    session.wrote([relpath])
    return Outcome(verdict, "decided", current, decision=decision)


async def _confirmed(ask: DecideAsk, review: Review, verdict: Verdict) -> bool:
    """Whether the confirmation this approval needs was given (a rejection needs none)."""
    if verdict == "reject" or review.confirmation == "none":
        return True
    if review.confirmation == "confirm":
        return await ask.confirm(review)
    return await ask.type_tool(review)


def decided_first(
    theirs: Decision | None, when: Callable[[datetime], str], shown: Callable[[str], str] = str
) -> str:
    """`already decided by X at T: approve (reason)`; `shown` makes their words safe to print."""
    if theirs is None:
        return "already decided (the existing decision does not load)"
    said = f" ({shown(theirs.reason)})" if theirs.reason else ""
    return (
        f"already decided by {shown(theirs.decided_by)} at {when(theirs.decided_at)}: "
        f"{theirs.decision}{said}"
    )
