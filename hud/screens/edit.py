"""Dialogs for writing human records: new mission, TOML editor, invalid, conflict, budget.

The acts that ask through them (and the only calls to the writer) are in `hud.acts`.
Every text shown here that came from a file goes through `safe`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import ValidationResult, Validator
from textual.widgets import Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from hud.acts.budget import LimitNow
from hud.acts.documents import Choice
from hud.acts.limits import LIMIT_BY_KEY, LIMITS, parse_limit, show_limit
from hud.acts.missions import NewMission, create_mission, mission_taken, unique_mission_id
from hud.acts.session import Conflict, HumanWriteError, Invalid
from hud.screens.base import mounted_child
from store.writers.revisions import unified_diff
from widgets.diff_view import diff_text
from widgets.footer import HudFooter
from widgets.keys import KeyHint, key_of
from widgets.safe_text import safe
from widgets.typed import TypedInput, after_typed
from widgets.typed_area import TypedTextArea

if TYPE_CHECKING:
    from hud.host import Hud

DIALOG_CSS = """
    {name} {{ align: center middle; background: $background 60%; }}
    {name} > #dialog {{
        width: 100%; max-width: 110; height: 100%; max-height: 44;
        border: round $primary; background: $surface; padding: 0 1;
    }}
    {name} #dialog-title {{ text-style: bold; height: auto; }}
    {name} .error {{ color: $error; text-style: bold; height: auto; }}
    {name} .hint {{ color: $foreground 70%; height: auto; }}
"""


def dialog_css(name: str, extra: str = "") -> str:
    return DIALOG_CSS.format(name=name) + extra


class LimitValidator(Validator):
    """Validates a budget limit as typed (empty means no limit)."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def validate(self, value: str) -> ValidationResult:
        try:
            parse_limit(self.key, value)
        except ValueError as exc:
            return self.failure(str(exc), value)
        return self.success()


class Required(Validator):
    def validate(self, value: str) -> ValidationResult:
        return self.success() if value.strip() else self.failure("required", value)


def _lines(area: TextArea) -> tuple[str, ...]:
    return tuple(line.strip() for line in area.text.splitlines() if line.strip())


# ---- new mission -----------------------------------------------------------------------------

_LISTS: tuple[tuple[str, str, str], ...] = (
    ("non_goals", "Non-goals", "what this mission will not do; one per line"),
    ("include", "Scope: include", "paths, systems, areas in scope; one per line"),
    ("exclude", "Scope: exclude", "what must not be touched; one per line"),
    ("success_evidence", "Success evidence", "what observation proves it done; one per line"),
    ("open_decisions", "Open decisions", "what still needs a human; one per line"),
)


class NewMissionScreen(ModalScreen[str | None]):
    """A form for a new mission's intent and budget; returns the new mission id."""

    DEFAULT_CSS = dialog_css(
        "NewMissionScreen",
        """
        NewMissionScreen #form { height: 1fr; }
        NewMissionScreen .row { height: auto; }
        NewMissionScreen .row > Label { width: 18; padding: 0 1 0 0; }
        NewMissionScreen .row > Input { width: 1fr; height: 1; border: none; padding: 0 1;
            background: $boost; }
        NewMissionScreen .row > TextArea { width: 1fr; height: 2; border: none; padding: 0 1;
            background: $boost; }
        NewMissionScreen .row > Input:focus, NewMissionScreen .row > TextArea:focus {
            background: $primary 25%; }
        NewMissionScreen .row > Input.-invalid { color: $error; }
        NewMissionScreen .row > Input.-invalid:focus { border: none; }
        NewMissionScreen .below { padding: 0 0 0 19; height: auto; }
        NewMissionScreen .section { text-style: bold; padding: 1 0 0 0; height: auto; }
        NewMissionScreen .gap { height: 1; }
        """,
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "create", "Create", id="new_mission.create", priority=True),
        Binding("escape", "cancel", "Cancel", id="new_mission.cancel"),
    ]
    AUTO_FOCUS = "#title"  # as it mounts: keys typed right after `n` land in the title

    def __init__(self) -> None:
        super().__init__()
        self._armed_cancel = False

    @property
    def hud(self) -> Hud:
        return cast("Hud", self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("New mission", id="dialog-title")
            with VerticalScroll(id="form"):
                with Horizontal(classes="row"):
                    yield Label("Title *")
                    yield TypedInput(
                        placeholder="what the work is, in a few words",
                        validators=[Required()],
                        id="title",
                    )
                yield Static("id: —", id="mission-id", classes="below hint")
                yield Static("", id="title-error", classes="below error")
                with Horizontal(classes="row"):
                    yield Label("Objective")
                    yield TypedTextArea(id="objective", soft_wrap=True, placeholder="the outcome")
                for key, label, hint in _LISTS:
                    yield Static(classes="gap")
                    with Horizontal(classes="row"):
                        yield Label(label)
                        yield TypedTextArea(id=key, soft_wrap=True, placeholder=hint)
                yield Static("Budget limits (empty: no limit)", classes="section")
                for spec in LIMITS:
                    with Horizontal(classes="row"):
                        yield Label(spec.label)
                        yield TypedInput(
                            placeholder=spec.hint,
                            validators=[LimitValidator(spec.key)],
                            id=f"limit-{spec.key}",
                        )
                    yield Static("", id=f"limit-{spec.key}-error", classes="below error")
            yield Static("", id="form-error", classes="error")
        yield HudFooter()

    def on_mount(self) -> None:
        for error in self.query(".error"):
            error.display = False

    # ---- as typed ------------------------------------------------------------------------

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._armed_cancel = False
        field = event.input
        if field.id == "title":
            title = field.value.strip()
            shown = unique_mission_id(title, self._taken) if title else "—"
            self.query_one("#mission-id", Static).update(Text(f"id: {shown}"))
        self._show_error(field, event.validation_result, only_if_typed=True)

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()

    def _taken(self, mission_id: str) -> bool:
        return mission_taken(self.hud.workspace, mission_id)

    def _show_error(
        self, field: Input, result: ValidationResult | None, *, only_if_typed: bool
    ) -> bool:
        """Show the field's validation failure under it; True when the value is valid."""
        error = self.query_one(f"#{field.id}-error", Static)
        failures = result.failure_descriptions if result is not None else []
        message = "; ".join(failures) if failures and (field.value or not only_if_typed) else ""
        error.update(Text(f"✗ {message}") if message else "")
        error.display = bool(message)
        if message and field.has_focus:
            self.call_after_refresh(error.scroll_visible, animate=False)
        return not failures

    # ---- submit --------------------------------------------------------------------------

    def action_create(self) -> None:
        after_typed(self, self._create)

    def _create(self) -> None:
        fields = [self.query_one("#title", Input)]
        fields += [self.query_one(f"#limit-{spec.key}", Input) for spec in LIMITS]
        first_bad: Input | None = None
        for field in fields:
            if not self._show_error(field, field.validate(field.value), only_if_typed=False):
                first_bad = first_bad or field
        if first_bad is not None:
            first_bad.focus()
            self._form_error("fix the marked fields")
            return
        area = self._area
        form = NewMission(
            title=fields[0].value.strip(),
            objective=area("objective").text.strip(),
            non_goals=_lines(area("non_goals")),
            include=_lines(area("include")),
            exclude=_lines(area("exclude")),
            success_evidence=_lines(area("success_evidence")),
            open_decisions=_lines(area("open_decisions")),
            budget={
                spec.key: parse_limit(spec.key, self.query_one(f"#limit-{spec.key}", Input).value)
                for spec in LIMITS
            },
        )
        try:
            mission_id = create_mission(self.hud.session_for(self), form)
        except HumanWriteError as exc:
            self._form_error(str(exc))
            return
        self.app.notify(f"mission {mission_id} created")
        self.dismiss(mission_id)

    def _area(self, key: str) -> TextArea:
        return self.query_one(f"#{key}", TextArea)

    def _form_error(self, message: str) -> None:
        error = self.query_one("#form-error", Static)
        error.update(safe(f"✗ {message}"))
        error.display = True

    def action_cancel(self) -> None:
        filled = any(i.value for i in self.query(Input)) or any(
            a.text for a in self.query(TextArea)
        )
        if filled and not self._armed_cancel:
            self._armed_cancel = True
            again = key_of(self, "new_mission.cancel") or "cancel"
            self.app.notify(f"press {again} again to discard this form", timeout=3)
            return
        self.dismiss(None)


# ---- in-app TOML editor ------------------------------------------------------------------------


_AT = re.compile(r" \(at line \d+, column \d+\)")


def _code_area(text: str) -> TextArea:
    """A TOML editor: highlighted where tree-sitter knows TOML, plain text otherwise."""
    try:
        return TypedTextArea.code_editor(text, language="toml", id="toml", soft_wrap=False)
    except Exception:  # the language is unknown to this tree-sitter install
        return TypedTextArea.code_editor(text, id="toml", soft_wrap=False)


def invalid_message(error: Invalid) -> str:
    """`line 3, column 7: what is wrong`, without tomllib's own `(at line 3, column 7)`."""
    reason = _AT.sub("", error.reason)
    where = []
    if error.line is not None:
        where.append(f"line {error.line}")
    if error.column is not None:
        where.append(f"column {error.column}")
    prefix = ", ".join(where)
    return f"{prefix}: {reason}" if prefix else reason


class TomlEditorScreen(ModalScreen[str | None]):
    """Edit a TOML text in the app; ctrl+s returns it, esc (twice if changed) gives up.

    `baseline` is the text on disk: when the text differs from it (an unsaved edit, or
    an invalid one brought back), the first esc only warns.
    """

    DEFAULT_CSS = dialog_css(
        "TomlEditorScreen",
        """
        TomlEditorScreen #toml { height: 1fr; border: none; }
        """,
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="editor.save", priority=True),
        # priority: in a code editor the TextArea would take escape to move focus away
        Binding("escape", "cancel", "Cancel", id="editor.cancel", priority=True),
    ]

    def __init__(
        self, relpath: str, text: str, error: Invalid | None = None, baseline: str | None = None
    ) -> None:
        super().__init__()
        self.relpath = relpath
        self.text = text
        self.error = error
        self.baseline = text if baseline is None else baseline
        self._armed_cancel = False

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            title = Text("Editing ", style="bold")
            title.append_text(safe(self.relpath))
            yield Static(title, id="dialog-title")
            message = ""
            if self.error is not None:
                message = f"✗ not saved: {invalid_message(self.error)}"
            error = Static(safe(message), id="editor-error", classes="error")
            error.display = bool(message)
            yield error
            yield _code_area(self.text)
        yield HudFooter()

    @property
    def area(self) -> TextArea:
        return self.query_one("#toml", TextArea)

    def on_mount(self) -> None:
        area = mounted_child(self, "#toml", TextArea)
        if area is None:
            return
        area.focus()
        if self.error is not None and self.error.line is not None:
            row = max(0, self.error.line - 1)
            area.cursor_location = (row, max(0, (self.error.column or 1) - 1))
            area.scroll_cursor_visible()

    @on(TextArea.Changed)
    def _changed(self) -> None:
        self._armed_cancel = False

    def action_save(self) -> None:
        after_typed(self, lambda: self.dismiss(self.area.text))

    def action_cancel(self) -> None:
        after_typed(self, self._cancel)

    def _cancel(self) -> None:
        if self.area.text != self.baseline and not self._armed_cancel:
            self._armed_cancel = True
            again = key_of(self, "editor.cancel") or "cancel"
            save = key_of(self, "editor.save") or "save"
            self.app.notify(f"unsaved changes: {again} again to discard, {save} to save", timeout=3)
            return
        self.dismiss(None)


# ---- invalid text, edited externally ---------------------------------------------------------


class InvalidScreen(ModalScreen[bool]):
    """The edited text does not validate: go back into the editor (True) or drop it."""

    DEFAULT_CSS = dialog_css(
        "InvalidScreen",
        """
        InvalidScreen > #dialog { max-height: 20; height: auto; }
        InvalidScreen #excerpt { height: auto; padding: 1 0; }
        """,
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e,enter", "again", "Edit again", id="invalid.again"),
        Binding("escape", "drop", "Drop edit", id="invalid.drop"),
    ]

    def __init__(self, error: Invalid, text: str) -> None:
        super().__init__()
        self.error = error
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            title = Text("Not saved: ", style="bold")
            title.append_text(safe(self.error.relpath))
            yield Static(title, id="dialog-title")
            yield Static(safe(f"✗ {invalid_message(self.error)}"), classes="error")
            yield Static(excerpt(self.text, self.error), id="excerpt")
            yield KeyHint(
                ("invalid.again", "back into the editor with your text kept"),
                ("invalid.drop", "drop it"),
            )
        yield HudFooter()

    def action_again(self) -> None:
        self.dismiss(True)

    def action_drop(self) -> None:
        self.dismiss(False)


def excerpt(text: str, error: Invalid, around: int = 2) -> Text:
    """The lines around the error, numbered, with a caret under the column."""
    if error.line is None:
        return Text("")
    lines = text.splitlines()
    first = max(1, error.line - around)
    last = min(len(lines), error.line + around)
    out = Text()
    for number in range(first, last + 1):
        mark = ">" if number == error.line else " "
        out.append(f"{mark}{number:4} │ ", style="bold" if mark == ">" else "dim")
        out.append_text(safe(lines[number - 1]))
        out.append("\n")
        if number == error.line and error.column is not None:
            out.append(" " * (8 + error.column - 1) + "^", style="bold")
            out.append("\n")
    return out


# ---- conflict ----------------------------------------------------------------------------------


class ConflictScreen(ModalScreen[str | None]):
    """The file changed on disk while it was edited: a diff of theirs against yours."""

    DEFAULT_CSS = dialog_css(
        "ConflictScreen",
        """
        ConflictScreen #diff { height: 1fr; background: $panel; }
        """,
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "choose('theirs')", "Re-edit theirs", id="conflict.theirs"),
        Binding("y", "choose('yours')", "Re-edit yours", id="conflict.yours"),
        Binding("r", "choose('retry')", "Apply on theirs", id="conflict.retry"),
        Binding("escape", "cancel", "Drop yours", id="conflict.cancel"),
    ]

    def __init__(self, conflict: Conflict, choices: Sequence[Choice]) -> None:
        super().__init__()
        self.conflict = conflict
        self.choices = {result: label for label, result in choices}

    def compose(self) -> ComposeResult:
        conflict = self.conflict
        with Vertical(id="dialog"):
            title = Text("Conflict: ", style="bold")
            title.append_text(safe(str(conflict)))
            yield Static(title, id="dialog-title")
            yield Static(
                "Someone saved it while you edited. Diff of theirs (on disk, -) against yours (+):",
                classes="hint",
            )
            lines = unified_diff(conflict.theirs, conflict.yours, "theirs (on disk)", "yours")
            with VerticalScroll(id="diff"):
                yield Static(diff_text(lines, self.app.theme_variables, empty="identical"))
            ways = [(f"conflict.{result}", label) for result, label in self.choices.items()]
            yield KeyHint(*ways, ("conflict.cancel", "drop yours, keep theirs"))
        yield HudFooter()

    def on_mount(self) -> None:
        diff = mounted_child(self, "#diff", VerticalScroll)
        if diff is not None:
            diff.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose":
            return bool(parameters) and parameters[0] in self.choices
        return True

    def action_choose(self, result: str) -> None:
        if result in self.choices:
            self.dismiss(result)

    def action_cancel(self) -> None:
        self.dismiss(None)


# ---- budget ------------------------------------------------------------------------------------


class BudgetAdjustScreen(ModalScreen[tuple[str, Any] | None]):
    """Pick one budget limit and type its new value; returns (key, value or None)."""

    DEFAULT_CSS = dialog_css(
        "BudgetAdjustScreen",
        """
        BudgetAdjustScreen > #dialog { max-height: 18; max-width: 80; }
        BudgetAdjustScreen #limits { height: auto; max-height: 7; }
        BudgetAdjustScreen #value-label { padding: 1 0 0 0; height: auto; }
        BudgetAdjustScreen #value { height: 1; border: none; padding: 0 1; background: $boost; }
        BudgetAdjustScreen #value:focus { background: $primary 25%; }
        """,
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="budget_adjust.cancel"),
    ]

    def __init__(self, mission_id: str, limits: Sequence[LimitNow], key: str | None) -> None:
        super().__init__()
        self.mission_id = mission_id
        self.limits = {limit.key: limit for limit in limits}
        self.key = key if key in self.limits else None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            title = Text("Adjust budget: ", style="bold")
            title.append_text(safe(self.mission_id))
            yield Static(title, id="dialog-title")
            yield KeyHint(("select", "pick a limit and type its new value"), ("submit", "save"))
            yield OptionList(*[self._option(limit) for limit in self.limits.values()], id="limits")
            yield Static("", id="value-label")
            yield TypedInput(id="value", disabled=True)
            yield Static("", id="value-error", classes="error")
        yield HudFooter()

    def _option(self, limit: LimitNow) -> Option:
        spec = LIMIT_BY_KEY[limit.key]
        prompt = Text(f"{spec.label:<10} ")
        prompt.append(f"{show_limit(limit.value) or 'no limit':<24}", style="bold")
        if limit.used:
            prompt.append(f" used {limit.used}", style="dim")
        return Option(prompt, id=limit.key)

    def on_mount(self) -> None:
        options = mounted_child(self, "OptionList", OptionList)
        if options is None:
            return
        options.focus()
        if self.key is not None:
            options.highlighted = list(self.limits).index(self.key)
            self._pick(self.key)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self._pick(event.option.id)

    def _pick(self, key: str) -> None:
        self.key = key
        spec = LIMIT_BY_KEY[key]
        self.query_one("#value-label", Static).update(
            Text(f"New {spec.label.lower()} limit ({spec.hint}; empty removes it):")
        )
        field = self.query_one("#value", Input)
        field.disabled = False
        field.validators = [LimitValidator(key)]
        field.value = show_limit(self.limits[key].value)
        field.placeholder = spec.hint
        field.focus()
        self._error("")

    @on(Input.Changed, "#value")
    def _typed(self, event: Input.Changed) -> None:
        result = event.validation_result
        self._error("; ".join(result.failure_descriptions) if result and event.value else "")

    @on(Input.Submitted, "#value")
    def _submitted(self, event: Input.Submitted) -> None:
        if self.key is None:
            return
        try:
            value = parse_limit(self.key, event.value)
        except ValueError as exc:
            self._error(str(exc))
            return
        self.dismiss((self.key, value))

    def _error(self, message: str) -> None:
        error = self.query_one("#value-error", Static)
        error.update(safe(f"✗ {message}") if message else "")
        error.display = bool(message)

    def action_cancel(self) -> None:
        self.dismiss(None)
