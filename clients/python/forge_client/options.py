"""Per-run options: limits, guardrail switches, and the event kinds a run may omit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import workflow_pb2 as wpb


@dataclass(frozen=True)
class RunOptions:
    """Per-run limits and switches; None leaves the server's default."""

    max_iterations: int | None = None
    max_retries: int | None = None
    max_tool_errors: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tool_timeout_s: float | None = None
    stream_chunks: bool = False
    parallel_tool_calls: bool = False
    # Guardrails, all on by default; turn one off to measure what it does.
    constrained_decoding: bool = True
    rescue: bool = True
    retry_nudges: bool = True
    step_enforcement: bool = True
    error_recovery: bool = True
    compaction: bool = True
    coercion: bool = True
    repeat_guard: bool = True
    loop_breaking: bool = True
    parameter_docs: bool = True
    grounding: bool = True
    tool_relevance: bool = True
    destructive_policy: bool = True
    result_binding: bool = True
    number_bounds: bool = True
    # Ask the run's `approve` callback before each destructive tool's call.
    approve_destructive_calls: bool = False
    compaction_strategy: Literal["tiered", "sliding_window", "none"] = "tiered"
    context_budget_tokens: int | None = None
    priority: int = 0
    cancel_on_preempt: bool = False
    enforcement: Literal["both", "constraint", "nudge"] = "both"
    reasoning_replay: Literal["none", "keep_last", "full"] = "keep_last"

    def to_proto(self) -> wpb.RunOptions:
        msg = wpb.RunOptions(
            max_iterations=self.max_iterations or 0,
            max_tokens=self.max_tokens or 0,
            tool_timeout_ms=int((self.tool_timeout_s or 0) * 1000),
            stream_chunks=self.stream_chunks,
            parallel_tool_calls=self.parallel_tool_calls,
            guardrails=wpb.Guardrails(
                disable_constrained_decoding=not self.constrained_decoding,
                disable_rescue=not self.rescue,
                disable_retry_nudges=not self.retry_nudges,
                disable_step_enforcement=not self.step_enforcement,
                disable_error_recovery=not self.error_recovery,
                disable_compaction=not self.compaction,
                disable_coercion=not self.coercion,
                disable_repeat_guard=not self.repeat_guard,
                disable_loop_breaking=not self.loop_breaking,
                disable_parameter_docs=not self.parameter_docs,
                disable_grounding=not self.grounding,
                disable_tool_relevance=not self.tool_relevance,
                disable_destructive_policy=not self.destructive_policy,
                disable_result_binding=not self.result_binding,
                disable_number_bounds=not self.number_bounds,
                enforcement=wpb.EnforcementMode.Value(
                    f"ENFORCEMENT_MODE_{self.enforcement.upper()}"
                ),
            ),
            reasoning_replay=wpb.ReasoningReplay.Value(
                f"REASONING_REPLAY_{self.reasoning_replay.upper()}"
            ),
            compaction=wpb.CompactionStrategy.Value(
                f"COMPACTION_STRATEGY_{self.compaction_strategy.upper()}"
            ),
            context_budget_tokens=self.context_budget_tokens or 0,
            priority=self.priority,
            cancel_on_preempt=self.cancel_on_preempt,
            approve_destructive_calls=self.approve_destructive_calls,
        )
        if self.max_retries is not None:
            msg.max_retries = self.max_retries
        if self.max_tool_errors is not None:
            msg.max_tool_errors = self.max_tool_errors
        if self.temperature is not None:
            msg.temperature = self.temperature
        return msg


OMITTABLE_EVENTS = {
    "chunk": pb.EVENT_KIND_CHUNK,
    "message_appended": pb.EVENT_KIND_MESSAGE_APPENDED,
    "compacted": pb.EVENT_KIND_COMPACTED,
    "queued": pb.EVENT_KIND_QUEUED,
    "tool_output_screened": pb.EVENT_KIND_TOOL_OUTPUT_SCREENED,
}


def omitted_event_kinds(names: Sequence[str]) -> list[pb.EventKind.ValueType]:
    """The proto event kinds for `omit_events` names; ValueError naming the
    ones that cannot be left out."""
    unknown = [n for n in names if n not in OMITTABLE_EVENTS]
    if unknown:
        raise ValueError(
            f"omit_events: {', '.join(map(repr, unknown))} cannot be left out "
            f"(one of {', '.join(OMITTABLE_EVENTS)})"
        )
    return [OMITTABLE_EVENTS[n] for n in names]
