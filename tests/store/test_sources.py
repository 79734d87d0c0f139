"""The declared source interface: every source implements it, the app and `hud check`
name none, and each source's human-writable documents are declared."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import hud.app
import hud.first_run
import store.index.approval_checks
import store.index.check
from hud.screens.base import RowScreen
from hud.screens.details import DETAIL_SCREENS, detail_screen
from store.format.records import Settings
from store.index.workspace import Workspace
from store.sources.base import Source
from store.sources.registry import KINDS, Context
from tests.small_support import VALID, small_fixture


def test_every_source_has_every_method_of_the_protocol(tmp_path: Path) -> None:
    wanted = {
        name
        for name, member in inspect.getmembers(Source)
        if not name.startswith("_") and callable(member)
    }
    context = Context(tmp_path, lambda: False, lambda: Settings.model_validate({"schema": 1}))
    for kind in KINDS:
        source = kind.make(context)
        assert wanted <= {name for name in dir(source) if callable(getattr(source, name))}
        assert source.kind == kind.name and kind.folders


def test_each_kind_of_source_has_its_detail_screen() -> None:
    kinds = {kind.name for kind in KINDS}
    assert kinds == set(DETAIL_SCREENS)
    for kind in kinds:
        screen = detail_screen(kind, "row-1")
        assert isinstance(screen, RowScreen) and screen.mission_id == "row-1"


def test_the_app_and_check_iterate_over_sources_without_naming_one() -> None:
    modules = (hud.app, store.index.check, hud.first_run, store.index.approval_checks)
    for module in modules:
        code = "\n".join(
            line.split("#")[0]
            for line in inspect.getsource(module).splitlines()
            if not line.lstrip().startswith(('"', "#", "from ", "import "))
        )
        assert not re.search(r"\.(small|loopexec|loopx)\b", code), module.__name__


def test_small_declares_intent_and_constraints_as_human_documents() -> None:
    workspace = Workspace(small_fixture(VALID))
    workspace.scan()
    documents = {
        source.kind: source.documents(row_id)
        for source in workspace.sources
        for row_id in source.row_ids()
    }
    assert documents == {"small": (".small/constraints.small.yml", ".small/intent.small.yml")}


def test_a_state_directory_is_told_by_any_source_folder_or_own_name() -> None:
    from store.sources.registry import holds_state

    assert holds_state(".small", set())  # SMALL's own folder opened as the directory
    for folder in ("missions", ".small", ".loopexec", ".loopx"):
        assert holds_state("project", {folder, "src"})
    assert not holds_state("project", {"src", "docs"})


def test_the_small_editor_takes_its_documents_from_the_source() -> None:
    from hud.acts.small import accept_commands

    workspace = Workspace(small_fixture(VALID))
    workspace.scan()
    documents = workspace.documents(workspace.small.id)
    assert documents == (".small/constraints.small.yml", ".small/intent.small.yml")

    def kinds(listed: tuple[str, ...]) -> list[str]:
        commands = accept_commands(workspace.small, listed)
        return [command.split("small draft ")[1].split()[0] for command in commands]

    assert kinds(documents) == ["intent", "constraints"]
    assert kinds(documents[:1]) == ["constraints"]
    assert workspace.documents("no-such-row") == ()


def test_the_workspace_makes_a_source_only_for_what_the_directory_holds(tmp_path: Path) -> None:
    assert [s.kind for s in Workspace(tmp_path).sources] == ["mission"]
    assert [s.kind for s in Workspace(tmp_path / ".small").sources] == ["small", "mission"]
    (tmp_path / ".loopexec").mkdir()
    (tmp_path / ".loopexec" / "run-r1.jsonl").write_text("")
    (tmp_path / "missions").mkdir()
    workspace = Workspace(tmp_path)
    workspace.scan()
    assert [s.kind for s in workspace.sources] == ["loopexec", "mission"]  # in routing order
    assert workspace.is_external(".loopx/registry.json")  # routed to loopx, not yet made
    assert [s.kind for s in workspace.sources] == ["loopexec", "mission"]
