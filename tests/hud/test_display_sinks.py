"""The display sinks of `hud.display.SINKS`, held to it by reading the code.

Every place that shows text outside a widget's body takes it through `hud.display`
(or `widgets.safe_text`, or `hud.output` for the CLI). This reads every module
of hud/, cli/ and widgets/ so that a new toast, palette hit, title, tooltip, label or print
cannot bypass that; a planted bypass of each kind shows the reader catches it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import cli
import hud
import widgets
from hud.display import SINKS, SafeTitles

ROOTS = (Path(hud.__file__).parent, Path(widgets.__file__).parent, Path(cli.__file__).parent)
PROJECT = ROOTS[0].parent

SAFE_MAKERS = {"safe", "visual", "Text", "Content"}
"""Calls whose result a markup-parsing sink shows as written (`Content(...)` is plain)."""
LABELS = {"Static", "Label", "TabPane", "Button", "Option"}
"""Widgets whose string argument is parsed as markup."""
TITLES = {"title", "sub_title"}
CLASS_TITLES = {"TITLE", "SUB_TITLE"}
VISUAL_ATTRIBUTES = {"tooltip", "border_title", "border_subtitle"}
PRINTS = {"print", "pprint"}
WRITES = {"write", "writelines"}
HITS = {"Hit", "DiscoveryHit"}
TOASTS = {"Notification", "Notify"}


def _name(node: ast.AST) -> str:
    """`a.b.c` for a name or attribute chain; '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Call):
        return _name(node.func) + "()"
    return ""


def _built_string(node: ast.AST) -> bool:
    """A string assembled at run time: an f-string, `+` or `%` of strings, `.format()`."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return any(
            isinstance(side, ast.JoinedStr | ast.Constant) and not _is_number(side)
            for side in (node.left, node.right)
        ) or _built_string(node.left)
    if isinstance(node, ast.IfExp):
        return _built_string(node.body) or _built_string(node.orelse)
    return isinstance(node, ast.Call) and _name(node.func).endswith(("format", "str"))


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, str)


def _made_safe(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _name(node.func).rpartition(".")[2] in SAFE_MAKERS


class _Reader(ast.NodeVisitor):
    """Collects each bypass of a sink in one module as `path:line: what`."""

    def __init__(self, path: str, module: str) -> None:
        self.path = path
        self.module = module
        self.classes: list[str] = []
        self.functions: list[str] = []
        self.found: list[str] = []

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.path}:{getattr(node, 'lineno', 0)}: {what}")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _has_safe_titles(self) -> bool:
        if not self.classes or self.module == "":
            return False
        cls = getattr(importlib.import_module(self.module), self.classes[-1], None)
        return isinstance(cls, type) and issubclass(cls, SafeTitles)

    def _assigned(self, target: ast.AST, value: ast.AST | None, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute) and target.attr in TITLES:
            if _name(target.value) != "self" or not self._has_safe_titles():
                self.flag(node, f"{_name(target)} set outside a SafeTitles class")
        elif isinstance(target, ast.Name) and target.id in CLASS_TITLES and not self.functions:
            if not self._has_safe_titles():
                self.flag(node, f"{target.id} of a class without SafeTitles")
        elif (
            isinstance(target, ast.Attribute)
            and target.attr in VISUAL_ATTRIBUTES
            and value is not None
            and not (_made_safe(value) or _is_none(value))
        ):
            self.flag(node, f"{target.attr} set without visual()/safe()")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target, node.value, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assigned(node.target, node.value, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        last = name.rpartition(".")[2]
        in_output = self.path.endswith("hud/output.py")
        in_display = self.path.endswith("hud/display.py")
        if last in HITS and not in_display:
            self.flag(node, f"{name}() outside hud.display (use hit() / discovery_hit())")
        if last in TOASTS:
            self.flag(node, f"{name}() builds a toast past HudApp.notify")
        if last == "notify":
            if name in ("super().notify", "App.notify") and self.functions[-1:] != ["notify"]:
                self.flag(node, f"{name}() bypasses HudApp.notify")
            for keyword in node.keywords:
                if keyword.arg == "markup" and not _is_false(keyword.value):
                    self.flag(node, "notify(markup=...): a toast never renders markup")
        if last in LABELS or (last == "update" and node.args):
            shown = node.args[0] if node.args else None
            if shown is not None and _built_string(shown):
                self.flag(node, f"{name}() of a built string (use Text(), Content() or safe())")
        if last == "with_tooltip" and node.args and not _made_safe(node.args[0]):
            self.flag(node, "with_tooltip() without visual()/safe()")
        if not in_output:
            if name in PRINTS:
                self.flag(node, f"{name}() outside hud.output (use say())")
            if last in WRITES and name.startswith(("sys.stdout", "sys.stderr")):
                self.flag(node, f"{name}() outside hud.output (use say())")
            if name == "json.dumps" and self.path.startswith(("hud/", "cli/")):
                self.flag(node, "json.dumps() outside hud.output (use json_text())")
        self.generic_visit(node)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def bypasses(source: str, path: str, module: str = "") -> list[str]:
    reader = _Reader(path, module)
    reader.visit(ast.parse(source))
    return reader.found


PLANTED = {
    "notify-bypass": "class A:\n    def go(self):\n        super().notify('x')\n",
    "notify-markup": "app.notify(message, markup=True)\n",
    "toast": "app.post_message(Notify(Notification(text, '', 'information', 3)))\n",
    "hit": "yield Hit(1, matcher.highlight(name), action)\n",
    "discovery": "yield DiscoveryHit(name, action)\n",
    "title": "class S(Screen):\n    def on_mount(self):\n        self.sub_title = title\n",
    "app-title": "screen.app.title = title\n",
    "class-title": "class S(Screen):\n    TITLE = 'x'\n",
    "tooltip": "widget.tooltip = f'{title}'\n",
    "border": "widget.border_title = title\n",
    "with-tooltip": "Label('x').with_tooltip(title)\n",
    "static": "Static(f'{title}')\n",
    "update": "label.update('id: ' + title)\n",
    "update-ifexp": "label.update(f'x {m}' if m else '')\n",
    "tabpane": "TabPane('{}'.format(title))\n",
    "print": "print(title)\n",
    "stderr": "sys.stderr.write(title)\n",
    "json": "json.dumps(report)\n",
}
"""One bypass of each kind of sink: the reader must catch every one."""


def test_every_sink_takes_text_through_the_funnel() -> None:
    missed = [kind for kind, source in PLANTED.items() if not bypasses(source, "hud/planted.py")]
    assert missed == []
    assert set(SINKS) == {"notify", "title", "key display", "palette", "tooltip", "label", "cli"}
    found: list[str] = []
    for root in ROOTS:
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(PROJECT)
            module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
            found += bypasses(path.read_text("utf-8"), relative.as_posix(), module)
    assert found == []
