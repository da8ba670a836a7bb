"""The forge.v1.ForgeService implementation.

Each Run stream gets three cooperating pieces: the engine task (the loop,
pushing events into an outbox), a reader task (routing the client's tool
results and cancels), and the handler itself, which drains the outbox onto the
wire. Whatever ends the stream — completion, protocol error, client
disconnect — the handler's `finally` cancels the other two, so nothing of a
run outlives its stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge.v1 import messages_pb2 as mpb
from forge_core.backends.base import Backend, QueueReporting, StreamChunk
from forge_core.context import CompactionResult
from forge_core.errors import FailureReason, ForgeError, WorkflowCancelledError
from forge_core.hardware import detect_gpus
from forge_core.loop import RunResult, run_workflow
from forge_core.messages import Message, ToolCallInfo
from forge_core.screening import Screening
from forge_core.workflow import RunOptions, Workflow, WorkflowError
from forge_server import __version__, guard
from forge_server.auth import Authenticator, Identity
from forge_server.convert import (
    SECRETS_POLICY_TO_PB,
    backend_chain,
    backends_to_pb,
    message_to_pb,
    options_from_pb,
    prior_from_pb,
    reason_to_pb,
    usage_to_pb,
    workflow_from_pb,
)
from forge_server.errors import RequestRejected, clip
from forge_server.executor import StreamToolExecutor, invalid_result
from forge_server.logs import MAX_LOGGED_VALUE, run_logger
from forge_server.metrics import Metrics

log = logging.getLogger(__name__)

_CHUNK_TO_PB = {
    "text_delta": pb.CHUNK_TYPE_TEXT_DELTA,
    "tool_call_delta": pb.CHUNK_TYPE_TOOL_CALL_DELTA,
    "final": pb.CHUNK_TYPE_FINAL,
    "retry": pb.CHUNK_TYPE_RETRY,
}

# Bounded so a client that stops reading slows its own run instead of growing
# the server's memory.
OUTBOX_SIZE = 256

# After the drain period, runs still going are stopped and get this long to
# send their run_failed (with transcript) before the transport closes.
SHUTDOWN_FLUSH_S = 2.0


@dataclass
class _Start:
    workflow: Workflow
    options: RunOptions
    user_message: str
    prior: list[Message]
    labels: dict[str, str]


@dataclass
class _Live:
    """What the drain needs to stop a running run in-band."""

    cancel: asyncio.Event
    shutting_down: bool = False


class ForgeService(pb_grpc.ForgeServiceServicer):
    def __init__(
        self,
        backend: Backend,
        *,
        max_active_runs: int = 1024,
        max_message_bytes: int = 16 * 1024 * 1024,
        start_timeout_s: float = 10.0,
        auth: Authenticator | None = None,
        log_payloads: bool = False,
        metrics: Metrics | None = None,
        tool_output_secrets: str = "allow",
    ) -> None:
        self.backend = backend
        # For workflows that leave Workflow.tool_output_secrets unspecified.
        self.tool_output_secrets = tool_output_secrets
        self.log_payloads = log_payloads
        self.metrics = metrics or Metrics()
        self.metrics.watch(
            lambda: self.open_streams, lambda: self.active_runs, lambda: queued_runs(backend)
        )
        # None: every caller is admitted (no --auth-token-file or --auth-url).
        self.auth = auth
        self.max_active_runs = max_active_runs
        self.max_message_bytes = max_message_bytes
        self.start_timeout_s = start_timeout_s
        self.active_runs = 0
        # Streams count from their first byte: a client that opens streams and
        # never sends `start` must not hold server resources for free.
        self.open_streams = 0
        self.draining = False
        self._live: dict[str, _Live] = {}
        self._idle = asyncio.Event()  # set while no run is live
        self._idle.set()
        # Read once: NVML queries are slow and GPUs do not come and go.
        self.gpus, self.gpu_status = detect_gpus()

    async def drain(self, grace_s: float | None) -> None:
        """Refuse new runs; give running ones `grace_s` seconds (None: as long
        as they take), then end the rest in-band with SHUTTING_DOWN."""
        self.draining = True
        if await self._idle_within(grace_s):
            return
        log.info("drain period over: stopping %d runs", len(self._live))
        for live in self._live.values():
            live.shutting_down = True
            live.cancel.set()
        await self._idle_within(SHUTDOWN_FLUSH_S)

    async def _idle_within(self, timeout_s: float | None) -> bool:
        try:
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def GetServerInfo(
        self, request: pb.GetServerInfoRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.GetServerInfoResponse:
        try:
            await self._authenticate(context)
        except RequestRejected as exc:
            await self._reject(context, exc)
        info = self.backend.info()
        return pb.GetServerInfoResponse(
            version=__version__,
            backend=info.name,
            model=info.model,
            context_budget_tokens=info.context_budget_tokens,
            budget_mode=info.budget_mode,
            slots=info.slots,
            backend_mode=info.backend_mode,
            backend_url=info.url,
            tool_call_mode=info.tool_call_mode,
            active_runs=self.active_runs,
            kv_cache_type=info.kv_cache_type,
            budget_source=info.budget_source,
            gpus=[
                pb.Gpu(
                    name=g.name,
                    vram_total_bytes=g.vram_total_bytes,
                    vram_free_bytes=g.vram_free_bytes,
                )
                for g in self.gpus
            ],
            gpu_status=self.gpu_status,
            queued_runs=queued_runs(self.backend),
            backends=backends_to_pb(self.backend),
        )

    async def Guard(
        self, request: pb.GuardRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> pb.GuardResponse:
        try:
            await self._authenticate(context)
            self._refuse_if_draining()
            return await guard.decide(request, self.tool_output_secrets)
        except RequestRejected as exc:
            await self._reject(context, exc)
            raise AssertionError("unreachable: abort raises") from exc

    async def Run(
        self,
        request_iterator: AsyncIterator[pb.RunRequest],
        context: grpc.aio.ServicerContext[pb.RunRequest, pb.RunResponse],
    ) -> AsyncIterator[pb.RunResponse]:
        self.open_streams += 1
        caller: Identity | None = None
        try:
            try:
                identity = await self._authenticate(context)
                self._refuse_if_draining()
                self._refuse_if_busy(self.open_streams - 1)
                if self.auth is not None and identity is not None:
                    self.auth.acquire_run(identity)
                    caller = identity
                start = await asyncio.wait_for(
                    self._read_start(request_iterator), self.start_timeout_s
                )
                self._refuse_if_draining()
            except TimeoutError:
                await self._reject(
                    context,
                    RequestRejected(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        "START_TIMEOUT",
                        "start",
                        f"no start message within {self.start_timeout_s:g}s of opening the stream",
                    ),
                )
                return
            except RequestRejected as exc:
                await self._reject(context, exc)
                return
            # aclosing: a stream cancelled while a response is on the wire
            # must release its run now, not when the generator is collected.
            async with contextlib.aclosing(self._serve(start, request_iterator, context)) as run:
                async for response in run:
                    yield response
        finally:
            self.open_streams -= 1
            if self.auth is not None and caller is not None:
                self.auth.release_run(caller)

    async def _reject(
        self, context: grpc.aio.ServicerContext[Any, Any], exc: RequestRejected
    ) -> None:
        self.metrics.rejected.labels(exc.reason).inc()
        await _abort(context, exc)

    def _payload(self, text: str) -> str:
        """Text that may quote tool errors or argument values, for a log line:
        left out unless --log-payloads (it can hold credentials)."""
        if self.log_payloads:
            return f": {clip(text, MAX_LOGGED_VALUE)}"
        return f" ({len(text)} characters; --log-payloads shows them)"

    async def _authenticate(self, context: grpc.aio.ServicerContext[Any, Any]) -> Identity | None:
        if self.auth is None:
            return None
        return await self.auth.authenticate(context.invocation_metadata())

    def _refuse_if_draining(self) -> None:
        if self.draining:
            raise RequestRejected(
                grpc.StatusCode.UNAVAILABLE,
                "SHUTTING_DOWN",
                "",
                "the server is shutting down; retry on another instance",
            )

    def _refuse_if_busy(self, others: int) -> None:
        if others >= self.max_active_runs:
            raise RequestRejected(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "SERVER_BUSY",
                "",
                f"the server already has {others} open run streams "
                f"(limit {self.max_active_runs}); retry later",
            )

    async def _serve(
        self,
        start: _Start,
        request_iterator: AsyncIterator[pb.RunRequest],
        context: grpc.aio.ServicerContext[pb.RunRequest, pb.RunResponse],
    ) -> AsyncGenerator[pb.RunResponse, None]:
        run_id = uuid.uuid4().hex
        outbox: asyncio.Queue[pb.RunResponse | RequestRejected | None] = asyncio.Queue(OUTBOX_SIZE)
        executor = StreamToolExecutor(
            outbox.put,
            start.options.tool_timeout_s,
            on_round_trip=self.metrics.tool_round_trips.observe,
        )
        self.metrics.runs_started.inc()
        live = _Live(asyncio.Event())
        info = self.backend.info()
        self.active_runs += 1
        self._live[run_id] = live
        self._idle.clear()
        rlog = run_logger(run_id, start.labels)
        rlog.info(
            "run %s started: workflow=%r tools=%d labels=%s",
            run_id, start.workflow.name, len(start.workflow.tools),
            clip(repr(start.labels), MAX_LOGGED_VALUE),
        )  # fmt: skip
        engine = asyncio.create_task(self._engine(run_id, rlog, start, executor, live, outbox))
        reader = asyncio.create_task(
            self._read_rest(request_iterator, executor, live.cancel, outbox)
        )
        try:
            yield pb.RunResponse(
                run_started=pb.RunStarted(
                    run_id=run_id,
                    backend=info.name,
                    model=info.model,
                    context_budget_tokens=info.context_budget_tokens,
                    tool_call_mode=_run_mode(info.tool_call_mode, start.options),
                    backend_chain=backend_chain(self.backend),
                )
            )
            while True:
                item = await outbox.get()
                if item is None:
                    return
                if isinstance(item, RequestRejected):
                    rlog.info(
                        "run %s rejected: %s %s%s",
                        run_id, item.reason, item.field, self._payload(item.message),
                    )  # fmt: skip
                    await self._reject(context, item)
                    return
                yield fit(item, self.max_message_bytes)
        finally:
            self.active_runs -= 1
            self._live.pop(run_id, None)
            if not self._live:
                self._idle.set()
            for task in (engine, reader):
                task.cancel()
            await asyncio.gather(engine, reader, return_exceptions=True)
            rlog.info("run %s closed", run_id)

    async def _read_start(self, requests: AsyncIterator[pb.RunRequest]) -> _Start:
        try:
            first = await anext(requests)
        except StopAsyncIteration:
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                "start",
                "the stream closed before a start message",
            ) from None
        except DecodeError as exc:
            raise _unparsable("start", exc) from exc
        if first.WhichOneof("kind") != "start":
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                "start",
                f"the first message must be 'start', got {first.WhichOneof('kind')!r}",
            )
        try:
            # Compiling up to 128 schemas takes a while: not on the event loop,
            # where it would stall every other run.
            start = await asyncio.to_thread(_parse_start, first.start)
        except WorkflowError as exc:
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT, "INVALID_WORKFLOW", exc.field, str(exc)
            ) from exc
        if not start.workflow.tool_output_secrets:
            start.workflow.tool_output_secrets = self.tool_output_secrets
        return start

    async def _engine(
        self,
        run_id: str,
        rlog: logging.LoggerAdapter[logging.Logger],
        start: _Start,
        executor: StreamToolExecutor,
        live: _Live,
        outbox: asyncio.Queue[pb.RunResponse | RequestRejected | None],
    ) -> None:
        async def on_message(message: Message, index: int) -> None:
            self.metrics.message(message)
            await outbox.put(
                pb.RunResponse(
                    message_appended=pb.MessageAppended(message=message_to_pb(message), index=index)
                )
            )

        async def on_chunk(chunk: StreamChunk, iteration: int) -> None:
            await outbox.put(
                pb.RunResponse(
                    chunk=pb.StreamChunk(
                        type=_CHUNK_TO_PB[chunk.type.value],
                        content=chunk.content,
                        iteration=iteration,
                    )
                )
            )

        async def on_compact(result: CompactionResult, iteration: int) -> None:
            self.metrics.compactions.labels(result.strategy).inc()
            rlog.info(
                "run %s compacted (%s phase %d): %d -> %d tokens",
                run_id, result.strategy, result.phase, result.tokens_before, result.tokens_after,
            )  # fmt: skip
            await outbox.put(
                pb.RunResponse(
                    compacted=pb.Compacted(
                        iteration=iteration,
                        phase=result.phase,
                        tokens_before=result.tokens_before,
                        tokens_after=result.tokens_after,
                        messages_before=result.messages_before,
                        messages_after=len(result.messages),
                        strategy=result.strategy,
                    )
                )
            )

        async def on_screen(call: ToolCallInfo, screening: Screening, iteration: int) -> None:
            # Types and counts only: the secret itself goes nowhere.
            rlog.info(
                "run %s: %s %d secret(s) in the output of %s (%s)",
                run_id, "redacted" if screening.action == "redact" else "withheld",
                screening.count, call.name, ", ".join(screening.secret_types),
            )  # fmt: skip
            self.metrics.interventions.labels(f"secrets_{screening.action}").inc()
            await outbox.put(
                pb.RunResponse(
                    tool_output_screened=pb.ToolOutputScreened(
                        call_id=call.call_id,
                        tool_name=call.name,
                        action=SECRETS_POLICY_TO_PB[screening.action],
                        secret_types=list(screening.secret_types),
                        secrets=screening.count,
                        iteration=iteration,
                    )
                )
            )

        async def on_queue(position: int, preempted: bool, iteration: int) -> None:
            await outbox.put(
                pb.RunResponse(
                    queued=pb.Queued(position=position, iteration=iteration, preempted=preempted)
                )
            )

        try:
            result = await run_workflow(
                start.workflow,
                start.user_message,
                backend=self.backend,
                executor=executor,
                options=start.options,
                prior_messages=start.prior,
                on_message=on_message,
                on_chunk=on_chunk,
                on_compact=on_compact,
                on_queue=on_queue,
                cancel=live.cancel,
                run_id=run_id,
                approver=executor.approve,
                on_screen=on_screen,
            )
        except ForgeError as exc:
            reason, message = exc.reason, exc.message
            if live.shutting_down and isinstance(exc, WorkflowCancelledError):
                reason = FailureReason.SHUTTING_DOWN
                message = f"the server is shutting down and its drain period ended ({message})"
            rlog.info("run %s failed: %s%s", run_id, reason.value, self._payload(message))
            self.metrics.runs_finished.labels("failed", reason.value).inc()
            self.metrics.usage(exc.usage)
            await outbox.put(_failed(reason, message, exc))
        except Exception as exc:
            rlog.exception("run %s crashed", run_id)
            self.metrics.runs_finished.labels("failed", FailureReason.INTERNAL.value).inc()
            await outbox.put(_failed(FailureReason.INTERNAL, f"internal error: {exc!r}", None))
        else:
            rlog.info(
                "run %s completed by %s after %d iterations",
                run_id, result.terminal_tool, result.iterations,
            )  # fmt: skip
            self.metrics.runs_finished.labels("completed", "").inc()
            self.metrics.usage(result.usage)
            await outbox.put(
                pb.RunResponse(
                    run_completed=pb.RunCompleted(
                        terminal_tool=result.terminal_tool,
                        terminal_call_id=result.terminal_call_id,
                        result=result.result,
                        iterations=result.iterations,
                        usage=usage_to_pb(result.usage),
                        transcript=_transcript_without_result(result),
                    )
                )
            )
        await outbox.put(None)

    async def _read_rest(
        self,
        requests: AsyncIterator[pb.RunRequest],
        executor: StreamToolExecutor,
        cancel: asyncio.Event,
        outbox: asyncio.Queue[pb.RunResponse | RequestRejected | None],
    ) -> None:
        try:
            async for request in requests:
                rejected = _route(request, executor, cancel)
                if rejected is not None:
                    await outbox.put(rejected)
                    return
        except DecodeError as exc:
            # Left alone, this would end only this task: the run would wait
            # for the tool timeout with the stream still open.
            await outbox.put(_unparsable("a message after start", exc))
            return
        except Exception:
            log.exception("reading the client's stream failed; cancelling the run")
        # The client half-closed: nobody will answer further tool calls.
        cancel.set()


def _route(
    request: pb.RunRequest, executor: StreamToolExecutor, cancel: asyncio.Event
) -> RequestRejected | None:
    """Deliver one client message after start; the rejection that ends the
    stream when it is a protocol error."""
    kind = request.WhichOneof("kind")
    if kind == "tool_result":
        bad_field = invalid_result(request.tool_result)
        if bad_field:
            return RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                bad_field,
                f"{bad_field}: unknown enum value {request.tool_result.error.kind}",
            )
        if not executor.resolve(request.tool_result):
            return RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "UNKNOWN_CALL_ID",
                "tool_result.call_id",
                f"tool_result.call_id {_echo(request.tool_result.call_id)} does not match "
                "any tool call the server is waiting for",
            )
    elif kind == "approval":
        if not executor.decide(request.approval):
            return RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "UNKNOWN_CALL_ID",
                "approval.call_id",
                f"approval.call_id {_echo(request.approval.call_id)} does not match "
                "any call the server is waiting to have approved",
            )
    elif kind == "cancel":
        cancel.set()
    else:
        return RequestRejected(
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
            kind or "kind",
            f"unexpected {kind or 'empty'} message after start",
        )
    return None


def _parse_start(msg: pb.StartRun) -> _Start:
    if not msg.HasField("workflow"):
        raise WorkflowError("start.workflow", "is required")
    workflow = workflow_from_pb(msg.workflow)
    options = options_from_pb(msg.options)
    prior = prior_from_pb(msg.prior_messages)
    if not msg.user_message.strip():
        raise WorkflowError("start.user_message", "must not be empty")
    return _Start(workflow, options, msg.user_message, prior, dict(msg.labels))


def _unparsable(what: str, exc: DecodeError) -> RequestRejected:
    return RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_REQUEST",
        "",
        f"{what} is not a valid forge.v1.RunRequest: {exc}",
    )


def _echo(value: str) -> str:
    """A client-chosen string quoted in an error, short enough for a trailer."""
    return repr(clip(value, 64))


def fit(response: pb.RunResponse, limit: int) -> pb.RunResponse:
    """`response` made to fit the message size limit instead of failing the
    stream with RESOURCE_EXHAUSTED and losing the outcome.

    A final message drops its transcript (and says so): the client already has
    every message from `message_appended`. Text that alone is over the limit
    is cut, with a marker saying so.
    """
    size = response.ByteSize()
    if size <= limit:
        return response
    kind = response.WhichOneof("kind")
    if kind in ("run_completed", "run_failed"):
        final = response.run_completed if kind == "run_completed" else response.run_failed
        del final.transcript[:]
        final.transcript_omitted = True
        size = response.ByteSize()
        if size > limit and kind == "run_completed":
            response.run_completed.result = _cut(response.run_completed.result, size - limit)
    elif kind == "message_appended":
        message = response.message_appended.message
        message.content = _cut(message.content, size - limit)
    log.warning("a %s event of %d bytes was cut to the %d-byte message limit", kind, size, limit)
    return response


def _cut(text: str, excess: int) -> str:
    keep = max(0, len(text.encode()) - excess - 64)
    return clip(text, keep)


def queued_runs(backend: Backend) -> int:
    return backend.queued_runs() if isinstance(backend, QueueReporting) else 0


def _run_mode(backend_mode: str, options: RunOptions) -> str:
    # Disabling constrained decoding turns a constrained backend into prompt mode.
    if backend_mode == "constrained" and not options.constrained_decoding:
        return "prompt"
    return backend_mode


def _transcript_without_result(result: RunResult) -> list[mpb.Message]:
    """The transcript with the terminal result's content left out: it is
    RunCompleted.result already, and a large result sent twice halves the
    size a completion message can carry."""
    out = [message_to_pb(m) for m in result.transcript]
    for message in reversed(out):
        if message.role == mpb.ROLE_TOOL and message.tool_call_id == result.terminal_call_id:
            if message.content == result.result:
                message.content = ""
            break
    return out


def _failed(reason: FailureReason, message: str, exc: ForgeError | None) -> pb.RunResponse:
    return pb.RunResponse(
        run_failed=pb.RunFailed(
            reason=reason_to_pb(reason),
            message=message,
            details=exc.details if exc else {},
            iterations=exc.iterations if exc else 0,
            usage=usage_to_pb(exc.usage if exc else None),
            transcript=[message_to_pb(m) for m in exc.transcript] if exc else [],
        )
    )


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: RequestRejected) -> None:
    await context.abort(exc.code, exc.message, trailing_metadata=exc.trailing_metadata())
