"""Log lines of bounded size.

Clients choose much of what a run log says (labels, tool error messages,
the model's replies to them). A fuzzing client wrote 53 MB of log in one
run; every line is therefore capped where it is formatted, whatever logger
produced it, and the service also clips the client strings it names.
"""

from __future__ import annotations

import logging
import sys

# Enough for a traceback's last frames; a line longer than this is an attack
# or a bug, and its head says which.
MAX_LOG_LINE = 4096
# A single client-chosen value inside a line.
MAX_LOGGED_VALUE = 256

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class CappedFormatter(logging.Formatter):
    """Formats as usual, then cuts the record to `max_chars`, saying how much
    was dropped."""

    def __init__(self, fmt: str = FORMAT, max_chars: int = MAX_LOG_LINE) -> None:
        super().__init__(fmt)
        self.max_chars = max_chars

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if len(text) <= self.max_chars:
            return text
        dropped = len(text) - self.max_chars
        return f"{text[: self.max_chars]}… [{dropped} more characters dropped]"


def configure(level: str) -> None:
    """The server's logging: capped lines on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(CappedFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler])
    # One line per model call is noise at INFO; the run log says what happened.
    logging.getLogger("httpx").setLevel(logging.WARNING)
