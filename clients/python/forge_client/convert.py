"""The one place where the SDK's types (forge_client.messages) meet the
generated protobuf messages. Internal: users see only the SDK's types."""

from __future__ import annotations

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge_client.messages import (
    BackendHealth,
    Gpu,
    IterationUsage,
    LlamaDevice,
    Message,
    MessageType,
    Role,
    ServerInfo,
    ToolCall,
    Usage,
)

# A number this SDK does not know (a newer server) reads as UNSPECIFIED
# rather than failing the whole run. Looked up in a dict rather than through
# the enum's constructor (and its ValueError): this runs for every streamed
# message and every message of the final transcript.
_ROLES = {r.value: r for r in Role}
_MESSAGE_TYPES = {t.value: t for t in MessageType}


def message_from_pb(m: mpb.Message) -> Message:
    calls = m.tool_calls
    return Message(
        role=_ROLES.get(m.role, Role.UNSPECIFIED),
        content=m.content,
        type=_MESSAGE_TYPES.get(m.type, MessageType.UNSPECIFIED),
        step_index=m.step_index if m.HasField("step_index") else None,
        tool_calls=tuple([ToolCall(c.id, c.name, c.arguments_json) for c in calls])
        if calls
        else (),
        tool_call_id=m.tool_call_id,
        tool_name=m.tool_name,
        transient=m.transient,
    )


def message_to_pb(m: Message | mpb.Message) -> mpb.Message:
    """The wire form of a prior message; a protobuf message (what earlier
    releases returned) passes through unchanged."""
    if isinstance(m, mpb.Message):
        return m
    msg = mpb.Message(
        # By name: the SDK's enums mirror the contract's.
        role=mpb.Role.Value(f"ROLE_{m.role.name}"),
        content=m.content,
        type=mpb.MessageType.Value(f"MESSAGE_TYPE_{m.type.name}"),
        tool_calls=[
            mpb.ToolCall(id=c.id, name=c.name, arguments_json=c.arguments_json)
            for c in m.tool_calls
        ],
        tool_call_id=m.tool_call_id,
        tool_name=m.tool_name,
        transient=m.transient,
    )
    if m.step_index is not None:
        msg.step_index = m.step_index
    return msg


def usage_from_pb(u: pb.Usage) -> Usage:
    return Usage(
        model_calls=u.model_calls,
        prompt_tokens=u.prompt_tokens,
        completion_tokens=u.completion_tokens,
        cached_prompt_tokens=u.cached_prompt_tokens,
        prompt_ms=u.prompt_ms,
        generation_ms=u.generation_ms,
        cache_hit_ratio=u.cache_hit_ratio,
        iterations=tuple(
            IterationUsage(
                iteration=i.iteration,
                prompt_tokens=i.prompt_tokens,
                cached_prompt_tokens=i.cached_prompt_tokens,
                cache_hit_ratio=i.cache_hit_ratio,
                prompt_ms=i.prompt_ms,
                generation_ms=i.generation_ms,
                slot=i.slot,
                backend=i.backend,
            )
            for i in u.iterations
        ),
    )


def server_info_from_pb(info: pb.GetServerInfoResponse) -> ServerInfo:
    return ServerInfo(
        version=info.version,
        backend=info.backend,
        model=info.model,
        context_budget_tokens=info.context_budget_tokens,
        budget_mode=info.budget_mode,
        slots=info.slots,
        backend_mode=info.backend_mode,
        backend_url=info.backend_url,
        tool_call_mode=info.tool_call_mode,
        active_runs=info.active_runs,
        kv_cache_type=info.kv_cache_type,
        budget_source=info.budget_source,
        gpus=tuple(Gpu(g.name, g.vram_total_bytes, g.vram_free_bytes) for g in info.gpus),
        gpu_status=info.gpu_status,
        queued_runs=info.queued_runs,
        backends=tuple(
            BackendHealth(
                name=b.name,
                model=b.model,
                url=b.url,
                available=b.available,
                cooldown_remaining_s=b.cooldown_remaining_s,
                consecutive_failures=b.consecutive_failures,
                calls=b.calls,
                failures=b.failures,
                last_error=b.last_error,
            )
            for b in info.backends
        ),
        llama_device=info.llama_device,
        llama_devices=tuple(
            LlamaDevice(d.name, d.description, d.memory_total_mib, d.memory_free_mib)
            for d in info.llama_devices
        ),
    )
