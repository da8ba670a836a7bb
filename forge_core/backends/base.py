"""The backend interface and the types that cross it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

# The value types of a model call live in forge_core/calls.py (the parser and
# the errors need them without the backend interface); re-exported here.
from forge_core.calls import ChunkSink as ChunkSink
from forge_core.calls import ChunkType as ChunkType
from forge_core.calls import IterationUsage as IterationUsage
from forge_core.calls import LLMResponse as LLMResponse
from forge_core.calls import StreamChunk as StreamChunk
from forge_core.calls import TextResponse as TextResponse
from forge_core.calls import ToolCall as ToolCall
from forge_core.calls import Usage as Usage
from forge_core.messages import Message
from forge_core.modes import BudgetMode, ReasoningReplay
from forge_core.workflow import ToolSpec

if TYPE_CHECKING:
    from forge_core.guardrails.value_pools import NumberChoice


@dataclass
class ChatRequest:
    run_id: str
    workflow_name: str
    messages: list[Message]
    # Every tool of the workflow, in a stable order (described in the prompt).
    tools: list[ToolSpec]
    # Names the model may call in this turn; the constraint admits only these.
    allowed: list[str]
    constrained: bool = True
    temperature: float = 0.0
    max_tokens: int = 512
    # Admit several calls in one turn (a JSON array in constrained mode).
    parallel: bool = False
    # A ReasoningReplay: which REASONING messages go back to the model.
    reasoning_replay: str = ReasoningReplay.KEEP_LAST
    # Slot scheduling (llama-server): lower runs first.
    priority: int = 0
    cancel_on_preempt: bool = False
    # Told the run's queue position while it waits for a slot (0: got one),
    # and whether it waits because it was preempted.
    on_queue: Callable[[int, bool], Awaitable[None]] | None = None
    # Prompt mode: describe each parameter (enum, required, default, description).
    parameter_docs: bool = True
    # Calls that failed earlier in the run, (name, args): a grammar-constrained
    # backend leaves them out of what the model can write where it can.
    excluded_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Values seen in the conversation that grounded parameters are limited to
    # (grounding.py); None: grounding off.
    grounded_values: list[str] | None = None
    # "tool.param" -> the only values that parameter now takes: the tool
    # rejected a value for its format, and these are it in that format.
    grounded_formats: dict[str, list[str]] = field(default_factory=dict)
    # The phone numbers the request labels as phones ("my mobile is ..."):
    # no grounded parameter but a phone's takes them (phones.labelled_phones).
    phone_values: list[str] = field(default_factory=list)
    # A listed id -> the numbers its entry writes, for an array item about
    # it (guardrails/item_entries.py).
    entry_numbers: dict[str, list[str]] = field(default_factory=dict)
    # An array item's enum member ("key=JSON") -> the members of the item's
    # other enum keys the request names beside it (guardrails/item_context.py).
    item_context: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # The request's sentences, numbers in digits: an array item's numbers are
    # those of the part naming it (guardrails/item_context.py).
    item_segments: list[str] = field(default_factory=list)
    # Parameter name -> the candidates the conversation labels as its kind
    # ("Order Q-58" for order_id): that parameter prefers them.
    grounded_labels: dict[str, list[str]] = field(default_factory=dict)
    # "tool.param" -> the only values a terminal tool's parameter takes: what
    # a successful tool result gave for it (binding.py).
    bound_values: dict[str, list[Any]] = field(default_factory=dict)
    # Digits an integer may have (0: the grammar's own bound): more than any
    # number in the conversation is an invented value (value_pools.number_digits).
    number_digits: int = 0
    # "tool.param" -> the numbers the conversation gives that numeric
    # parameter (value_pools.number_values): it takes one of them, or a
    # one-digit number.
    number_values: dict[str, NumberChoice] = field(default_factory=dict)
    # The fewest calls a parallel batch makes (value_pools.min_parallel_calls).
    min_calls: int = 1
    # The most (0: no bound but the grammar's MAX_CALLS): what the request
    # lists (guardrails/batch_size.py), never below min_calls.
    max_calls: int = 0
    # "tool.param" -> example values from the parameter's schema that the
    # conversation does not have: copied, they are placeholders, not values.
    unseen_examples: dict[str, list[str]] = field(default_factory=dict)
    # "tool.param" -> the values the conversation calls by its noun ("the
    # payments service" for `service`): a free string takes only those.
    named_values: dict[str, list[str]] = field(default_factory=dict)
    # "tool.param" -> values in the conversation shaped like the parameter's
    # schema example ("14:00" for "e.g. 09:30"): that string takes only those.
    shaped_values: dict[str, list[str]] = field(default_factory=dict)
    # "tool.param" -> the only values the evidence supports (guardrails/):
    # the parameter takes one of them, before every other rule.
    preferred_values: dict[str, list[Any]] = field(default_factory=dict)
    # "tool.param" -> the ids an array takes items from: each at most once,
    # in this order (guardrails/listings.py).
    preferred_items: dict[str, list[str]] = field(default_factory=dict)
    # "tool.param" -> the value guardrail that decided its preferred values
    # or items (tracing shows it; the backends do not read it).
    preferred_reasons: dict[str, str] = field(default_factory=dict)
    # Characters no free string of the turn writes: markup the conversation
    # never shows (guardrails/free_strings.py, `shunned_chars`).
    shunned_chars: str = ""


@dataclass
class BackendReply:
    response: LLMResponse
    usage: Usage = field(default_factory=Usage)
    # The raw text the model produced, kept for transcripts of failed attempts.
    raw_text: str = ""
    # Chain-of-thought the backend reported separately (e.g. reasoning_content).
    reasoning: str = ""
    # Generation stopped at max_tokens (finish_reason "length").
    truncated: bool = False
    # A turn the conversation already holds, with its tool results (a
    # caller's own loop, replay.py): it happened, so it is recorded, not
    # checked again, and it cost no model call here.
    replayed: bool = False


@dataclass
class BackendInfo:
    name: str
    model: str
    context_budget_tokens: int
    slots: int = 1
    # A BudgetMode.
    budget_mode: str = BudgetMode.BACKEND
    backend_mode: str = ""
    url: str = ""
    # A ToolCallMode; "" when the backend does not say.
    tool_call_mode: str = ""
    # How the budget was arrived at, in words (GetServerInfo.budget_source).
    budget_source: str = ""
    # A managed llama-server's KV cache type (its --cache-type-k, f16 when
    # none was given); "" for other backends.
    kv_cache_type: str = ""


@runtime_checkable
class RunTracking(Protocol):
    """A backend that keeps per-run state (e.g. slot affinity) to drop at the end."""

    def forget_run(self, run_id: str) -> None: ...


@runtime_checkable
class QueueReporting(Protocol):
    """A backend that makes runs wait for a model slot, and says how many wait."""

    def queued_runs(self) -> int: ...


@runtime_checkable
class TokenCounting(Protocol):
    """A backend that can count a request's prompt tokens the way the model will."""

    async def count_tokens(self, request: ChatRequest) -> int: ...


class Backend(Protocol):
    """Something that turns a conversation into the model's next response."""

    def info(self) -> BackendInfo: ...

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        """One model call. Raises forge_core.errors.BackendError on failure."""
        ...

    async def aclose(self) -> None: ...
