"""No import circle in the project: the module graph, built with `ast`, has no cycle.

Every import counts: at the top, inside functions and under `TYPE_CHECKING`, absolute and
relative. An import of `pkg.a.b` is an arrow to `pkg.a.b` (`from pkg.a import b` to the
module `pkg.a.b` when it is one, else to `pkg.a`); a package's `__init__` is its own node,
so importing `pkg.a.b` does not count as importing `pkg.a`.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = ["store", "hud", "cli", "widgets", "themes", "agentside", "simulator"]
"""Every package: one graph over them all, so a circle across packages counts too."""


def modules(package: str) -> dict[str, Path]:
    """Every module of `package`, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _target(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a `from ... import` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project's modules that the module `name` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = _target(name, path, node)
            for alias in node.names:
                child = f"{target}.{alias.name}"
                found.add(child if child in known else target)
    return {module for module in found if module in known and module != name}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a path that ends where it starts, or None."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack = [(start, iter(sorted(graph[start])))]
        path.append(start)
        on_path.add(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif child in on_path:
                return [*path[path.index(child) :], child]
            elif child not in done:
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
                on_path.add(child)
    return None


def graph_of(packages: list[str]) -> dict[str, set[str]]:
    known = {name: path for package in packages for name, path in modules(package).items()}
    return {name: imports(name, path, known) for name, path in known.items()}


def test_no_import_cycle() -> None:
    graph = graph_of(PACKAGES)
    assert {name.split(".")[0] for name in graph} == set(PACKAGES)
    found = cycle(graph)
    assert found is None, f"import cycle: {' -> '.join(found or [])}"


def test_function_level_and_type_checking_imports_count(tmp_path: Path) -> None:
    """An import inside a function and one under TYPE_CHECKING are arrows."""
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from hud.x import A\n"
        "def f():\n    import hud.y\n"
    )
    known = {name: path for name in ("hud.m", "hud.x", "hud.y")}
    assert imports("hud.m", path, known) == {"hud.x", "hud.y"}


def test_a_cycle_is_found() -> None:
    """The search itself: a cycle through a function-level import is named."""
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
