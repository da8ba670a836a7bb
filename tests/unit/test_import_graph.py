"""No import circles between the modules of the engine, the server and the
Python SDK (issue 37).

The graph is built from the source text (ast), so it needs no imports of
its own: an edge is a module-level `import`/`from ... import` of another
module of the three packages. Imports inside functions and under
`if TYPE_CHECKING:` are left out (they do not run when the module loads).
An import of a package counts as an edge to its `__init__`; `from pkg
import name` counts as an edge to `pkg.name` when that is a module, else
to `pkg`.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Folder that holds the package -> the package.
PACKAGES = {
    ROOT: "forge_core",
    ROOT / "server": "forge_server",
    ROOT / "clients/python": "forge_client",
}

# Cycles that are known and not fixed yet, each as its modules sorted; the
# test fails when one of them is gone (take it off) or another appears.
ALLOWED_CYCLES: set[tuple[str, ...]] = set()


def modules() -> dict[str, Path]:
    """Dotted module name -> source file, generated stubs included (they
    import each other but nothing else of ours)."""
    found: dict[str, Path] = {}
    for base, package in PACKAGES.items():
        for path in sorted((base / package).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it loads: its top-level statements,
    and those inside top-level `if`/`try` blocks (but not TYPE_CHECKING)."""
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                out += _top_level_imports(node.body)
            out += _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                out += _top_level_imports(block)
            for handler in node.handlers:
                out += _top_level_imports(handler.body)
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """`name`, or the nearest package above it, when it is one of ours."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _top_level_imports(ast.parse(path.read_text()).body):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[: len(up) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved is not None and resolved != name:
                    graph[name].add(resolved)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Each strongly connected component of more than one module (Tarjan),
    its modules sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_modules_are_found() -> None:
    names = set(modules())
    assert {"forge_core.grammar", "forge_server.cli", "forge_client"} <= names
    assert "forge_core.workflow" in import_graph()["forge_core.grammar"]


def test_no_import_circle() -> None:
    found = set(cycles(import_graph()))
    new = [" <-> ".join(cycle) for cycle in sorted(found - ALLOWED_CYCLES)]
    assert not new, f"import circles: {new}"
    gone = sorted(ALLOWED_CYCLES - found)
    assert not gone, f"listed circles that are gone, take them off: {gone}"


def test_a_circle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [("a", "b", "c")]


def test_only_imports_that_run_at_load_count() -> None:
    source = """
import os
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from forge_core import workflow
try:
    from forge_core import grammar
except ImportError:
    grammar = None
def later():
    from forge_core import loop
"""
    found = _top_level_imports(ast.parse(source).body)
    names = [n.module if isinstance(n, ast.ImportFrom) else n.names[0].name for n in found]
    assert names == ["os", "typing", "forge_core"]
    assert [a.name for a in found[-1].names] == ["grammar"]
