"""How operators write what humans own: new missions, intent and constraints, budget limits.

Every write goes through the app's `HumanWriter` (`app.writer`, None in read-only
mode, when nothing here writes). Edits work on the raw TOML text:

* in `$VISUAL` / `$EDITOR`, run with the app suspended on a copy of the text in a
  temp folder outside the state directory, or in the in-app editor when no editor
  is set (or the terminal cannot be suspended);
* the edited text is saved as written by `HumanWriter.replace`, which validates it
  (an error names line and column, and the operator goes back into the editor with
  the text kept), refuses it when the file changed on disk since it was loaded (the
  operator sees a diff of theirs against theirs and re-edits on top of theirs), and
  keeps the previous revision in `history/`;
* unchanged text writes nothing.

The flows are coroutines that wait for modal screens, so they run in a worker.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import tomllib
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import SuspendNotSupported

from hud import saving
from hud.offload import in_thread, read_document
from store.human import AlreadyExists, Conflict, HumanWriteError, Invalid, Saved
from store.layout import Kind, doc_path, safe_mission_id
from store.load import Loaded, load_document
from store.problems import Problem
from store.records import Constraints, Intent
from store.toml_edit import set_table_value
from widgets.keys import key_of

if TYPE_CHECKING:
    from hud.app import HudApp


# ---- budget limits -------------------------------------------------------------------------

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd]?)$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _number(text: str) -> float | int:
    cleaned = text.replace(",", "").replace("_", "").strip()
    try:
        value: float | int = int(cleaned)
    except ValueError:
        try:
            value = float(cleaned)
        except ValueError:
            raise ValueError("not a number") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not a finite number")
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def _count(text: str) -> int:
    value = _number(text)
    if not isinstance(value, int):
        raise ValueError("must be a whole number")
    return value


def _seconds(text: str) -> float | int:
    match = _DURATION.match(text.replace(",", "").replace("_", "").strip().lower())
    if match is None:
        raise ValueError("seconds, or a number with s, m, h or d (90m, 2h)")
    amount = _number(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return int(amount) if float(amount).is_integer() else amount


def _deadline(text: str) -> datetime:
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError("an RFC 3339 time with a zone, e.g. 2025-03-01T18:00:00Z") from None
    if value.tzinfo is None:
        raise ValueError("give a time zone, e.g. Z or +02:00")
    return value


@dataclass(frozen=True, slots=True)
class LimitSpec:
    key: str
    label: str
    hint: str
    parse: Callable[[str], Any]


LIMITS: tuple[LimitSpec, ...] = (
    LimitSpec("usd", "USD", "dollars, e.g. 25 or 12.50", _number),
    LimitSpec("tokens", "Tokens", "a whole number, e.g. 200000", _count),
    LimitSpec("steps", "Steps", "a whole number of steps", _count),
    LimitSpec("wall_seconds", "Wall time", "seconds, or 90m, 2h, 1d", _seconds),
    LimitSpec("deadline", "Deadline", "RFC 3339 with zone: 2025-03-01T18:00:00Z", _deadline),
)
LIMIT_BY_KEY = {spec.key: spec for spec in LIMITS}


def parse_limit(key: str, text: str) -> Any:
    """The value of budget limit `key` typed as `text`; None when empty; ValueError if bad."""
    if not text.strip():
        return None
    return LIMIT_BY_KEY[key].parse(text)


def show_limit(value: Any) -> str:
    """A limit as the operator would type it back."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else str(value)
    return str(value)


# ---- new missions --------------------------------------------------------------------------


def mission_slug(title: str) -> str:
    """A mission id from a title: ASCII, lower case, words joined by `-`; `mission` if none."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:56].strip("-") or "mission"


def unique_mission_id(title: str, taken: Callable[[str], bool]) -> str:
    """The slug of `title`, or the slug with -2, -3 ... when `taken`."""
    base = mission_slug(title)
    number = 1
    while True:
        candidate = base if number == 1 else f"{base}-{number}"
        if safe_mission_id(candidate) and not taken(candidate):
            return candidate
        number += 1


def mission_taken(app: HudApp, mission_id: str) -> bool:
    """A known mission, or any folder or file of that name under missions/."""
    root = app.workspace.root
    return mission_id in app.workspace.missions or os.path.lexists(root / "missions" / mission_id)


@dataclass(frozen=True, slots=True)
class NewMission:
    """What the new-mission form collected, already typed."""

    title: str
    objective: str = ""
    non_goals: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    success_evidence: tuple[str, ...] = ()
    open_decisions: tuple[str, ...] = ()
    budget: Mapping[str, Any] | None = None

    def intent(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "objective": self.objective,
            "non_goals": list(self.non_goals),
            "success_evidence": list(self.success_evidence),
            "open_decisions": list(self.open_decisions),
            "scope": {"include": list(self.include), "exclude": list(self.exclude)},
        }

    def constraints(self) -> dict[str, Any]:
        limits = {k: v for k, v in (self.budget or {}).items() if v is not None}
        return {"budget": limits}


def create_mission(app: HudApp, form: NewMission) -> str:
    """Create the mission's intent.toml and constraints.toml; returns its id.

    Raises HumanWriteError (Invalid, ...) when the writer refuses, or in read-only mode.
    """
    writer = app.writer
    if writer is None:
        raise HumanWriteError("", "read-only: nothing is written")
    skip: set[str] = set()
    for _ in range(100):
        mission_id = unique_mission_id(form.title, lambda m: m in skip or mission_taken(app, m))
        try:
            saved = writer.create_mission(mission_id, form.intent(), form.constraints())
        except AlreadyExists:
            skip.add(mission_id)  # another writer took this id first: try the next
            continue
        app.wrote([s.relpath for s in saved])
        return mission_id
    raise HumanWriteError("", "no free mission id for this title")


# ---- the external editor -------------------------------------------------------------------


class EditorFailed(Exception):
    """The editor could not be started, or its output could not be read."""


def editor_command(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """`$VISUAL`, else `$EDITOR`, split like a shell would; None when neither is set."""
    env = os.environ if environ is None else environ
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError:
                continue
            if words:
                return words
    return None


def run_external(app: HudApp, command: list[str], path: Path) -> bool:
    """Run `command path` with the app suspended; True if the editor exited with 0.

    Raises SuspendNotSupported when the terminal cannot be handed over (headless, web).
    """
    with app.suspend():
        try:
            completed = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:
            raise EditorFailed(f"cannot run {shlex.join(command)}: {exc}") from None
    return completed.returncode == 0


async def edit_externally(app: HudApp, command: list[str], text: str, name: str) -> str | None:
    """The text after the operator edited `text` in `command`; None if they gave up.

    The copy is in a private temp folder outside the state directory (`hud.saving`),
    read back in a thread."""
    parent = saving.scratch_folder(app.workspace.root)
    if parent is None:
        raise EditorFailed(f"no folder for the editor's copy: {saving.NOWHERE}")
    folder = Path(tempfile.mkdtemp(prefix="hud-edit-", dir=parent))
    try:
        (folder / name).write_bytes(text.encode("utf-8"))
        if not run_external(app, command, folder / name):
            return None
        data = await read_document(app, folder, name)
        try:
            if isinstance(data, Problem):
                raise ValueError(data.message)
            return data.decode("utf-8")
        except ValueError as exc:
            raise EditorFailed(f"cannot read the edited text back: {exc}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---- editing intent and constraints --------------------------------------------------------

_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
M = TypeVar("M", bound=Intent | Constraints)
_MODELS: dict[Kind, type[Intent] | type[Constraints]] = {
    Kind.INTENT: Intent,
    Kind.CONSTRAINTS: Constraints,
}


def template(mission_id: str, kind: Kind) -> str:
    """A starting text for a document the mission does not have yet."""
    if kind is Kind.INTENT:
        return f'schema = 1\ntitle = "{mission_id}"\nobjective = ""\n'
    return "schema = 1\n\n[budget]\n# usd = 10.0\n# tokens = 100000\n"


class _TextSource:
    """Where the edited text comes from: the external editor, else the in-app one."""

    def __init__(self, app: HudApp, relpath: str, name: str) -> None:
        self.app = app
        self.relpath = relpath
        self.name = name
        self.command = editor_command()
        self.external = self.command is not None

    async def edit(
        self, text: str, error: Invalid | None, baseline: str | None = None
    ) -> str | None:
        """The operator's edit of `text` (None: given up); `baseline` is what is on disk."""
        from hud.screens.edit import InvalidScreen, TomlEditorScreen

        if self.command is not None and self.external:
            if error is not None and not await self.app.push_screen_wait(
                InvalidScreen(error, text)
            ):
                return None
            try:
                return await edit_externally(self.app, self.command, text, self.name)
            except SuspendNotSupported:
                message = "this terminal cannot run an external editor; using the in-app editor"
            except EditorFailed as exc:
                message = f"{exc}; using the in-app editor"
            self.external = False
            self.app.notify(message, severity="warning")
        editor = TomlEditorScreen(self.relpath, text, error, baseline)
        return await self.app.push_screen_wait(editor)


async def load_existing(app: HudApp, relpath: str, model: type[M]) -> Loaded[M] | None:
    """The document at `relpath` as the editor starts from it (None: there is none),
    loaded in a thread."""
    root = app.workspace.root

    def load() -> Loaded[M] | None:
        return load_document(root, relpath, model) if os.path.lexists(root / relpath) else None

    return await in_thread(app, load)


async def edit_document(app: HudApp, mission_id: str, kind: Kind) -> Saved | None:
    """Edit the mission's intent or constraints until saved, unchanged or given up."""
    writer = app.writer
    if writer is None:
        return None
    relpath = doc_path(mission_id, kind)
    loaded = await load_existing(app, relpath, _MODELS[kind])
    if loaded is not None and (loaded.text is None or loaded.sha256 is None):
        what = loaded.problems[0].message if loaded.problems else "unreadable"
        app.notify(f"cannot edit {relpath}: {what}", severity="error")
        return None
    text = loaded.text if loaded is not None and loaded.text is not None else None

    def save(edited: str, base_sha: str | None) -> Saved:
        if base_sha is None:  # the mission lacked the file: create it
            return _create_from_text(app, relpath, edited)
        return writer.replace(relpath, edited, base_sha)

    saved = await edit_until_saved(
        app,
        relpath,
        f"{mission_id}-{kind.value}.toml",
        text if text is not None else template(mission_id, kind),
        loaded.sha256 if loaded is not None else None,
        save,
    )
    if saved is not None:
        _announce(app, saved)
    return saved


async def edit_until_saved(
    app: HudApp,
    relpath: str,
    name: str,
    original: str,
    base_sha: str | None,
    save: Callable[[str, str | None], Saved],
) -> Saved | None:
    """The edit loop every human document shares: edit, save through `save(text, sha)`.

    An invalid text goes back to the editor with the error; a conflict shows theirs
    against yours and edits again on top of theirs; unchanged or abandoned writes
    nothing. Returns what was saved, or None.
    """
    from hud.screens.edit import ConflictScreen

    source = _TextSource(app, relpath, name)
    text = original
    error: Invalid | None = None
    while True:
        edited = await source.edit(text, error, original)
        if edited is None:
            app.notify(f"{relpath}: edit abandoned; nothing written")
            return None
        if edited == original:
            app.notify(f"{relpath}: unchanged; nothing written")
            return None
        text, error = edited, None
        try:
            return save(edited, base_sha)
        except Invalid as exc:
            error = exc
        except Conflict as exc:
            if exc.theirs_sha256 is None:
                app.notify(str(exc), severity="error")
                return None
            choice = await app.push_screen_wait(ConflictScreen(exc, EDIT_CHOICES))
            if choice is None:
                app.notify(f"{relpath}: your edit was dropped; theirs stays")
                return None
            original, base_sha = exc.theirs, exc.theirs_sha256
            text = exc.theirs if choice == "theirs" else exc.yours
        except HumanWriteError as exc:
            app.notify(str(exc), severity="error")
            return None


def _create_from_text(app: HudApp, relpath: str, text: str) -> Saved:
    """A document the mission lacked, created write-once from the operator's parsed text.

    (tomli-w writes it, as for every record the HUD creates; later edits keep the text.)
    """
    writer = app.writer
    if writer is None:
        raise HumanWriteError(relpath, "read-only: nothing is written")
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _TOML_AT.search(str(exc))
        line, column = (int(at.group(1)), int(at.group(2))) if at else (None, None)
        raise Invalid(relpath, f"invalid TOML: {exc}", line, column) from None
    try:
        return writer.create_document(relpath, parsed)
    except AlreadyExists as exc:
        theirs_sha = hashlib.sha256(exc.text.encode()).hexdigest()
        raise Conflict(relpath, exc.text, theirs_sha, text) from None


def _announce(app: HudApp, saved: Saved) -> None:
    app.wrote([p for p in (saved.relpath, saved.history) if p])
    if saved.history:
        kept = saved.history.rsplit("/", 1)[-1]
        message = f"saved {saved.relpath} as revision {saved.revision} ({kept} kept in history/)"
    else:
        message = f"saved {saved.relpath}"
    app.notify(message)


Choice = tuple[str, str]
"""(label, result) of one way out of a conflict; its key is binding `conflict.<result>`."""

EDIT_CHOICES: tuple[Choice, ...] = (
    ("re-edit theirs", "theirs"),
    ("re-edit yours, saving over theirs", "yours"),
)
BUDGET_CHOICES: tuple[Choice, ...] = (("apply the change on top of theirs", "retry"),)


# ---- budget ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LimitNow:
    """One budget limit as the adjust dialog shows it."""

    key: str
    value: Any
    used: str


def budget_now(app: HudApp, mission_id: str, limits: Mapping[str, Any]) -> list[LimitNow]:
    """Each limit with its current value and, where known, what was used."""
    mission = app.workspace.missions.get(mission_id)
    used: dict[str, str] = {}
    if mission is not None and mission.usage:
        last = mission.usage[-1]
        used = {"usd": f"${last.usd:,.2f}", "tokens": f"{last.tokens:,}", "steps": f"{last.steps}"}
    if mission is not None and mission.first_event_at and mission.last_event_at:
        elapsed = (mission.last_event_at - mission.first_event_at).total_seconds()
        used["wall_seconds"] = f"{elapsed:,.0f}s"
    return [LimitNow(spec.key, limits.get(spec.key), used.get(spec.key, "")) for spec in LIMITS]


async def adjust_budget(app: HudApp, mission_id: str, key: str | None = None) -> Saved | None:
    """Raise, lower or remove one `[budget]` limit in constraints.toml, changing only its line."""
    from hud.screens.edit import BudgetAdjustScreen, ConflictScreen

    writer = app.writer
    if writer is None:
        return None
    relpath = doc_path(mission_id, Kind.CONSTRAINTS)
    loaded = await load_existing(app, relpath, Constraints)
    if loaded is not None and (loaded.record is None or loaded.text is None):
        app.notify(
            f"{relpath} has problems; fix it first with E (edit constraints)",
            severity="error",
        )
        return None
    limits: dict[str, Any] = {}
    if loaded is not None and loaded.record is not None:
        limits = loaded.record.budget.model_dump(exclude_none=True)
    choice: tuple[str, Any] | None = await app.push_screen_wait(
        BudgetAdjustScreen(mission_id, budget_now(app, mission_id, limits), key)
    )
    if choice is None:
        return None
    key, value = choice
    if loaded is None or loaded.text is None or loaded.sha256 is None:
        try:
            saved = writer.create_document(relpath, {"budget": {key: value}})
        except HumanWriteError as exc:
            app.notify(str(exc), severity="error")
            return None
        _announce(app, saved)
        return saved
    text, sha = loaded.text, loaded.sha256
    while True:
        edited = set_table_value(text, "budget", key, value)
        if edited is None:
            edit = key_of(app.screen, "mission.edit_constraints")
            app.notify(
                f"cannot change [budget] {key} in place; edit constraints"
                + (f" with {edit}" if edit else ""),
                severity="error",
            )
            return None
        if edited == text:
            app.notify(f"budget {key}: unchanged; nothing written")
            return None
        try:
            saved = writer.replace(relpath, edited, sha)
        except Conflict as exc:
            if exc.theirs_sha256 is None:
                app.notify(str(exc), severity="error")
                return None
            again = await app.push_screen_wait(ConflictScreen(exc, BUDGET_CHOICES))
            if again is None:
                return None
            text, sha = exc.theirs, exc.theirs_sha256
            continue
        except HumanWriteError as exc:
            app.notify(str(exc), severity="error")
            return None
        _announce(app, saved)
        return saved
