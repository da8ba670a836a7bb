"""How a managed llama-server failed to start: the kind and the error.

Kept apart from the diagnosis (startup.py) so the install paths (install.py)
can raise it without importing the diagnosis and, through it, cpu_features.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class StartupFailure(StrEnum):
    BINARY_MISSING = "binary_missing"
    ILLEGAL_INSTRUCTION = "illegal_instruction"
    MISSING_LIBRARY = "missing_library"
    MODEL_MISSING = "model_missing"
    MODEL_INVALID = "model_invalid"
    PORT_IN_USE = "port_in_use"
    OUT_OF_MEMORY = "out_of_memory"
    TIMEOUT = "timeout"
    OTHER = "other"


class LlamaStartupError(RuntimeError):
    """llama-server did not come up; `str()` is the whole user-facing text."""

    def __init__(self, failure: StartupFailure, message: str, log_tail: Sequence[str] = ()):
        super().__init__(message)
        self.failure = failure
        self.log_tail = list(log_tail)
