"""Conversation messages as the engine keeps them (metadata included)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from forge_core.guardrails.failed_calls import call_signature

if TYPE_CHECKING:
    from forge_core.guardrails.coercion import Coercion


class MessageRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class MessageType(StrEnum):
    """What created a message; drives compaction and what clients persist."""

    SYSTEM_PROMPT = "system_prompt"
    USER_INPUT = "user_input"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    REASONING = "reasoning"
    TEXT_RESPONSE = "text_response"
    STEP_NUDGE = "step_nudge"
    PREREQUISITE_NUDGE = "prerequisite_nudge"
    RETRY_NUDGE = "retry_nudge"
    SUMMARY = "summary"


TRANSIENT_TYPES = frozenset(
    {
        MessageType.TEXT_RESPONSE,
        MessageType.STEP_NUDGE,
        MessageType.PREREQUISITE_NUDGE,
        MessageType.RETRY_NUDGE,
    }
)


@dataclass(frozen=True)
class ToolCallInfo:
    """One tool call inside an assistant message."""

    call_id: str
    name: str
    args: dict[str, Any]
    # Near-miss arguments the engine fixed before validation (see coercion.py).
    coercions: tuple[Coercion, ...] = ()

    def arguments_json(self) -> str:
        # Asked for every turn (token estimates, the wire, the journal):
        # encoded once. A frozen call's args are never changed in place.
        cached: str | None = self.__dict__.get("_arguments_json")
        if cached is None:
            cached = json.dumps(self.args, ensure_ascii=False, separators=(",", ":"))
            self.__dict__["_arguments_json"] = cached
        return cached

    def signature(self) -> str:
        """failed_calls.call_signature of this call, encoded once: the loop
        asks for it several times per turn."""
        cached: str | None = self.__dict__.get("_signature")
        if cached is None:
            cached = call_signature(self.name, self.args)
            self.__dict__["_signature"] = cached
        return cached


@dataclass
class Message:
    role: MessageRole
    content: str
    type: MessageType
    step_index: int | None = None
    tool_calls: list[ToolCallInfo] = field(default_factory=list)
    tool_call_id: str = ""
    tool_name: str = ""
    # Retry artefacts are transient even when their type is not, e.g. the
    # TOOL_CALL message of a blocked call batch.
    transient: bool = False

    def __post_init__(self) -> None:
        if self.type in TRANSIENT_TYPES:
            self.transient = True
