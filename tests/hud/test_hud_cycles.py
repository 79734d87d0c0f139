"""No import circle in the HUD's packages: the module graph, built from the source with
`ast` (imports inside functions and under TYPE_CHECKING count as arrows), has no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("hud", "widgets", "cli")


def _modules(package: str) -> dict[str, Path]:
    """Module name -> file, for every module of `package` (a package is its __init__)."""
    found: dict[str, Path] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that module `name` imports, anywhere in its file."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            targets.add(module)
            targets.update(f"{module}.{alias.name}" for alias in node.names)
    edges = set()
    for target in targets:
        while target and target not in known:  # `a.b.name` imports module `a.b`
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def graph_of(packages: tuple[str, ...]) -> dict[str, set[str]]:
    modules = {name: path for package in packages for name, path in _modules(package).items()}
    known = set(modules)
    return {name: _imported(name, path, known) for name, path in modules.items()}


def test_the_graph_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    """The walk counts an import inside a function and one under TYPE_CHECKING."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from hud.x import A\n"
        "def f():\n    import hud.y\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert _imported("hud.m", path, {"hud.m", "hud.x", "hud.y"}) == {"hud.x", "hud.y"}
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


@pytest.mark.parametrize("package", ["hud", "widgets", "cli"])
def test_no_import_circle(package: str) -> None:
    graph = graph_of(PACKAGES)
    circles = [c for c in _cycles(graph) if any(m.split(".")[0] == package for m in c)]
    assert circles == []
