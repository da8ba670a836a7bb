"""Secrets in tool outputs, found before the model sees them.

Detection is detect-secrets' (Yelp): its provider-specific detectors (AWS,
GitHub, Slack, Stripe, private keys, JWTs…) and its keyword detector
(`password=…`, `"api_key": "…"`). Its entropy detectors are left out: they
flag every order id and hash, which are exactly the values a tool result
exists to hand the model. Nothing is downloaded; everything runs in-process.

A workflow's policy decides what happens to an output with a finding:
"allow" (nothing is scanned), "redact" (each secret becomes
`[REDACTED: <type>]`), "block" (the model sees only that the output was
withheld). The secret itself is never logged or reported, only its type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

POLICIES = ("allow", "redact", "block")
# Outputs are scanned up to this many characters (a scan costs ~0.1 ms per
# line); the rest of a longer output is passed on as it is.
MAX_SCREENED_CHARS = 1_000_000
# The keyword detector reads `key: value` and `key=value` only in files it
# takes for configuration; tool outputs are mostly such text or JSON.
_KEYWORD_FILENAME = "tool_output.yaml"
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.]*")
_KEY_END = re.compile(r"-----END[A-Z ]*PRIVATE KEY[A-Z ]*-----")
_NOISY = {"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"}


def _plugins() -> list[BasePlugin]:
    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    return [cls() for kind, cls in sorted(mapping.items()) if kind not in _NOISY]


_PLUGINS = _plugins()


@dataclass(frozen=True)
class Finding:
    secret_type: str
    start: int
    end: int


@dataclass(frozen=True)
class Screening:
    """What the model sees instead of a tool output with secrets in it."""

    action: str  # "redact" | "block"
    secret_types: tuple[str, ...]
    count: int
    content: str


def find_secrets(text: str) -> list[Finding]:
    """The spans to redact in `text` (its first MAX_SCREENED_CHARS),
    overlapping findings merged."""
    return _merged(_detected(text))


def _detected(text: str) -> list[Finding]:
    """Every detector's every finding, overlaps included."""
    findings: list[Finding] = []
    offset = 0
    for line in text[:MAX_SCREENED_CHARS].splitlines(keepends=True):
        content = line.rstrip("\r\n")
        for plugin in _PLUGINS:
            findings += [
                Finding(plugin.secret_type, offset + start, offset + end)
                for start, end in _spans(plugin, content)
            ]
        offset += len(line)
    return [_whole_key(text, f) for f in findings]


def _whole_key(text: str, finding: Finding) -> Finding:
    """A private key is found by its BEGIN line; the secret is the block."""
    if finding.secret_type != "Private Key":
        return finding
    end = _KEY_END.search(text, finding.start)
    return Finding(finding.secret_type, finding.start, end.end() if end else len(text))


def _spans(plugin: BasePlugin, line: str) -> list[tuple[int, int]]:
    if isinstance(plugin, RegexBasedDetector):
        # The whole match, and the token characters after it: some detectors
        # report only a capture group (GitHub's is "ghp") or match lazily (a
        # JWT without its signature), which would leave the secret readable.
        return [
            (m.start(), _TOKEN_TAIL.match(line, m.end()).end())  # type: ignore[union-attr]
            for regex in plugin.denylist
            for m in regex.finditer(line)
        ]
    spans = []
    for secret in plugin.analyze_line(filename=_KEYWORD_FILENAME, line=line, line_number=0):
        value = secret.secret_value or ""
        start = line.find(value) if value else -1
        while start >= 0:
            spans.append((start, start + len(value)))
            start = line.find(value, start + len(value))
    return spans


def _merged(findings: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in sorted(findings, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1].end:
            last = out[-1]
            out[-1] = Finding(last.secret_type, last.start, max(last.end, f.end))
        else:
            out.append(f)
    return out


def redact(text: str, findings: list[Finding]) -> str:
    parts, at = [], 0
    for f in findings:
        parts += [text[at : f.start], f"[REDACTED: {f.secret_type}]"]
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def screen(text: str, policy: str) -> Screening | None:
    """What replaces `text` under `policy`; None when it passes unchanged."""
    if policy == "allow" or not text:
        return None
    detected = _detected(text)
    if not detected:
        return None
    # Types and count from every detector (a keyword's value may contain an
    # AWS key); the redaction from the merged spans.
    types = tuple(sorted({f.secret_type for f in detected}))
    count = len({(f.start, f.end) for f in detected})
    if policy == "block":
        content = (
            f"[tool output withheld: it contained {count} secret(s) "
            f"({', '.join(types)}), and this workflow blocks such output]"
        )
    else:
        content = redact(text, _merged(detected))
    return Screening(policy, types, count, content)
