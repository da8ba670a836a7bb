"""Translation between forge.v1 messages and forge_core types.

Parsing errors are raised as WorkflowError with the field path in the
contract's terms, so the service can return INVALID_ARGUMENT naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_core.backends.base import Backend, Usage
from forge_core.backends.fallback import HealthReporting
from forge_core.errors import FailureReason
from forge_core.grammar import log_unenforced
from forge_core.json_limits import JsonLimitError, loads_bounded
from forge_core.llama_host.devices import LlamaDevice
from forge_core.llama_host.hardware import Gpu
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.modes import CompactionStrategy, Enforcement, ReasoningReplay
from forge_core.workflow import (
    MAX_TOOLS,
    Prerequisite,
    RunOptions,
    ToolSpec,
    Workflow,
    WorkflowError,
    check_parameters_schema,
    validate_workflow,
)

_ROLE_TO_PB = {
    MessageRole.SYSTEM: mpb.ROLE_SYSTEM,
    MessageRole.USER: mpb.ROLE_USER,
    MessageRole.ASSISTANT: mpb.ROLE_ASSISTANT,
    MessageRole.TOOL: mpb.ROLE_TOOL,
}
_ROLE_FROM_PB = {v: k for k, v in _ROLE_TO_PB.items()}

_TYPE_TO_PB = {t: mpb.MessageType.Value(f"MESSAGE_TYPE_{t.name}") for t in MessageType}
_TYPE_FROM_PB = {v: k for k, v in _TYPE_TO_PB.items()}

_REASON_TO_PB = {r: pb.FailureReason.Value(f"FAILURE_REASON_{r.name}") for r in FailureReason}


def workflow_from_pb(msg: wpb.Workflow) -> Workflow:
    # Before any schema is parsed or compiled: rejecting 10,000 tools must
    # not cost 10,000 compilations.
    if len(msg.tools) > MAX_TOOLS:
        raise WorkflowError(
            "workflow.tools", f"at most {MAX_TOOLS} tools are allowed, got {len(msg.tools)}"
        )
    tools = []
    for i, spec in enumerate(msg.tools):
        field_path = f"workflow.tools[{i}].parameters_json_schema"
        parameters: Any = {"type": "object", "properties": {}}
        if spec.parameters_json_schema.strip():
            try:
                parameters = loads_bounded(spec.parameters_json_schema)
            except JsonLimitError as exc:
                raise WorkflowError(field_path, str(exc)) from exc
        check_parameters_schema(parameters, field_path)
        tools.append(
            ToolSpec(
                name=spec.name,
                description=spec.description,
                parameters=parameters,
                prerequisites=[Prerequisite(p.tool, p.match_arg) for p in spec.prerequisites],
                destructive=spec.destructive,
                read_only=spec.read_only,
                idempotent=spec.idempotent,
            )
        )
    wf = Workflow(
        name=msg.name,
        description=msg.description,
        tools=tools,
        required_steps=list(msg.required_steps),
        terminal_tools=list(msg.terminal_tools),
        system_prompt=msg.system_prompt,
        respond_tool=msg.respond_tool,
        # "": the server's default, filled in by the service.
        tool_output_secrets=_enum(
            _SECRETS_POLICY, msg.tool_output_secrets, "", "workflow.tool_output_secrets"
        ),
    )
    validate_workflow(wf)
    log_unenforced(wf)
    return wf.with_builtins()


_ENFORCEMENT = {
    wpb.ENFORCEMENT_MODE_BOTH: Enforcement.BOTH,
    wpb.ENFORCEMENT_MODE_CONSTRAINT: Enforcement.CONSTRAINT,
    wpb.ENFORCEMENT_MODE_NUDGE: Enforcement.NUDGE,
}
_COMPACTION = {
    wpb.COMPACTION_STRATEGY_NONE: CompactionStrategy.NONE,
    wpb.COMPACTION_STRATEGY_SLIDING_WINDOW: CompactionStrategy.SLIDING_WINDOW,
    wpb.COMPACTION_STRATEGY_TIERED: CompactionStrategy.TIERED,
}
_SECRETS_POLICY = {
    wpb.TOOL_OUTPUT_POLICY_ALLOW: "allow",
    wpb.TOOL_OUTPUT_POLICY_REDACT: "redact",
    wpb.TOOL_OUTPUT_POLICY_BLOCK: "block",
}
SECRETS_POLICY_TO_PB = {v: k for k, v in _SECRETS_POLICY.items()}
_REPLAY = {
    wpb.REASONING_REPLAY_NONE: ReasoningReplay.NONE,
    wpb.REASONING_REPLAY_KEEP_LAST: ReasoningReplay.KEEP_LAST,
    wpb.REASONING_REPLAY_FULL: ReasoningReplay.FULL,
}


def _enum(table: Mapping[Any, str], value: int, default: str, field_path: str) -> str:
    """UNSPECIFIED (0) means the default; a number the contract does not
    define is an error rather than a silent default."""
    if value == 0:
        return default
    if value not in table:
        raise WorkflowError(field_path, f"unknown enum value {value}")
    return table[value]


_DEFAULT_OPTIONS = RunOptions()

# Each `disable_<switch>` field of the contract's Guardrails message turns
# the engine's RunOptions.<switch> off: read off the message's descriptor, so
# a new guardrail's switch needs no line here
# (tests/unit/test_guardrail_contract.py checks that RunOptions has each).
GUARDRAIL_SWITCHES: tuple[tuple[str, str], ...] = tuple(
    (f.name, f.name.removeprefix("disable_"))
    for f in wpb.Guardrails.DESCRIPTOR.fields
    if f.name.startswith("disable_")
)


def options_from_pb(msg: wpb.RunOptions) -> RunOptions:
    defaults = _DEFAULT_OPTIONS
    g = msg.guardrails
    opts = RunOptions(
        max_iterations=msg.max_iterations or defaults.max_iterations,
        max_retries=msg.max_retries if msg.HasField("max_retries") else defaults.max_retries,
        max_tool_errors=(
            msg.max_tool_errors if msg.HasField("max_tool_errors") else defaults.max_tool_errors
        ),
        temperature=msg.temperature if msg.HasField("temperature") else defaults.temperature,
        max_tokens=msg.max_tokens or defaults.max_tokens,
        tool_timeout_s=(msg.tool_timeout_ms / 1000.0)
        if msg.tool_timeout_ms
        else defaults.tool_timeout_s,
        stream_chunks=msg.stream_chunks,
        parallel_tool_calls=msg.parallel_tool_calls,
        **{switch: not getattr(g, name) for name, switch in GUARDRAIL_SWITCHES},
        approve_destructive_calls=msg.approve_destructive_calls,
        enforcement=_enum(
            _ENFORCEMENT, g.enforcement, defaults.enforcement, "options.guardrails.enforcement"
        ),
        reasoning_replay=_enum(
            _REPLAY, msg.reasoning_replay, defaults.reasoning_replay, "options.reasoning_replay"
        ),
        compaction_strategy=_enum(
            _COMPACTION, msg.compaction, defaults.compaction_strategy, "options.compaction"
        ),
        context_budget_tokens=msg.context_budget_tokens,
        priority=msg.priority,
        cancel_on_preempt=msg.cancel_on_preempt,
    )
    opts.validate()
    return opts


def message_from_pb(msg: mpb.Message, field_path: str) -> Message:
    if msg.role not in _ROLE_FROM_PB:
        problem = (
            "must be set" if msg.role == mpb.ROLE_UNSPECIFIED else f"unknown enum value {msg.role}"
        )
        raise WorkflowError(f"{field_path}.role", problem)
    calls = []
    for j, c in enumerate(msg.tool_calls):
        try:
            args = loads_bounded(c.arguments_json) if c.arguments_json else {}
        except JsonLimitError as exc:
            raise WorkflowError(f"{field_path}.tool_calls[{j}].arguments_json", str(exc)) from exc
        if not isinstance(args, dict):
            raise WorkflowError(f"{field_path}.tool_calls[{j}].arguments_json", "must be an object")
        calls.append(ToolCallInfo(call_id=c.id, name=c.name, args=args))
    if msg.type == mpb.MESSAGE_TYPE_UNSPECIFIED:
        mtype = _default_type(_ROLE_FROM_PB[msg.role], bool(calls))
    elif msg.type in _TYPE_FROM_PB:
        mtype = _TYPE_FROM_PB[msg.type]
    else:
        raise WorkflowError(f"{field_path}.type", f"unknown enum value {msg.type}")
    return Message(
        role=_ROLE_FROM_PB[msg.role],
        content=msg.content,
        type=mtype,
        step_index=msg.step_index if msg.HasField("step_index") else None,
        tool_calls=calls,
        tool_call_id=msg.tool_call_id,
        tool_name=msg.tool_name,
        transient=msg.transient,
    )


def prior_from_pb(
    msgs: Sequence[mpb.Message], field: str = "start.prior_messages"
) -> list[Message]:
    """Prior messages, each tool result answering a call made before it."""
    prior = []
    issued: set[str] = set()
    for i, m in enumerate(msgs):
        field_path = f"{field}[{i}]"
        message = message_from_pb(m, field_path)
        issued.update(c.call_id for c in message.tool_calls)
        if message.role is MessageRole.TOOL and message.tool_call_id not in issued:
            raise WorkflowError(
                f"{field_path}.tool_call_id",
                f"{_quote(message.tool_call_id)} answers no tool call of an earlier prior message",
            )
        prior.append(message)
    return prior


def _quote(value: str) -> str:
    return repr(value if len(value) <= 64 else value[:61] + "...")


def _default_type(role: MessageRole, has_calls: bool) -> MessageType:
    if role is MessageRole.SYSTEM:
        return MessageType.SYSTEM_PROMPT
    if role is MessageRole.USER:
        return MessageType.USER_INPUT
    if role is MessageRole.TOOL:
        return MessageType.TOOL_RESULT
    return MessageType.TOOL_CALL if has_calls else MessageType.TEXT_RESPONSE


def message_to_pb(msg: Message) -> mpb.Message:
    out = mpb.Message(
        role=_ROLE_TO_PB[msg.role],
        content=msg.content,
        type=_TYPE_TO_PB[msg.type],
        tool_calls=[
            mpb.ToolCall(id=c.call_id, name=c.name, arguments_json=c.arguments_json())
            for c in msg.tool_calls
        ],
        tool_call_id=msg.tool_call_id,
        tool_name=msg.tool_name,
        transient=msg.transient,
    )
    if msg.step_index is not None:
        out.step_index = msg.step_index
    return out


def tool_call_to_pb(call: ToolCallInfo, iteration: int) -> pb.ToolCallRequest:
    return pb.ToolCallRequest(
        call_id=call.call_id,
        tool_name=call.name,
        arguments_json=call.arguments_json(),
        iteration=iteration,
        coercions=[
            pb.Coercion(
                path=c.path,
                original_json=json.dumps(c.original),
                coerced_json=json.dumps(c.coerced),
            )
            for c in call.coercions
        ],
    )


def usage_to_pb(usage: Usage | None) -> pb.Usage:
    if usage is None:
        return pb.Usage()
    return pb.Usage(
        model_calls=usage.model_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        prompt_ms=usage.prompt_ms,
        generation_ms=usage.generation_ms,
        cache_hit_ratio=usage.cache_hit_ratio,
        iterations=[
            pb.IterationUsage(
                iteration=it.iteration,
                prompt_tokens=it.prompt_tokens,
                cached_prompt_tokens=it.cached_prompt_tokens,
                cache_hit_ratio=it.cache_hit_ratio,
                prompt_ms=it.prompt_ms,
                generation_ms=it.generation_ms,
                slot=it.slot,
                backend=it.backend,
            )
            for it in usage.iterations
        ],
    )


def backend_chain(backend: Backend) -> list[str]:
    """RunStarted.backend_chain: the chain's backends in order; [] for one."""
    return [h.name for h in backend.health()] if isinstance(backend, HealthReporting) else []


def backends_to_pb(backend: Backend) -> list[pb.BackendHealth]:
    """GetServerInfo.backends: each backend of a chain with its health; a
    single backend is one entry that is always available (nothing counts its
    calls: it has no other backend to give them to)."""
    if not isinstance(backend, HealthReporting):
        info = backend.info()
        return [pb.BackendHealth(name=info.name, model=info.model, url=info.url, available=True)]
    return [
        pb.BackendHealth(
            name=h.name,
            model=h.model,
            url=h.url,
            available=h.available,
            cooldown_remaining_s=h.cooldown_remaining_s,
            consecutive_failures=h.consecutive_failures,
            calls=h.calls,
            failures=h.failures,
            last_error=h.last_error,
        )
        for h in backend.health()
    ]


def reason_to_pb(reason: FailureReason) -> pb.FailureReason.ValueType:
    return _REASON_TO_PB[reason]


def gpus_to_pb(gpus: Sequence[Gpu]) -> list[pb.Gpu]:
    """GetServerInfo.gpus: the GPUs this host has."""
    return [
        pb.Gpu(name=g.name, vram_total_bytes=g.vram_total_bytes, vram_free_bytes=g.vram_free_bytes)
        for g in gpus
    ]


def llama_devices_to_pb(devices: Sequence[LlamaDevice]) -> list[pb.LlamaDevice]:
    """GetServerInfo.llama_devices: the devices llama-server lists."""
    return [
        pb.LlamaDevice(
            name=d.name,
            description=d.description,
            memory_total_mib=d.total_mib,
            memory_free_mib=d.free_mib,
        )
        for d in devices
    ]
