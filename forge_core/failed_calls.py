"""Calls that failed in a run, for loop breaking: which may be retried as
they were, and which the model must not ask for again.

A small model repeats a failing call until the run ends (50-75 identical
"not found" answers per scenario in the first eval). Loop breaking refuses a
call identical to one that failed and, under a grammar, leaves the failed
value out of what the model can write. Only an error that reads like an
outage gets one identical retry first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# Words of errors that may pass if the same call is simply made again.
_TRANSIENT = re.compile(
    r"time[sd]?[ -]?out|temporar|unavailable|try (it |the same \w+ |again)|again later|retry|"
    r"overload|busy|locked|rate[ -]?limit|too many requests|connection|reset|refused|"
    r"unreachable|network|\bdown\b|outage|maintenance|no result for|\b(429|502|503|504)\b",
    re.IGNORECASE,
)


def looks_transient(error: str) -> bool:
    """Whether a tool error reads like an outage rather than a rejection of
    the arguments ("timed out", "unavailable", "try again", HTTP 503)."""
    return bool(_TRANSIENT.search(error))


@dataclass
class FailedCall:
    name: str
    args: dict[str, Any]
    error: str
    # How often it ran and failed; how often it was then asked for again.
    failures: int = 0
    resolution: bool = False
    # A hard error that reads like an outage ("timed out"): one identical
    # retry may succeed. Any other hard error rejects the arguments.
    transient: bool = False
    repeats: int = 0
    # Per argument, its failed value rewritten in the shape of the ids the
    # error showed (grounding.reshaped): the values to try next.
    reshaped: dict[str, list[str]] = field(default_factory=dict)

    @property
    def blocked(self) -> bool:
        """Nothing found is deterministic: once is enough, and so is an error
        that rejects the arguments. An error that reads like an outage (a
        timeout, "try again") may pass, so one identical retry runs."""
        if self.resolution or self.reshaped or not self.transient:
            return True
        return self.failures >= 2


def call_signature(name: str, args: dict[str, Any]) -> str:
    return name + "\0" + json.dumps(args, sort_keys=True, ensure_ascii=False)
