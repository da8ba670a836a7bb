"""The Forge client: one bidirectional stream per run, tools run here."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import inspect
import json
import logging
import os
import random
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import grpc
import pydantic
from google.rpc import error_details_pb2, status_pb2

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_client.convert import (
    message_from_pb,
    message_to_pb,
    server_info_from_pb,
    usage_from_pb,
)
from forge_client.errors import (
    ConnectionLostError,
    RequestRejectedError,
    ServerUnreachableError,
    ToolResolutionError,
    ToolUnreachableError,
    run_failed,
)
from forge_client.messages import Message, Role, ServerInfo, ToolCall, Usage
from forge_client.tools import encode_output
from forge_client.workflow import Workflow

if TYPE_CHECKING:
    from forge_client.guard import GuardVerdict

log = logging.getLogger(__name__)

# How long a client that has never had an answer from its server tries to
# reach it before ServerUnreachableError (ForgeClient(connect_timeout_s=...)).
CONNECT_TIMEOUT_S = 5.0

DEFAULT_ADDRESS = "127.0.0.1:50051"
# Where ForgeClient reads a bearer token from when none is given.
TOKEN_ENV = "FORGE_TOKEN"


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


# ── Events ────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    backend: str
    model: str
    context_budget_tokens: int
    # "native", "constrained" or "prompt": how this run obtains tool calls.
    tool_call_mode: str
    # The server's fallback chain in order (`backend` first); () with one backend.
    backend_chain: tuple[str, ...] = ()
    # Seconds the server keeps the run for a reattach after its stream broke
    # (0: no journal, a broken stream ends the run).
    reattach_grace_s: int = 0


@dataclass(frozen=True)
class Reattached:
    """The run's stream broke and the SDK took the run over on a new stream
    (the same server or another replica sharing its journal). Events the old
    stream missed follow; none is delivered twice."""

    run_id: str
    # The last event (RunResponse.seq) handled before the break.
    after_seq: int
    # Reattach attempts this break took (1: the first one succeeded).
    attempts: int


@dataclass(frozen=True)
class Chunk:
    """Model output as it is generated (with RunOptions(stream_chunks=True))."""

    type: str  # "text_delta" | "tool_call_delta" | "final" | "retry"
    content: str
    iteration: int


@dataclass(frozen=True)
class Coercion:
    """A near-miss argument the server fixed before validation ("42" -> 42)."""

    # JSON Pointer to the argument, e.g. "/count".
    path: str
    original_json: str
    coerced_json: str


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    iteration: int
    coercions: tuple[Coercion, ...] = ()


@dataclass(frozen=True)
class ApprovalRequested:
    """The model asked for a destructive tool; the run's `approve` callback
    decides whether it runs (RunOptions(approve_destructive_calls=True))."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    iteration: int


@dataclass(frozen=True)
class Approval:
    approved: bool
    # Why not: the model reads it with the denial.
    reason: str = ""


# Returns True/False or an Approval, directly or awaitable.
Approver = Callable[[ApprovalRequested], bool | Approval | Awaitable[bool] | Awaitable[Approval]]

NO_APPROVER = "no approver is configured in this client"


@dataclass(frozen=True)
class ApprovalDecided:
    """The decision on an ApprovalRequested, as sent to the server. An approved
    call follows as a ToolCallStarted with the same call_id."""

    call_id: str
    tool_name: str
    approved: bool
    # The denial's reason as sent (the model reads it).
    reason: str = ""
    # The approver's exception, if it raised (the call was then denied).
    error: str | None = None


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    tool_name: str
    output: str
    # The tool's error (resolution errors included); None when it succeeded.
    error: str | None


@dataclass(frozen=True)
class ToolCallCancelled:
    """The server gave up on a call (timeout, cancel); the SDK stopped the tool."""

    call_id: str
    reason: str
    tool_name: str = ""


@dataclass(frozen=True)
class ToolOutputScreened:
    """A tool's output held secrets; the model saw it redacted ("redact") or
    not at all ("block"). The secrets themselves never come back."""

    call_id: str
    tool_name: str
    action: str
    secret_types: tuple[str, ...]
    secrets: int
    iteration: int


@dataclass(frozen=True)
class MessageAppended:
    """A message the run added to the conversation; persist the non-transient
    ones to continue the conversation later (pass them as prior_messages)."""

    message: Message
    index: int


@dataclass(frozen=True)
class Compacted:
    """The server shortened what the model sees (the transcript is untouched)."""

    iteration: int
    strategy: str
    phase: int
    tokens_before: int
    tokens_after: int
    messages_before: int = 0
    messages_after: int = 0


@dataclass(frozen=True)
class Queued:
    """The run waits for a model slot (position 0: it has one again)."""

    position: int
    iteration: int
    preempted: bool


Event = (
    RunStarted
    | Chunk
    | ToolCallStarted
    | ApprovalRequested
    | ApprovalDecided
    | ToolCallFinished
    | ToolCallCancelled
    | ToolOutputScreened
    | MessageAppended
    | Compacted
    | Queued
    | Reattached
)


@dataclass
class RunResult:
    terminal_tool: str
    # What the terminal tool function returned, as a Python value.
    value: Any
    # The same result as sent to the server (text).
    output: str
    iterations: int
    usage: Usage
    # The whole conversation, prior messages included.
    transcript: list[Message] = field(default_factory=list)
    run_id: str = ""


_OMITTABLE = {
    "chunk": pb.EVENT_KIND_CHUNK,
    "message_appended": pb.EVENT_KIND_MESSAGE_APPENDED,
    "compacted": pb.EVENT_KIND_COMPACTED,
    "queued": pb.EVENT_KIND_QUEUED,
    "tool_output_screened": pb.EVENT_KIND_TOOL_OUTPUT_SCREENED,
}


def _event_kinds(names: Sequence[str]) -> list[pb.EventKind.ValueType]:
    unknown = [n for n in names if n not in _OMITTABLE]
    if unknown:
        raise ValueError(
            f"omit_events: {', '.join(map(repr, unknown))} cannot be left out "
            f"(one of {', '.join(_OMITTABLE)})"
        )
    return [_OMITTABLE[n] for n in names]


_CHUNK_NAMES = {
    pb.CHUNK_TYPE_TEXT_DELTA: "text_delta",
    pb.CHUNK_TYPE_TOOL_CALL_DELTA: "tool_call_delta",
    pb.CHUNK_TYPE_FINAL: "final",
    pb.CHUNK_TYPE_RETRY: "retry",
}


class ForgeClient:
    """A connection to a Forge server.

    >>> async with ForgeClient("127.0.0.1:50051") as client:
    ...     result = await client.run(workflow, "What's the weather in Paris?")
    """

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        token: str | None = None,
        keepalive_s: float | None = 30.0,
        max_message_bytes: int = 16 * 1024 * 1024,
        channel_options: Sequence[tuple[str, Any]] = (),
        reattach: bool = True,
        reattach_deadline_s: float | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        """`token`: sent as `authorization: Bearer <token>`; None (the
        default) reads $FORGE_TOKEN, "" sends none.

        `channel_options` are gRPC channel arguments, passed to the channel
        after the SDK's own (one with the same name replaces the SDK's), e.g.
        `[("grpc.lb_policy_name", "round_robin")]` with a `dns:///` address.

        `reattach` (on by default): when a run's stream breaks and the server
        keeps the run (it has a journal: RunStarted.reattach_grace_s > 0),
        open a new stream and continue the run there, on this server or any
        replica sharing its journal; tools keep running meanwhile and no
        event is delivered twice. The SDK tries for the run's grace period,
        or at most `reattach_deadline_s` seconds when given, then raises
        ConnectionLostError. `reattach=False`: a broken stream raises
        ConnectionLostError at once, as without a journal.

        `connect_timeout_s` (5 s by default): until this client has had an
        answer from the server, a run whose server cannot be reached is tried
        for this long (a server still starting), with one warning logged,
        then raises ServerUnreachableError naming the address. Once the
        server has answered, a break is a restart and gets the reattach
        deadline above."""
        defaults: dict[str, Any] = {
            "grpc.max_receive_message_length": max_message_bytes,
            "grpc.max_send_message_length": max_message_bytes,
            # A server that restarts is dialled again within seconds, not
            # after gRPC's default backoff of up to two minutes.
            "grpc.max_reconnect_backoff_ms": 5000,
        }
        if keepalive_s:
            defaults.update(
                {
                    "grpc.keepalive_time_ms": int(keepalive_s * 1000),
                    "grpc.keepalive_permit_without_calls": 0,
                    # Keep pinging through a long tool call (gRPC stops after 2
                    # pings without data by default, which defeats keepalive).
                    "grpc.http2.max_pings_without_data": 0,
                }
            )
        defaults.update(dict(channel_options))
        options = list(defaults.items())
        if reattach_deadline_s is not None and reattach_deadline_s < 0:
            raise ValueError("reattach_deadline_s must be >= 0")
        if connect_timeout_s < 0:
            raise ValueError("connect_timeout_s must be >= 0")
        self._link = _Link(address, connect_timeout_s)
        self._reattach = reattach
        self._reattach_deadline_s = reattach_deadline_s
        if credentials is not None:
            self._channel = grpc.aio.secure_channel(address, credentials, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(address, options=options)
        if token is None:
            # As the Go and TypeScript SDKs: a deployment's token without code.
            token = os.environ.get(TOKEN_ENV) or None
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._stub = pb_grpc.ForgeServiceStub(self._channel)

    async def __aenter__(self) -> ForgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def server_info(self, timeout_s: float = 10.0) -> ServerInfo:
        try:
            info: pb.GetServerInfoResponse = await self._stub.GetServerInfo(
                pb.GetServerInfoRequest(), metadata=self._metadata, timeout=timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            raise _rpc_error(exc) from exc
        return server_info_from_pb(info)

    def start(
        self,
        workflow: Workflow,
        user_message: str,
        *,
        prior_messages: Sequence[Message | mpb.Message] = (),
        options: RunOptions | None = None,
        labels: dict[str, str] | None = None,
        approve: Approver | None = None,
        session_id: str = "",
        omit_events: Sequence[str] = (),
    ) -> RunStream:
        """Open the run's stream. Iterate the returned RunStream for events;
        its `result` is set once iteration ends (or a typed error is raised).

        `approve` decides on destructive calls when the options ask for
        approval; without it every such call is denied. `prior_messages` are
        Messages from an earlier transcript (protobuf messages, as earlier
        releases returned, are still accepted). `session_id` carries the
        conversation across runs on the server: with no `prior_messages`,
        the run continues the session's last completed conversation.
        `omit_events` names event kinds the server need not send ("chunk",
        "message_appended", "compacted", "queued", "tool_output_screened"):
        the run and its final transcript are the same without them."""
        start = pb.StartRun(
            workflow=workflow.to_proto(),
            user_message=user_message,
            prior_messages=[message_to_pb(m) for m in prior_messages],
            options=(options or RunOptions()).to_proto(),
            labels=labels or {},
            session_id=session_id,
            # Named here, so a stream that breaks before run_started can
            # still reattach (or start the run again if it never arrived).
            run_id=uuid.uuid4().hex if self._reattach else "",
            # Several events per message where the run has them ready.
            events=pb.EventOptions(batch=True, omit=_event_kinds(omit_events)),
        )
        call = self._stub.Run(metadata=self._metadata)
        return RunStream(
            call,
            workflow,
            start,
            approve,
            reopen=lambda: self._stub.Run(metadata=self._metadata),
            reattach=self._reattach,
            reattach_deadline_s=self._reattach_deadline_s,
            link=self._link,
        )

    async def run(
        self,
        workflow: Workflow,
        user_message: str,
        *,
        prior_messages: Sequence[Message | mpb.Message] = (),
        options: RunOptions | None = None,
        labels: dict[str, str] | None = None,
        on_event: Callable[[Event], Awaitable[None] | None] | None = None,
        approve: Approver | None = None,
        session_id: str = "",
        omit_events: Sequence[str] = (),
    ) -> RunResult:
        """Run the workflow to its terminal tool and return the result.

        Raises a RunFailedError subclass (ToolCallError, StepEnforcementError,
        ...) when the run fails, RequestRejectedError when the server refuses it.
        """
        stream = self.start(
            workflow,
            user_message,
            prior_messages=prior_messages,
            options=options,
            labels=labels,
            approve=approve,
            session_id=session_id,
            omit_events=omit_events,
        )
        if on_event is None:
            # Nobody reads the events: the stream skips building the
            # per-call ones (the run and its result are the same).
            stream._deliver = False
        async with contextlib.aclosing(stream):
            async for event in stream:
                if on_event is not None:
                    maybe = on_event(event)
                    if maybe is not None:
                        await maybe
        assert stream.result is not None
        return stream.result

    async def guard(
        self,
        workflow: Workflow,
        messages: Sequence[Message | mpb.Message],
        *,
        reply_text: str = "",
        reply_tool_calls: Sequence[ToolCall] = (),
        options: RunOptions | None = None,
        timeout_s: float | None = 30.0,
    ) -> GuardVerdict:
        """One guard decision for a loop that makes its own model calls.

        `messages` is the conversation so far (the user's request, each
        model turn's assistant message and its tool results, corrections from
        earlier retries); the model's reply to it is `reply_text` (raw text)
        or `reply_tool_calls` (a native tool-calling API's calls). Neither,
        with the terminal tool's result last in `messages`, asks whether the
        run is done. The workflow's tools are not called here.

        Returns GuardCalls (run them, append `verdict.message` and each
        call's `result_message(...)`), GuardRetry (append `verdict.messages`
        and ask the model again) or GuardDone. Raises a RunFailedError
        subclass when the guard gives up (as `run` would fail; its
        `transcript` is `messages`), RequestRejectedError naming the field
        for input the server cannot read.
        """
        from forge_client.guard import verdict_from_pb

        sent = [message_to_pb(m) for m in messages]
        request = pb.GuardRequest(
            workflow=workflow.to_proto(),
            options=(options or RunOptions()).to_proto(),
            messages=sent,
            reply_text=reply_text,
            reply_tool_calls=[
                mpb.ToolCall(id=c.id, name=c.name, arguments_json=c.arguments_json)
                for c in reply_tool_calls
            ],
        )
        try:
            response: pb.GuardResponse = await self._stub.Guard(
                request, metadata=self._metadata, timeout=timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            raise _rpc_error(exc) from exc
        verdict = verdict_from_pb(response)
        if isinstance(verdict, pb.RunFailed):
            failed = run_failed(verdict)
            if not failed.transcript:
                failed.transcript = [message_from_pb(m) for m in sent]
            raise failed
        return verdict


Call = grpc.aio.StreamStreamCall[pb.RunRequest, pb.RunResponse]

# Reattach backoff: 50 ms doubling up to 2 s, each delay jittered.
REATTACH_BACKOFF_S = 0.05
REATTACH_BACKOFF_MAX_S = 2.0
# How long a stream that broke before run_started keeps trying (the server's
# grace is not known yet).
PRESTART_REATTACH_S = 30.0
# A reattach answered with these reasons cannot succeed later.
_FINAL_REASONS = frozenset({"RUN_NOT_FOUND", "NOT_RUN_OWNER"})


class _Link:
    """What a client's runs share about its server: its address, and whether
    it has ever answered (a run that cannot reach a server that never did
    gives up after `connect_timeout_s`, warning once)."""

    __slots__ = ("address", "connect_timeout_s", "reached", "warned")

    def __init__(self, address: str, connect_timeout_s: float) -> None:
        self.address = address
        self.connect_timeout_s = connect_timeout_s
        self.reached = False
        self.warned = False

    def warn_unreachable(self, cause: Exception) -> None:
        if not self.warned:
            self.warned = True
            log.warning(
                "no Forge server answers at %s (%s); trying for %gs",
                self.address, cause, self.connect_timeout_s,
            )  # fmt: skip


class _Broken(Exception):
    """The stream broke in a way a reattach may mend; `error` is what the SDK
    raises when it does not reattach."""

    def __init__(self, error: Exception, restart: bool = False) -> None:
        super().__init__(str(error))
        self.error = error
        # Send `start` again instead of `reattach` (the server has no such run).
        self.restart = restart


class RunStream:
    """One run in progress. Iterate it for events; cancel() asks the server to stop.

    When the stream breaks and the server keeps the run (a journal:
    RunStarted.reattach_grace_s > 0), the stream reattaches on its own: a new
    Run stream continues the run from the last event handled. Tools keep
    running through the break, each call id runs once (a call the server
    sends again gets the kept result), and every event is yielded once."""

    def __init__(
        self,
        call: Call,
        workflow: Workflow,
        start: pb.StartRun,
        approve: Approver | None = None,
        *,
        reopen: Callable[[], Call] | None = None,
        reattach: bool = True,
        reattach_deadline_s: float | None = None,
        link: _Link | None = None,
    ) -> None:
        self._call: Call | None = call
        self._link = link or _Link("the server", CONNECT_TIMEOUT_S)
        self._reopen = reopen
        self._reattach = reattach and reopen is not None
        self._reattach_deadline_s = reattach_deadline_s
        self._approve = approve
        self._workflow = workflow
        self._start = start
        self._write_lock = asyncio.Lock()
        self._tool_tasks: set[asyncio.Task[None]] = set()
        self._tasks_by_call: dict[str, asyncio.Task[None]] = {}
        self._tool_names: dict[str, str] = {}
        # Events of tool and approval tasks, surfaced between server messages
        # (a plain deque: only this loop's tasks add to it, nobody waits on it).
        self._local: collections.deque[ToolCallFinished | ApprovalDecided] = collections.deque()
        # Whether anyone reads the events: `run` without on_event does not,
        # and then the per-call events (ToolCallStarted, ToolCallFinished,
        # MessageAppended) are neither built nor yielded.
        self._deliver = True
        self._values: dict[str, Any] = {}
        # Stand-in for a final transcript the server omits (size limit): the
        # server sends prior messages back only in a full transcript.
        # Without event delivery, message_appended messages are kept as
        # received and converted only if that transcript is needed.
        self._streamed: list[Message | mpb.Message] = list(start.prior_messages)
        # Reattach state: the highest seq handled, the calls and approvals
        # seen (deduplicated by call id, not seq), the answers sent (kept for
        # the run's lifetime, sent again when the server asks again).
        self._last_seq = 0
        self._grace_s = 0
        self._calls_seen: set[str] = set()
        self._approvals_seen: set[str] = set()
        self._answers: dict[str, pb.RunRequest] = {}
        # The rest of an EventBatch, handled one by one.
        self._batched: collections.deque[pb.RunResponse] = collections.deque()
        self._decisions: dict[str, pb.RunRequest] = {}
        # The calls (and approvals) the current stream asked for: an answer
        # goes only on a stream that asked for it. (A server that resumed the
        # run from its journal refuses an answer to a call it has not sent
        # again yet; it sends every unanswered call again on a new stream.)
        self._asked: set[str] = set()
        self._finished = False
        self._cancelled = False
        # Set from a break until a reattached stream opens.
        self._deadline: float | None = None
        self._attempts = 0
        self._after_seq = 0
        self.run_id = ""
        # The id the client gave the run, and whether the server said it
        # started (a run_started, reattached or not, was read).
        self._start_id = start.run_id
        self._started = False
        self._prestart_deadline: float | None = None
        self.result: RunResult | None = None

    def __aiter__(self) -> AsyncGenerator[Event, None]:
        return self._events()

    async def cancel(self, reason: str = "") -> None:
        """Ask the server to stop; the stream then ends with WorkflowCancelledError
        (ConnectionLostError if it breaks first: a cancelled run is not reattached)."""
        self._cancelled = True
        await self._send(pb.RunRequest(cancel=pb.CancelRun(reason=reason)))

    async def aclose(self) -> None:
        """Stop local tools and drop the stream (the server releases the run)."""
        for task in self._tool_tasks:
            task.cancel()
        await asyncio.gather(*self._tool_tasks, return_exceptions=True)
        call = self._call
        if call is None:
            return
        if not self._finished and self._grace_s > 0 and not call.done():
            # A dropped stream only detaches a journaled run (it would wait
            # the grace period for a reattach): cancel the run first.
            cancel = pb.RunRequest(cancel=pb.CancelRun(reason="the client closed the run"))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._write(cancel), 1.0)
        self._call = None
        call.cancel()

    async def _write(self, request: pb.RunRequest) -> None:
        # grpc.aio allows one pending write per call; tools finish concurrently.
        async with self._write_lock:
            if self._call is not None and not self._call.done():
                await self._call.write(request)

    async def _send(self, request: pb.RunRequest, asked: str | None = None) -> None:
        """Write on the current stream, if any (an answer: if that stream
        asked for `asked`); a failed write is left to the reader, which sees
        the break (a kept answer is sent again when the server asks again)."""
        try:
            async with self._write_lock:
                call = self._call
                if call is None or call.done() or (asked is not None and asked not in self._asked):
                    return
                await call.write(request)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            log.debug("writing to the run's stream failed", exc_info=True)

    def _take_local(self) -> list[ToolCallFinished | ApprovalDecided]:
        events = list(self._local)
        self._local.clear()
        return events

    def _streamed_transcript(self) -> list[Message]:
        return [m if isinstance(m, Message) else message_from_pb(m) for m in self._streamed]

    def _can_reattach(self) -> bool:
        if not self._reattach or self._finished or self._cancelled:
            return False
        if not self._started:
            # Broken before run_started: reattach by the id the client chose.
            return bool(self._start_id)
        return bool(self.run_id) and self._grace_s > 0

    async def _read(self) -> pb.RunResponse:
        """The next message; _Broken when the stream broke and a reattach may
        continue the run, else the error the SDK raises."""
        call = self._call
        if call is None:
            raise _Broken(ConnectionLostError("no stream"))
        try:
            if self._deadline is None:
                response = await call.read()
            else:
                # Waiting for a reattach to be answered: bounded by the deadline.
                remaining = max(self._deadline - time.monotonic(), 0.01)
                response = await asyncio.wait_for(call.read(), remaining)
        except TimeoutError:
            raise self._give_up(ConnectionLostError("the reattach was not answered")) from None
        except grpc.aio.AioRpcError as exc:
            error = self._broken(
                exc.code(), exc.details() or "", exc.trailing_metadata(), _rpc_error(exc)
            )
            if error.__cause__ is None:
                error.__cause__ = exc
            raise error from error.__cause__
        if response is grpc.aio.EOF:
            code = await call.code()
            if code == grpc.StatusCode.OK:
                error = ConnectionLostError("the server closed the stream before the run ended")
                if self._can_reattach():
                    raise _Broken(error)
                if self._deadline is not None:
                    raise self._give_up(error)
                raise error
            details = await call.details() or ""
            trailers = await call.trailing_metadata()
            raise self._broken(code, details, trailers, _rejected(code, details, trailers))
        assert isinstance(response, pb.RunResponse)
        return response

    def _broken(
        self, code: grpc.StatusCode, details: str, trailers: Any, error: Exception
    ) -> Exception:
        """What a stream that ended with `code` raises: _Broken when a reattach
        may mend it, else `error` (the SDK's error without reattach), or
        ConnectionLostError when a reattach gave up."""
        reason = _rejected(code, details, trailers).reason
        if not self._started and self._can_reattach():
            if reason == "RUN_NOT_FOUND":
                # The start never arrived (or its run ended unseen): start it
                # anew; no tool ran, since none is sent before run_started.
                return _Broken(error, restart=True)
            if reason == "RUN_EXISTS":
                # A start sent again found the first one arrived late after
                # all (the id is this client's own): reattach to that run.
                return _Broken(error)
            if reason and self._deadline is None:
                # A start refused with a reason (AUTH_UNAVAILABLE,
                # SHUTTING_DOWN, ...) is the server's answer, not a break.
                return error
        if self._can_reattach() and _mendable(code, reason):
            return _Broken(error)
        if self._deadline is not None:
            return self._give_up(error)
        return error

    def _give_up(self, cause: Exception) -> ConnectionLostError:
        if not self._link.reached:
            error: ConnectionLostError = ServerUnreachableError(
                f"no Forge server answered at {self._link.address} within "
                f"{self._link.connect_timeout_s:g}s: {cause}"
            )
            error.__cause__ = cause
            return error
        error = ConnectionLostError(
            f"the stream of run {self.run_id} broke and reattaching failed: {cause}"
        )
        error.__cause__ = cause
        return error

    async def _reconnect(self, broken: _Broken) -> None:
        """Open a new stream and send `reattach` on it, with backoff, until the
        deadline; raises the error to end the run with when it cannot."""
        if self._deadline is None:
            limit = float(self._grace_s) if self._started else PRESTART_REATTACH_S
            if self._reattach_deadline_s is not None:
                limit = min(limit, self._reattach_deadline_s)
            if not self._link.reached:
                # Never answered: most likely no server there at all.
                limit = min(limit, self._link.connect_timeout_s)
                self._link.warn_unreachable(broken.error)
            self._deadline = time.monotonic() + limit
            if not self._started:
                # One deadline for every break before run_started: a start
                # sent again that breaks again does not extend it.
                self._prestart_deadline = self._prestart_deadline or self._deadline
                self._deadline = self._prestart_deadline
            self._attempts = 0
            log.info(
                "run %s: the stream broke (%s); reattaching",
                self.run_id or self._start_id,
                broken.error,
            )
        async with self._write_lock:
            old, self._call = self._call, None
        if old is not None:
            old.cancel()
        assert self._reopen is not None
        while True:
            if not self._can_reattach():
                raise self._give_up(broken.error)
            backoff = min(REATTACH_BACKOFF_MAX_S, REATTACH_BACKOFF_S * 2**self._attempts)
            delay = backoff * random.uniform(0.5, 1.0)
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise self._give_up(broken.error)
            await asyncio.sleep(min(delay, remaining))
            if not self._can_reattach() or time.monotonic() >= self._deadline:
                raise self._give_up(broken.error)
            self._attempts += 1
            call = self._reopen()
            if broken.restart:
                request = pb.RunRequest(start=self._start)
            else:
                request = pb.RunRequest(
                    reattach=pb.ReattachRun(
                        run_id=self.run_id or self._start_id, after_seq=self._last_seq
                    )
                )
            try:
                await call.write(request)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as exc:
                log.debug("reattach attempt %d failed", self._attempts, exc_info=True)
                call.cancel()
                if isinstance(exc, grpc.aio.AioRpcError):
                    reason = _rejected(exc.code(), exc.details() or "", exc.trailing_metadata())
                    if not _mendable(exc.code(), reason.reason):
                        raise self._give_up(reason) from exc
                continue
            self._after_seq = self._last_seq
            if broken.restart:
                # A fresh start: its run_started ends the reattach.
                self._deadline = None
            async with self._write_lock:
                self._call = call
                self._asked = set()
            return

    async def _events(self) -> AsyncGenerator[Event, None]:
        try:
            try:
                await self._write(pb.RunRequest(start=self._start))
            except grpc.aio.AioRpcError as exc:
                # The connection failed under the start: with a run id of its
                # own the reader reattaches (or starts again), as for any
                # break before run_started.
                if not self._can_reattach():
                    raise _rpc_error(exc) from exc
                log.debug("writing the start failed", exc_info=True)
            deliver = self._deliver
            while True:
                if self._local:
                    for local in self._take_local():
                        yield local
                if self._batched:
                    response = self._batched.popleft()
                    kind = response.WhichOneof("kind")
                else:
                    try:
                        response = await self._read()
                    except _Broken as broken:
                        await self._reconnect(broken)
                        continue
                    kind = response.WhichOneof("kind")
                    if kind == "batch":
                        self._batched.extend(response.batch.events)
                        continue
                # Tasks queue their event before sending what the server
                # answers, so this keeps them ahead of that answer.
                if self._local:
                    for local in self._take_local():
                        yield local
                seq = response.seq
                if kind == "run_started":
                    self._started = True
                    self._link.reached = True
                if kind == "run_started" and response.run_started.reattached:
                    self._grace_s = response.run_started.reattach_grace_s or self._grace_s
                    attempts, self._deadline = self._attempts, None
                    log.info(
                        "run %s: reattached after seq %d",
                        self.run_id or self._start_id,
                        self._after_seq,
                    )
                    yield Reattached(self.run_id, self._after_seq, attempts)
                    continue
                if kind == "tool_call":
                    # Sent again after a reattach while it waits for its
                    # answer: deduplicated by call id, not seq.
                    self._last_seq = max(self._last_seq, seq)
                    request = response.tool_call
                    self._asked.add(request.call_id)
                    answer = self._answers.get(request.call_id)
                    if answer is not None:
                        await self._send(answer, request.call_id)
                    elif request.call_id not in self._calls_seen:
                        self._calls_seen.add(request.call_id)
                        started = self._dispatch(request)
                        if started is not None:
                            yield started
                    continue
                if kind == "approval_request":
                    self._last_seq = max(self._last_seq, seq)
                    asked = response.approval_request
                    self._asked.add("approval:" + asked.call_id)
                    decision = self._decisions.get(asked.call_id)
                    if decision is not None:
                        await self._send(decision, "approval:" + asked.call_id)
                    elif asked.call_id not in self._approvals_seen:
                        self._approvals_seen.add(asked.call_id)
                        yield self._ask(asked)
                    continue
                if seq and seq <= self._last_seq:
                    continue  # handled before the stream broke
                self._last_seq = max(self._last_seq, seq)
                if kind == "run_started":
                    s = response.run_started
                    self.run_id = s.run_id
                    self._grace_s = s.reattach_grace_s
                    yield RunStarted(
                        s.run_id,
                        s.backend,
                        s.model,
                        s.context_budget_tokens,
                        s.tool_call_mode,
                        tuple(s.backend_chain),
                        s.reattach_grace_s,
                    )
                elif kind == "chunk":
                    c = response.chunk
                    yield Chunk(_CHUNK_NAMES.get(c.type, "unknown"), c.content, c.iteration)
                elif kind == "message_appended":
                    m = response.message_appended
                    if deliver:
                        message = message_from_pb(m.message)
                        self._streamed.append(message)
                        yield MessageAppended(message, m.index)
                    else:
                        self._streamed.append(m.message)
                elif kind == "tool_call_cancelled":
                    gone = response.tool_call_cancelled
                    task = self._tasks_by_call.pop(gone.call_id, None)
                    if task is not None:
                        task.cancel()
                    yield ToolCallCancelled(
                        gone.call_id, gone.reason, self._tool_names.get(gone.call_id, "")
                    )
                elif kind == "tool_output_screened":
                    sc = response.tool_output_screened
                    yield ToolOutputScreened(
                        sc.call_id,
                        sc.tool_name,
                        "block" if sc.action == wpb.TOOL_OUTPUT_POLICY_BLOCK else "redact",
                        tuple(sc.secret_types),
                        sc.secrets,
                        sc.iteration,
                    )
                elif kind == "compacted":
                    c2 = response.compacted
                    yield Compacted(
                        c2.iteration,
                        c2.strategy,
                        c2.phase,
                        c2.tokens_before,
                        c2.tokens_after,
                        c2.messages_before,
                        c2.messages_after,
                    )
                elif kind == "queued":
                    q = response.queued
                    yield Queued(q.position, q.iteration, q.preempted)
                elif kind == "run_completed":
                    self._finished = True
                    done = response.run_completed
                    if self._local:
                        for local in self._take_local():
                            yield local
                    self.result = RunResult(
                        terminal_tool=done.terminal_tool,
                        value=self._values.get(done.terminal_call_id, done.result),
                        output=done.result,
                        iterations=done.iterations,
                        usage=usage_from_pb(done.usage),
                        transcript=(
                            self._streamed_transcript()
                            if done.transcript_omitted
                            else _with_result(done)
                        ),
                        run_id=self.run_id,
                    )
                    return
                elif kind == "run_failed":
                    self._finished = True
                    raise run_failed(response.run_failed, self._streamed_transcript())
        finally:
            await self.aclose()

    def _dispatch(self, request: pb.ToolCallRequest) -> ToolCallStarted | None:
        """Start the call's task; its ToolCallStarted (None when nobody reads
        events: the arguments are then parsed only by the tool)."""
        call_id = request.call_id
        self._tool_names[call_id] = request.tool_name
        task = asyncio.create_task(self._run_tool(request))
        self._tool_tasks.add(task)
        self._tasks_by_call[call_id] = task
        if not self._deliver:
            return None
        try:
            arguments = json.loads(request.arguments_json or "{}")
        except ValueError:
            arguments = {}
        coercions = (
            tuple([Coercion(c.path, c.original_json, c.coerced_json) for c in request.coercions])
            if request.coercions
            else ()
        )
        return ToolCallStarted(call_id, request.tool_name, arguments, request.iteration, coercions)

    def _ask(self, request: pb.ApprovalRequest) -> ApprovalRequested:
        try:
            arguments = json.loads(request.arguments_json or "{}")
        except ValueError:
            arguments = {}
        event = ApprovalRequested(request.call_id, request.tool_name, arguments, request.iteration)
        task = asyncio.create_task(self._decide(event))
        self._tool_tasks.add(task)
        task.add_done_callback(self._tool_tasks.discard)
        return event

    async def _decide(self, event: ApprovalRequested) -> None:
        decision = Approval(False, NO_APPROVER)
        error: str | None = None
        if self._approve is not None:
            try:
                answer = self._approve(event)
                if inspect.isawaitable(answer):
                    answer = await answer
                decision = answer if isinstance(answer, Approval) else Approval(bool(answer))
            except Exception as exc:  # the approver's failure is a denial, not a crash
                log.debug("approver raised for %s", event.tool_name, exc_info=True)
                error = str(exc) or type(exc).__name__
                decision = Approval(False, error)
        self._local.append(
            ApprovalDecided(
                event.call_id, event.tool_name, decision.approved, decision.reason, error
            )
        )
        request = pb.RunRequest(
            approval=pb.ApprovalDecision(
                call_id=event.call_id, approved=decision.approved, reason=decision.reason
            )
        )
        self._decisions[event.call_id] = request
        await self._send(request, "approval:" + event.call_id)

    async def _run_tool(self, request: pb.ToolCallRequest) -> None:
        try:
            await self._call_tool(request)
        finally:
            # The task forgets itself as it ends, rather than in done
            # callbacks, which take one more turn of the event loop per call.
            # (A task cancelled before its first step never gets here: it
            # stays in _tool_tasks, done, until aclose.)
            task = asyncio.current_task()
            if task is not None:
                self._tool_tasks.discard(task)
            self._tasks_by_call.pop(request.call_id, None)

    async def _call_tool(self, request: pb.ToolCallRequest) -> None:
        result = pb.ToolResult(call_id=request.call_id)
        tool = self._workflow.tools.get(request.tool_name)
        error: str | None = None
        output = ""
        try:
            if tool is None:
                raise LookupError(f"no tool {request.tool_name!r} is registered in this client")
            value = await tool.invoke(request.arguments_json)
            self._values[request.call_id] = value
            output = encode_output(value)
            result.output = output
        except ToolResolutionError as exc:
            error = str(exc)
            result.error.CopyFrom(
                pb.ToolError(
                    message=error, kind=pb.TOOL_ERROR_KIND_RESOLUTION, type=type(exc).__name__
                )
            )
        except ToolUnreachableError as exc:
            error = str(exc) or type(exc).__name__
            result.error.CopyFrom(
                pb.ToolError(
                    message=error, kind=pb.TOOL_ERROR_KIND_UNREACHABLE, type=type(exc).__name__
                )
            )
        except pydantic.ValidationError as exc:
            error = f"invalid arguments: {exc}"
            result.error.CopyFrom(
                pb.ToolError(message=error, kind=pb.TOOL_ERROR_KIND_HARD, type="ValidationError")
            )
        except Exception as exc:  # a tool's failure is reported to the model, not raised here
            log.debug("tool %s raised", request.tool_name, exc_info=True)
            error = str(exc) or type(exc).__name__
            result.error.CopyFrom(
                pb.ToolError(message=error, kind=pb.TOOL_ERROR_KIND_HARD, type=type(exc).__name__)
            )
        if self._deliver:
            self._local.append(ToolCallFinished(request.call_id, request.tool_name, output, error))
        answer = pb.RunRequest(tool_result=result)
        # Kept for the run's lifetime: a call the server sends again (after a
        # reattach) gets this answer again instead of a second run.
        self._answers[request.call_id] = answer
        await self._send(answer, request.call_id)


def _mendable(code: grpc.StatusCode, reason: str) -> bool:
    """Whether a stream that ended with `code` may be continued by a reattach:
    the transport failed, the server is draining (SHUTTING_DOWN hands the run
    over), restarting, or another replica still holds the run (RUN_BUSY)."""
    if reason in _FINAL_REASONS:
        return False
    if code == grpc.StatusCode.UNAVAILABLE:
        return True
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return reason == "SERVER_BUSY"
    return (
        code in (grpc.StatusCode.CANCELLED, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
        and not reason
    )


def _rpc_error(exc: grpc.aio.AioRpcError) -> Exception:
    rejected = _rejected(exc.code(), exc.details() or "", exc.trailing_metadata())
    # A typed reason means the server refused (e.g. SHUTTING_DOWN,
    # AUTH_UNAVAILABLE); without one, the transport failed.
    if (
        exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
        and not rejected.reason
    ):
        return ConnectionLostError(f"{exc.code().name}: {exc.details()}")
    return rejected


def _rejected(code: grpc.StatusCode, details: str, trailers: Any) -> RequestRejectedError:
    reason, field_path = "", ""
    for key, value in trailers or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                reason = info.reason
                field_path = info.metadata.get("field", "")
    return RequestRejectedError(code.name, reason, field_path, details)


def _with_result(done: pb.RunCompleted) -> list[Message]:
    """The final transcript with the terminal result put back in its message
    (the server sends that content once, as `result`)."""
    transcript = [message_from_pb(m) for m in done.transcript]
    for i in range(len(transcript) - 1, -1, -1):
        message = transcript[i]
        if message.role == Role.TOOL and message.tool_call_id == done.terminal_call_id:
            if not message.content:
                transcript[i] = dataclasses.replace(message, content=done.result)
            break
    return transcript
