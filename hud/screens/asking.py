"""The HUD's side of `hud.acts`: an act's questions answered with the HUD's dialogs
(`Dialogs` implements `DecideAsk` and `BudgetAsk`).

Text is edited in `$VISUAL` / `$EDITOR` (`hud.editor`), or in the in-app editor when no
editor is set or the terminal cannot be suspended; from then on, in the in-app one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text
from textual.app import SuspendNotSupported
from textual.screen import ModalScreen

from hud.acts.session import Conflict, Invalid
from hud.editor import EditorFailed, edit_externally, editor_command
from hud.screens.decide import ConfirmDialog, ReasonDialog, TypeToolDialog
from hud.screens.edit import BudgetAdjustScreen, ConflictScreen, InvalidScreen, TomlEditorScreen
from store.index.approval_checks import Review, Verdict
from widgets.safe_text import safe
from widgets.status import status_text

if TYPE_CHECKING:
    from hud.acts.budget import LimitNow
    from hud.acts.documents import Choice
    from hud.screens.base import HudScreen

T = TypeVar("T")


class Dialogs:
    """One act's questions, each a modal dialog over `screen`."""

    def __init__(self, screen: HudScreen) -> None:
        self.screen = screen
        self.app = screen.app
        self.session = screen.hud.session_for(screen)
        self.command = editor_command()
        """The external editor; None: none set, or it failed (the in-app one from then on)."""
        self.up = asyncio.Event()

    async def start(self, flow: Coroutine[Any, Any, object]) -> None:
        """Run `flow` in a worker; return once its first dialog is up, or it ended (keys
        typed right after the key that started it land in that dialog)."""

        async def run() -> None:
            try:
                await flow
            finally:
                self.up.set()

        self.screen.run_worker(run(), group="act")
        await self.up.wait()

    async def _answer(self, dialog: ModalScreen[T]) -> T:
        """What `dialog` is dismissed with; the dialog is up when this first waits."""
        answer: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def give(result: T | None) -> None:
            if not answer.done():
                answer.set_result(result)  # type: ignore[arg-type]

        await self.app.push_screen(dialog, give)
        self.up.set()
        return await answer

    # ---- DecideAsk ----------------------------------------------------------------------

    async def reason(self, review: Review, verdict: Verdict) -> str | None:
        title = Text("Approve " if verdict == "approve" else "Reject ", style="bold")
        return await self._answer(
            ReasonDialog(title.append_text(_what(review)), required=verdict == "reject")
        )

    async def confirm(self, review: Review) -> bool:
        question = Text("Approve an external write? ", style="bold")
        return await self._answer(ConfirmDialog(question.append_text(_what(review))))

    async def type_tool(self, review: Review) -> bool:
        question = Text("Approve an irreversible action: ", style="bold")
        question.append_text(_what(review))
        return await self._answer(TypeToolDialog(question, review.tool))

    # ---- EditAsk, BudgetAsk ---------------------------------------------------------------

    async def edit_text(
        self, relpath: str, name: str, text: str, error: Invalid | None, baseline: str
    ) -> str | None:
        if self.command is not None:
            if error is not None and not await self._answer(InvalidScreen(error, text)):
                return None
            try:
                return await edit_externally(self.app, self.session, self.command, text, name)
            except SuspendNotSupported:
                message = "this terminal cannot run an external editor; using the in-app editor"
            except EditorFailed as exc:
                message = f"{exc}; using the in-app editor"
            self.command = None
            self.app.notify(message, severity="warning")
        return await self._answer(TomlEditorScreen(relpath, text, error, baseline))

    async def resolve_conflict(self, conflict: Conflict, choices: Sequence[Choice]) -> str | None:
        return await self._answer(ConflictScreen(conflict, choices))

    async def choose_limit(
        self, mission_id: str, limits: Sequence[LimitNow], key: str | None
    ) -> tuple[str, Any] | None:
        return await self._answer(BudgetAdjustScreen(mission_id, limits, key))


def _what(review: Review) -> Text:
    """`deploy (↗ external write) on beta/r1`."""
    text = safe(review.tool or "(no tool)")
    text.append(" (")
    text.append_text(status_text(review.risk))
    text.append(f") on {review.mission}/{review.request_id}")
    return text
