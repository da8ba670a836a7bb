"""Log lines of bounded size.

Clients choose much of what a run log says (labels, tool error messages,
the model's replies to them). A fuzzing client wrote 53 MB of log in one
run; every line is therefore capped where it is formatted, whatever logger
produced it, and the service also clips the client strings it names.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from typing import Any

# Enough for a traceback's last frames; a line longer than this is an attack
# or a bug, and its head says which.
MAX_LOG_LINE = 4096
# A single client-chosen value inside a line.
MAX_LOGGED_VALUE = 256

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def run_logger(run_id: str, labels: dict[str, str]) -> logging.LoggerAdapter[logging.Logger]:
    """The service's logger for one run: JSON lines carry its id and labels."""
    return logging.LoggerAdapter(
        logging.getLogger("forge_server.service"),
        {"run_id": run_id, "labels": _clipped_labels(labels)},
    )


def _clipped_labels(labels: dict[str, str]) -> dict[str, str]:
    # Labels are the client's: a few short ones are useful, a megabyte is not.
    return {k[:64]: v[:MAX_LOGGED_VALUE] for k, v in list(labels.items())[:16]}


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


class JsonFormatter(logging.Formatter):
    """One JSON object per line, for log pipelines: time, level, logger,
    message, and a run's id and labels when the line is about a run. The
    message is capped before encoding, so a line stays valid JSON."""

    def __init__(self, max_chars: int = MAX_LOG_LINE) -> None:
        super().__init__()
        self.max_chars = max_chars

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message = f"{message}\n{self.formatException(record.exc_info)}"
        if len(message) > self.max_chars:
            dropped = len(message) - self.max_chars
            message = f"{message[: self.max_chars]}… [{dropped} more characters dropped]"
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": message,
        }
        for key in ("run_id", "labels"):
            value = getattr(record, key, None)
            if value:
                entry[key] = value
        return json.dumps(entry, ensure_ascii=False)


def configure(level: str, fmt: str = "text") -> None:
    """The server's logging on stderr: capped text lines, or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else CappedFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler])
    # One line per model call is noise at INFO; the run log says what happened.
    logging.getLogger("httpx").setLevel(logging.WARNING)
