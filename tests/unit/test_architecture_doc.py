"""Every code name docs/architecture.md cites exists.

The page traces one tool call through the code by file and function name;
a rename that forgets it leaves a reader looking for what is gone. Each
backticked span that looks like code is checked:

- a path (`forge_core/loop.py`, `proto/forge/v1/*.proto`) must exist
  (a glob must match); a bare file name (`runs.py`) must exist somewhere in
  the repository's sources;
- a dotted name (`GuardedRun.execute`, `convert.options_from_pb`,
  `forge_core.loop.run_workflow`) or a plain one (`run_workflow`) must be
  made of names the sources define: a Python, Go or TypeScript function,
  class, type, method, field or module, or a proto message, field, enum
  value or rpc.

Spans with spaces, flags and the like (`--start-timeout`, `@wf.tool(...)`)
are prose, not names, and are skipped.
"""

from __future__ import annotations

import ast
import keyword
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
SOURCE_ROOTS = ("forge_core", "server", "clients", "proto", "tests", "bench")
SKIP_PARTS = {"node_modules", ".venv", "__pycache__", "dist", "gen"}
SUFFIXES = (".py", ".go", ".ts", ".proto", ".md")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
# Names the prose uses that no source defines (variables of examples).
NOT_CODE = {"self"}


def cited() -> list[str]:
    return re.findall(r"`([^`\n]+)`", DOC.read_text())


@lru_cache(maxsize=1)
def source_files() -> list[Path]:
    out = []
    for root in SOURCE_ROOTS:
        for path in (ROOT / root).rglob("*"):
            if path.suffix in SUFFIXES and path.is_file():
                if not SKIP_PARTS & set(path.relative_to(ROOT).parts):
                    out.append(path)
    return out


def python_names(text: str) -> set[str]:
    """What a module defines: functions, classes, parameters, and the
    targets of assignments (module names, fields, `self.x` attributes)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        names.add(sub.attr)
    return names


GO_OR_TS = re.compile(
    r"\bfunc\s+(?:\([^)]*\)\s*)?(\w+)"
    r"|\btype\s+(\w+)"
    r"|\b(?:function|class|interface|const|let|enum)\s+(\w+)"
    r"|^\s*(?:(?:private|public|protected|static|async|readonly)\s+)*(\w+)\s*[?]?\s*[(<:]"
    r"|^\s*(\w+)\s+\S",
    re.M,
)
PROTO = re.compile(r"\b(?:message|enum|rpc|service)\s+(\w+)|(\w+)\s*=\s*\d+\s*[;\[]")


@lru_cache(maxsize=1)
def defined_names() -> set[str]:
    names: set[str] = set()
    for path in source_files():
        names.add(path.stem)
        names.update(path.relative_to(ROOT).parts[:-1])
        text = path.read_text(errors="replace")
        if path.suffix == ".py":
            names |= python_names(text)
        elif path.suffix in (".go", ".ts"):
            names |= {n for groups in GO_OR_TS.findall(text) for n in groups if n}
        elif path.suffix == ".proto":
            names |= {n for groups in PROTO.findall(text) for n in groups if n}
    return names


def missing(span: str) -> str | None:
    """Why `span` names nothing, or None when it exists (or is not a name)."""
    if "/" in span or span.endswith(SUFFIXES):
        if " " in span:
            return None
        if "/" not in span:
            found = any(p.name == span for p in source_files())
            return None if found else f"no file named {span}"
        hits = list(ROOT.glob(span.rstrip("/"))) or list(ROOT.glob(f"*/{span.rstrip('/')}"))
        return None if hits else f"no path {span}"
    span = re.sub(r"\((?:\.\.\.)?\)$", "", span)  # `run()`, `start(...)`
    if not NAME.match(span):
        return None
    parts = [p for p in span.split(".") if p not in NOT_CODE]
    if len(parts) == 1 and (keyword.iskeyword(parts[0]) or parts[0].isupper()):
        return None
    unknown = [p for p in parts if p not in defined_names()]
    return f"{span}: {', '.join(unknown)} defined nowhere" if unknown else None


def test_the_doc_cites_code() -> None:
    spans = cited()
    assert "GuardedRun.execute" in spans and "forge_core/run_state.py" in spans


def test_every_cited_name_exists() -> None:
    problems = sorted({why for span in cited() if (why := missing(span))})
    assert problems == []


def test_a_made_up_name_is_caught() -> None:
    assert missing("GuardedRun.no_such_method") is not None
    assert missing("forge_core/no_such_module.py") is not None
    assert missing("no_such_file.py") is not None
    assert missing("GuardedRun.execute") is None
    assert missing("forge_core.loop.no_such_function(...)") is not None
    assert missing("--start-timeout") is None
