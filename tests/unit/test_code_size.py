"""Modules under 700 lines, functions under 80, in the engine, the server
and the Python SDK (generated stubs aside).

The house standard (issue 37). Where it does not hold yet the offender is
listed below with its size today: it may shrink but not grow, a new
offender fails, and one that no longer offends must leave the list, so the
list only ever gets shorter. Entries are keyed by file name (and function
name), not by folder, so that moving a module into a room does not break
them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("forge_core", "server/forge_server", "clients/python/forge_client")
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80

# file name -> lines, and "file name:function" -> lines, as measured when
# the test was written; shrink them as the rooms are split.
MODULES_OVER: dict[str, int] = {}
FUNCTIONS_OVER: dict[str, int] = {}


def sources() -> list[Path]:
    out = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")) or "gen" in path.parts:
                continue
            out.append(path)
    return out


def measure() -> tuple[dict[str, int], dict[str, int]]:
    """(modules over the limit, functions over the limit) by key."""
    modules: dict[str, int] = {}
    functions: dict[str, int] = {}
    for path in sources():
        text = path.read_text()
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            modules[path.name] = max(lines, modules.get(path.name, 0))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                key = f"{path.name}:{node.name}"
                if size > MAX_FUNCTION_LINES:
                    functions[key] = max(size, functions.get(key, 0))
    return modules, functions


def check(found: dict[str, int], allowed: dict[str, int], limit: int, what: str) -> list[str]:
    problems = []
    for key, size in sorted(found.items()):
        if key not in allowed:
            problems.append(f"{what} {key} has {size} lines (limit {limit})")
        elif size > allowed[key]:
            problems.append(f"{what} {key} grew to {size} lines (listed at {allowed[key]})")
    for key in sorted(set(allowed) - set(found)):
        problems.append(f"{what} {key} is within {limit} lines now: take it off the list")
    return problems


def test_the_sources_are_found() -> None:
    names = {p.name for p in sources()}
    assert {"loop.py", "run_state.py", "convert.py", "tools.py"} <= names


def test_no_module_over_700_lines_but_the_listed_ones() -> None:
    modules, _ = measure()
    assert check(modules, MODULES_OVER, MAX_MODULE_LINES, "module") == []


def test_no_function_over_80_lines_but_the_listed_ones() -> None:
    _, functions = measure()
    assert check(functions, FUNCTIONS_OVER, MAX_FUNCTION_LINES, "function") == []


def test_the_check_catches_a_new_offender_and_a_stale_entry() -> None:
    problems = check({"new.py:f": 90}, {"old.py:g": 100}, 80, "function")
    assert problems == [
        "function new.py:f has 90 lines (limit 80)",
        "function old.py:g is within 80 lines now: take it off the list",
    ]
