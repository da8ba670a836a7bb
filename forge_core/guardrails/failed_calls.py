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


# Error types (as the SDKs name them: "ValueError: ...") and words that say
# the arguments themselves were wrong.
_REJECTION_TYPE = re.compile(
    r"^(ValueError|TypeError|KeyError|IndexError|LookupError|ValidationError|RangeError|"
    r"SyntaxError|JSONDecodeError|InvalidArgument\w*):"
)
_REJECTION_WORDS = re.compile(
    r"invalid|malformed|must (be|have|not|contain)|expected|not (a )?valid|should be|"
    r"not allowed|unsupported|out of range|too (long|short|many|large|small)|ask for|"
    r"one \w+ per|format|bad request|\b(400|422)\b",
    re.IGNORECASE,
)


def rejects_arguments(error: str) -> bool:
    """Whether a hard tool error says the arguments were wrong (a
    ValueError, "malformed id", "ask for one office per call"): the same call
    fails the same way. An outage, a crash or anything unclear is not."""
    if looks_transient(error):
        return False
    return bool(_REJECTION_TYPE.match(error) or _REJECTION_WORDS.search(error))


@dataclass
class FailedCall:
    name: str
    args: dict[str, Any]
    error: str
    # How often it ran and failed; how often it was then asked for again.
    failures: int = 0
    resolution: bool = False
    # A hard error that says the arguments were wrong (rejects_arguments):
    # the same call cannot succeed. Other hard errors may pass (an outage, a
    # crash), so they get one identical retry.
    rejected: bool = False
    repeats: int = 0
    # Per argument, its failed value rewritten in the shape of the ids the
    # error showed (grounding.reshaped): the values to try next.
    reshaped: dict[str, list[str]] = field(default_factory=dict)

    @property
    def names_a_value(self) -> bool:
        """The error quotes one of the call's values ("malformed id '123'"),
        so it is about the values, not about the state of the task."""
        return any(
            str(v) in self.error
            for v in self.args.values()
            if isinstance(v, str | int | float) and str(v).strip()
        )

    @property
    def blocked(self) -> bool:
        """Nothing found is deterministic: once is enough, and so is an error
        that rejects the arguments. Any other hard error may pass (an outage,
        a crash), so one identical retry runs."""
        return self.resolution or self.rejected or bool(self.reshaped) or self.failures >= 2


def call_signature(name: str, args: dict[str, Any]) -> str:
    return name + "\0" + json.dumps(args, sort_keys=True, ensure_ascii=False)
