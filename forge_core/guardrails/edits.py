"""Files and edits: a path the request names, and a read file's text with the
change the request asks for.

"Set the timeout to 45 in worker.ini" was answered with
`load_config("file")` and `save_config("file", "test.txt")`: the model neither copied the file's
name nor wrote back what it read. Two rules:

- **paths**: a string parameter named as a path or file (`path`, `file`,
  `filename`, `config_path`, `url`) takes the file names the conversation
  writes: a name with an extension (`worker.ini`, `notes/2027.md`) or a path
  with a slash; the request's before the results';
- **edits**: a text parameter (`content`, `text`, `body`) of a tool that
  also takes a path, after a tool returned that file's text (lines of
  `key = value` or `key: value`), takes that text with each assignment the
  request makes ("set the timeout to 45", "change log level to debug")
  applied to the line of the same key, the rest as it was. Where the
  request's assignments change no line, nothing is offered.
"""

from __future__ import annotations

import re

from forge_core.guardrails import (
    Preferred,
    TurnFacts,
    decide,
    first_found,
    parameters,
    undecided,
)
from forge_core.guardrails.text import words

_PATH_WORDS = {"path", "file", "filename", "filepath", "url", "uri"}
_TEXT_WORDS = {"content", "contents", "text", "body", "data"}
_FILE = re.compile(r"(?<![\w@/.-])((?:[\w.~-]+/)*[\w-]+(?:\.[A-Za-z][A-Za-z0-9]{0,7})+)(?![\w@])")
_SLASHED = re.compile(r"(?<![\w@])((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)+/?)")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s<>\"']+", re.IGNORECASE)
_ASSIGN = re.compile(
    r"\b(?:set|change|update|make|switch)\s+(?:the\s+)?([A-Za-z][\w .-]{0,40}?)\s+"
    r"(?:to|=)\s+[\"'`]?([^\s\"'`,;]+)",
    re.IGNORECASE,
)


def file_names(text: str) -> list[str]:
    """The URLs, file names and paths `text` writes ("https://x.org/a.mp3",
    "worker.ini", "conf/db.yaml")."""
    urls = [m.group(0).rstrip(".,;:!?)") for m in _URL.finditer(text)]
    rest = _URL.sub(" ", text)
    found = [m.group(1) for m in _FILE.finditer(rest)] + [
        m.group(1) for m in _SLASHED.finditer(rest)
    ]
    # Numbers (3.5, 0.0.0.0) and e-mail domains are not files.
    files = [f for f in found if re.search(r"[A-Za-z]", f.rsplit(".", 1)[-1]) and "@" not in f]
    return list(dict.fromkeys(urls + files))


def edited(original: str, request: str) -> str | None:
    """`original` with each of the request's assignments applied to the
    line of its key; None when none applies."""
    out = original
    changed = False
    for key, raw in _ASSIGN.findall(request):
        value = raw.rstrip(".!?:")
        key_words = words(key)
        if not key_words:
            continue
        label = r"[\s_.-]*".join(re.escape(w) for w in key_words)
        line = re.compile(rf"(?im)^(\s*{label}\s*[:=]\s*)([\"']?)([^\"'\n]*?)(\2)(\s*(?:#.*)?)$")

        def put(m: re.Match[str], new: str = value) -> str:
            return f"{m.group(1)}{m.group(2)}{new}{m.group(4)}{m.group(5)}"

        out, n = line.subn(put, out)
        changed = changed or n > 0
    return out if changed else None


def _is(name: str, kinds: set[str]) -> bool:
    return bool(set(words(name)) & kinds)


class FileEdits:
    name = "file_edits"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [t for _, t in reversed(facts.results)]
        for tool in facts.workflow.tools:
            params = [(n, s) for n, s in parameters(tool) if s.get("type") == "string"]
            paths = [n for n, s in params if _is(n, _PATH_WORDS) and "enum" not in s]
            for name in paths:
                key = f"{tool.name}.{name}"
                if undecided(out, key):
                    decide(out, key, first_found((facts.requests, results), file_names), self.name)
            if not paths or not results:
                continue
            for name, schema in params:
                key = f"{tool.name}.{name}"
                if not _is(name, _TEXT_WORDS) or "enum" in schema or not undecided(out, key):
                    continue
                texts = [e for r in results for t in facts.requests if (e := edited(r, t))]
                decide(out, key, texts[:1], self.name)
