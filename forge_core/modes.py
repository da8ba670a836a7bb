"""The modes a run or a backend is configured with, one enum each.

Each is a StrEnum whose values are the strings the CLI flags, the protocol
converters, config files and GetServerInfo already use: a member compares
equal to its string (`ToolCallMode.NATIVE == "native"`), so a plain string
still works wherever a mode is accepted. That is why the fields and parameters
that take a mode (RunOptions.enforcement, BackendInfo.budget_mode, ...) stay
typed `str`: callers and tests that pass "nudge" keep type-checking. Forge's
own code names modes only through these members, so a misspelt mode is an
error for mypy instead of a comparison that silently never matches.
"""

from __future__ import annotations

from enum import StrEnum


class ToolCallMode(StrEnum):
    """How a backend gets tool calls out of the model."""

    # Pick per model at start-up (llama-server: native when the chat template
    # supports tool calls, else constrained). Never a backend's final mode.
    AUTO = "auto"
    # The model's own tool calling (the server's `tools` API).
    NATIVE = "native"
    # A grammar built from the workflow's tools constrains every answer.
    CONSTRAINED = "constrained"
    # Tools described in the prompt, calls parsed out of free text.
    PROMPT = "prompt"
    # No model: replayed turns (ScriptedBackend).
    SCRIPTED = "scripted"


class BudgetMode(StrEnum):
    """Where a backend's context budget per run comes from."""

    # What the model server reports (llama-server /props, Ollama /api/show,
    # vLLM's max_model_len).
    BACKEND = "backend"
    # A token count given by the operator (capped at what the model supports).
    MANUAL = "manual"
    # The model's full trained context (a managed server started with it).
    FORGE_FULL = "forge-full"
    # Half of that: less KV cache to fill and attend over.
    FORGE_FAST = "forge-fast"
    # Nothing said and nothing reported: the backend's built-in default.
    DEFAULT = "default"


def resolvable_budget_mode(mode: str, manual_tokens: int) -> BudgetMode:
    """`mode` as a mode a backend resolves its budget by (any but DEFAULT,
    which only reports that nothing was said). ValueError for another value,
    and for MANUAL without a positive token count."""
    if mode == BudgetMode.DEFAULT or mode not in BudgetMode.__members__.values():
        raise ValueError(f"unknown budget mode {mode!r}")
    if mode == BudgetMode.MANUAL and manual_tokens <= 0:
        raise ValueError("budget mode 'manual' needs a positive token count")
    return BudgetMode(mode)


class Enforcement(StrEnum):
    """How required steps and prerequisites are enforced."""

    # The grammar admits only allowed tools, and violations get nudges.
    BOTH = "both"
    # The allowed set only.
    CONSTRAINT = "constraint"
    # Nudges only.
    NUDGE = "nudge"


class ReasoningReplay(StrEnum):
    """Which earlier REASONING messages go back to the model."""

    NONE = "none"
    KEEP_LAST = "keep_last"
    FULL = "full"


class CompactionStrategy(StrEnum):
    """How the model's view of a conversation is shortened (context.py)."""

    NONE = "none"
    # Drop the oldest rounds.
    SLIDING_WINDOW = "sliding_window"
    # Three phases, cheapest for the prompt cache first.
    TIERED = "tiered"
