"""The SDK's own types for what the server reports: transcript messages, usage
and server info. Plain frozen dataclasses, so users never import protobuf;
forge_client.convert maps them to and from the wire.

Attribute names are the contract's (proto/forge/v1), so code written against
the protobuf messages keeps working; Role and MessageType are IntEnums with
the contract's numbers, so they still compare equal to the generated
constants.
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass


class Role(enum.IntEnum):
    """The chat role of a Message."""

    UNSPECIFIED = 0
    SYSTEM = 1
    USER = 2
    ASSISTANT = 3
    TOOL = 4


class MessageType(enum.IntEnum):
    """What created a Message (proto/forge/v1/messages.proto)."""

    UNSPECIFIED = 0
    SYSTEM_PROMPT = 1
    USER_INPUT = 2
    # An assistant message carrying one or more tool calls.
    TOOL_CALL = 3
    # The output (or error) of one tool call, role TOOL.
    TOOL_RESULT = 4
    REASONING = 5
    # Free text where a tool call was expected (a failed attempt).
    TEXT_RESPONSE = 6
    STEP_NUDGE = 7
    PREREQUISITE_NUDGE = 8
    RETRY_NUDGE = 9
    SUMMARY = 10


@dataclass(frozen=True)
class ToolCall:
    """One tool invocation inside an assistant message."""

    id: str
    name: str
    # JSON text rather than a dict: integers stay exact.
    arguments_json: str = "{}"


@dataclass(frozen=True)
class Message:
    """One message of a run's conversation, as the server keeps it. Persist
    the non-transient ones and pass them back as `prior_messages` to continue
    a conversation."""

    role: Role
    content: str = ""
    type: MessageType = MessageType.UNSPECIFIED
    # The loop iteration that created the message; None for messages that
    # came from the client (prompt, user input, prior history).
    step_index: int | None = None
    # Set on assistant messages of type TOOL_CALL.
    tool_calls: tuple[ToolCall, ...] = ()
    # Set on TOOL messages: the call this result answers.
    tool_call_id: str = ""
    tool_name: str = ""
    # Retry artefacts (failed attempts, nudges): drop them when persisting.
    transient: bool = False

    def HasField(self, name: str) -> bool:
        """Deprecated: test `step_index is not None` instead. Kept for one
        release for code written against the protobuf message."""
        warnings.warn(
            "Message.HasField is deprecated: Message is no longer a protobuf message",
            DeprecationWarning,
            stacklevel=2,
        )
        if name != "step_index":
            raise ValueError(f"Message has no optional field {name!r}")
        return self.step_index is not None


@dataclass(frozen=True)
class IterationUsage:
    """One model call's accounting."""

    iteration: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    # cache_n / (cache_n + prompt_n) as llama-server reports it.
    cache_hit_ratio: float = 0.0
    prompt_ms: float = 0.0
    generation_ms: float = 0.0
    # The model server slot the request ran on; -1 if unknown.
    slot: int = -1
    # Which backend of the server's fallback chain served it ("" without one).
    backend: str = ""


@dataclass(frozen=True)
class Usage:
    """Token and time accounting over a run, from the backend's own reports."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Prompt tokens the backend served from its KV cache.
    cached_prompt_tokens: int = 0
    prompt_ms: float = 0.0
    generation_ms: float = 0.0
    # cached_prompt_tokens / prompt_tokens over the run.
    cache_hit_ratio: float = 0.0
    iterations: tuple[IterationUsage, ...] = ()


@dataclass(frozen=True)
class Gpu:
    name: str = ""
    vram_total_bytes: int = 0
    vram_free_bytes: int = 0


@dataclass(frozen=True)
class LlamaDevice:
    """A GPU device llama-server can see (`llama-server --list-devices`)."""

    # ggml's name for it, e.g. "Vulkan0".
    name: str = ""
    description: str = ""
    memory_total_mib: int = 0
    memory_free_mib: int = 0


@dataclass(frozen=True)
class BackendHealth:
    """One backend of the server's fallback chain (the only one without a chain)."""

    # Its kind: "llama-server", "openai", "ollama", "anthropic", "scripted".
    name: str = ""
    model: str = ""
    url: str = ""
    # False while it cools down after repeated retriable failures.
    available: bool = True
    cooldown_remaining_s: float = 0.0
    consecutive_failures: int = 0
    calls: int = 0
    failures: int = 0
    # The last failure, in words.
    last_error: str = ""


@dataclass(frozen=True)
class ServerInfo:
    """What a server runs on (ForgeClient.server_info())."""

    version: str = ""
    # "llama-server", "scripted", ...
    backend: str = ""
    model: str = ""
    context_budget_tokens: int = 0
    # "backend", "manual", "forge-full".
    budget_mode: str = ""
    slots: int = 0
    # "managed" or "external" for llama-server.
    backend_mode: str = ""
    backend_url: str = ""
    # "native", "constrained", "prompt" or "scripted".
    tool_call_mode: str = ""
    active_runs: int = 0
    # KV cache quantisation of a managed llama-server.
    kv_cache_type: str = ""
    # How the context budget was resolved, in words.
    budget_source: str = ""
    gpus: tuple[Gpu, ...] = ()
    # Why no GPU is listed, when none is.
    gpu_status: str = ""
    # Runs waiting for a slot right now.
    queued_runs: int = 0
    # The backends in fallback order, with their health.
    backends: tuple[BackendHealth, ...] = ()
    # The device llama-server runs the model on: "CPU", "Vulkan0", "unknown"
    # (an external server); "" for other backends.
    llama_device: str = ""
    llama_devices: tuple[LlamaDevice, ...] = ()
