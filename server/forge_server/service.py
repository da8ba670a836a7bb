"""The forge.v1.ForgeService implementation.

A run lives apart from its stream (runs.LiveRun): the engine task pushes
numbered events into it, a stream attaches to read them and to route the
client's tool results and cancels. Whatever ends a stream — completion,
protocol error, disconnect — its handler's `finally` detaches it: the run
goes on for the reattach grace period when a journal keeps it (a new stream
sends `reattach`), else it is cancelled, so nothing of a run outlives its
stream without a way back to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine
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
from forge_core.guardrails.screening import Screening
from forge_core.hardware import detect_gpus
from forge_core.loop import Approval, RunResult, ToolOutcome, run_workflow
from forge_core.messages import Message, MessageType, ToolCallInfo
from forge_core.observe import MODEL_CALLS
from forge_core.replay import resume_run
from forge_core.workflow import RunOptions, Workflow, WorkflowError
from forge_server import __version__, guard
from forge_server.auth import Authenticator, Identity
from forge_server.backend import llama_device
from forge_server.convert import (
    SECRETS_POLICY_TO_PB,
    backend_chain,
    backends_to_pb,
    message_from_pb,
    message_to_pb,
    options_from_pb,
    prior_from_pb,
    reason_to_pb,
    usage_to_pb,
    workflow_from_pb,
)
from forge_server.errors import RequestRejected, clip
from forge_server.executor import invalid_result, outcome_of
from forge_server.journal import Journal
from forge_server.journal.base import COMPLETED, FAILED, LEASE_S, RUNNING, RunExists
from forge_server.logs import MAX_LOGGED_VALUE, run_logger
from forge_server.metrics import Metrics
from forge_server.runs import EMPTY, Attachment, LiveRun, end_abandoned, now
from forge_server.tracing import Carrier, ServerTracing

log = logging.getLogger(__name__)

_CHUNK_TO_PB = {
    "text_delta": pb.CHUNK_TYPE_TEXT_DELTA,
    "tool_call_delta": pb.CHUNK_TYPE_TOOL_CALL_DELTA,
    "final": pb.CHUNK_TYPE_FINAL,
    "retry": pb.CHUNK_TYPE_RETRY,
}

# After the drain period, runs still going are stopped and get this long to
# send their run_failed (with transcript) before the transport closes.
SHUTDOWN_FLUSH_S = 2.0

# A client's cancellation and the end of its requests arrive together; this
# long after the end, an RPC not marked cancelled was half-closed.
HALF_CLOSE_SETTLE_S = 0.05

# A client-chosen run id.
_RUN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")

# How often the journal's old runs are pruned.
PRUNE_EVERY_S = 600.0

# Parsed workflows kept (by their bytes) for the next run that sends one.
WORKFLOW_CACHE_SIZE = 256
# A start whose workflow is known is parsed on the event loop up to this
# many prior messages (more go to a thread like a new workflow).
INLINE_PRIOR_MESSAGES = 64

# The most events one EventBatch carries.
MAX_BATCH_EVENTS = 64

# EventKind -> the RunResponse kind it leaves out.
_OMITTABLE = {
    pb.EVENT_KIND_CHUNK: "chunk",
    pb.EVENT_KIND_MESSAGE_APPENDED: "message_appended",
    pb.EVENT_KIND_COMPACTED: "compacted",
    pb.EVENT_KIND_QUEUED: "queued",
    pb.EVENT_KIND_TOOL_OUTPUT_SCREENED: "tool_output_screened",
}


@dataclass
class _Start:
    workflow: Workflow
    options: RunOptions
    user_message: str
    prior: list[Message]
    labels: dict[str, str]
    session_id: str = ""
    # The StartRun as the client sent it (the journal keeps it).
    raw: bytes = b""
    # Chosen by the client ("": the server picks).
    run_id: str = ""
    # StartRun.events: kinds left out, and whether events are bundled.
    omit: frozenset[str] = frozenset()
    batch: bool = False


@dataclass
class _Resume:
    """A journaled run continued on this server."""

    transcript: list[Message]
    known: dict[str, ToolOutcome]
    approvals: dict[str, Approval]


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
        journal: Journal | None = None,
        reattach_grace_s: float = 0.0,
        holder: str = "",
        retention_s: float = 7 * 24 * 3600.0,
        journal_max_bytes: int = 0,
        tracing: ServerTracing | None = None,
    ) -> None:
        self.backend = backend
        # OpenTelemetry spans of every run; None: off (tracing.py).
        self.tracing = tracing
        # Runs survive their streams (and this process) when journaled.
        self.journal = journal
        self.reattach_grace_s = reattach_grace_s if journal is not None else 0.0
        # This process, as the journal's leases name it.
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}"
        self.retention_s = retention_s
        self.journal_max_bytes = journal_max_bytes
        self._upkeep: asyncio.Task[None] | None = None
        # For workflows that leave Workflow.tool_output_secrets unspecified.
        self.tool_output_secrets = tool_output_secrets
        self.log_payloads = log_payloads
        self.metrics = metrics or Metrics()
        self.metrics.watch(
            lambda: self.open_streams, lambda: self.active_runs, lambda: queued_runs(backend)
        )
        self.metrics.watch_device(lambda: llama_device(backend))
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
        self._live: dict[str, LiveRun] = {}
        # Runs whose start is between its checks and registration in _live.
        self._starting: set[str] = set()
        self._idle = asyncio.Event()  # set while no run is live
        self._idle.set()
        self._workflows: OrderedDict[bytes, Workflow] = OrderedDict()
        # Read once: NVML queries are slow and GPUs do not come and go.
        self.gpus, self.gpu_status = detect_gpus()

    async def start(self) -> None:
        """Background upkeep of the journal: leases renewed, handoffs
        honoured, abandoned runs ended, old runs pruned."""
        if self.journal is not None and self._upkeep is None:
            # Runs an earlier process under this replica id held are not
            # renewed here: resumed by their client's reattach, or abandoned.
            await self.journal.disown(self.holder)
            self._upkeep = asyncio.ensure_future(self._keep_journal())

    async def _keep_journal(self) -> None:
        assert self.journal is not None
        last_prune = 0.0
        while True:
            try:
                wanted = await self.journal.renew(self.holder, now())
                for run_id in wanted:
                    run = self._live.get(run_id)
                    if run is None:
                        # Held under this replica id by a process that died
                        # (a restart with the same --replica-id): not run here.
                        await self.journal.release(run_id, self.holder)
                        continue
                    # Only a run no stream drives here moves; an attached one
                    # stays (its client is connected to this replica).
                    if run.attachment is None and not run.finished.is_set():
                        log.info("run %s: handing it over to another replica", run_id)
                        await run.stop()
                        self._forget(run)
                        with contextlib.suppress(Exception):
                            await run.durable()
                        await self.journal.release(run_id, self.holder)
                await end_abandoned(self.journal, self.reattach_grace_s, self.metrics)
                if time.monotonic() - last_prune > PRUNE_EVERY_S:
                    last_prune = time.monotonic()
                    pruned = await self.journal.prune(
                        now(), self.retention_s, self.journal_max_bytes
                    )
                    if pruned:
                        log.info("journal: pruned %d old runs", pruned)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("journal upkeep failed; retrying")
            await asyncio.sleep(LEASE_S / 3)

    async def drain(self, grace_s: float | None) -> None:
        """Refuse new runs; give running ones `grace_s` seconds (None: as long
        as they take). Then, with a journal, hand the rest over (their
        clients reattach to another replica, which resumes them); without
        one, end them in-band with SHUTTING_DOWN."""
        self.draining = True
        if not await self._idle_within(grace_s):
            log.info("drain period over: stopping %d runs", len(self._live))
            if self.journal is not None:
                for run in list(self._live.values()):
                    await self._hand_over(run)
            else:
                for run in self._live.values():
                    run.shutting_down = True
                    run.cancel.set()
                await self._idle_within(SHUTDOWN_FLUSH_S)
        if self._upkeep is not None:
            self._upkeep.cancel()
            await asyncio.gather(self._upkeep, return_exceptions=True)
            self._upkeep = None

    async def _hand_over(self, run: LiveRun) -> None:
        """Stop `run` here without an outcome and release it in the journal;
        its stream ends UNAVAILABLE, so its client reattaches elsewhere."""
        assert self.journal is not None
        attachment = run.attachment
        run.attachment = None
        if attachment is not None:
            attachment.close(
                RequestRejected(
                    grpc.StatusCode.UNAVAILABLE,
                    "SHUTTING_DOWN",
                    "",
                    "the server is shutting down; reattach to continue the run on another instance",
                )
            )
        await run.stop()
        self._forget(run)
        # The next holder must find every event it was sent.
        with contextlib.suppress(Exception):
            await run.durable()
        await self.journal.release(run.run_id, self.holder)

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
        device = llama_device(self.backend)
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
            llama_device=device.device if device is not None else "",
            llama_devices=[
                pb.LlamaDevice(
                    name=d.name,
                    description=d.description,
                    memory_total_mib=d.total_mib,
                    memory_free_mib=d.free_mib,
                )
                for d in (device.devices if device is not None else ())
            ],
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
                if self.auth is not None and identity is not None:
                    self.auth.acquire_run(identity)
                    caller = identity
                first = await asyncio.wait_for(
                    self._read_first(request_iterator), self.start_timeout_s
                )
                # Draining and the stream limit are checked once the start
                # message is read: a refusal before it races with the
                # client's write of it, and grpc.aio then gives that client
                # INTERNAL ("Internal error from Core") instead of
                # SHUTTING_DOWN or SERVER_BUSY. Streams still waiting to send
                # their start count against the limit all the same.
                self._refuse_if_draining()
                self._refuse_if_busy(self.open_streams - 1)
                owner = identity.subject if identity is not None else ""
                # The caller's trace context (traceparent) when tracing is on.
                carrier = (context.invocation_metadata() or ()) if self.tracing else ()
                if isinstance(first, pb.ReattachRun):
                    run, attachment = await _uncancelled(self._reattach(first, owner, carrier))
                else:
                    run, attachment = await _uncancelled(self._start_run(first, owner, carrier))
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
            # must detach from its run now, not when the generator is collected.
            async with contextlib.aclosing(
                self._serve(run, attachment, request_iterator, context)
            ) as stream:
                async for response in stream:
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
        run: LiveRun | None,
        attachment: Attachment,
        request_iterator: AsyncIterator[pb.RunRequest],
        context: grpc.aio.ServicerContext[pb.RunRequest, pb.RunResponse],
    ) -> AsyncGenerator[pb.RunResponse, None]:
        reader = asyncio.create_task(self._read_rest(request_iterator, run, attachment, context))
        batch = run is not None and run.batch
        held: object = EMPTY
        try:
            while True:
                item = await attachment.next() if held is EMPTY else held
                held = EMPTY
                if item is None:
                    return
                if isinstance(item, RequestRejected):
                    log.info(
                        "run %s: stream ended: %s %s%s",
                        run.run_id if run else "-", item.reason, item.field,
                        self._payload(item.message),
                    )  # fmt: skip
                    await self._reject(context, item)
                    return
                assert isinstance(item, pb.RunResponse)
                if run is not None and not await self._durable(run, context):
                    return
                if not batch:
                    yield fit(item, self.max_message_bytes)
                    continue
                # What the run produced while the last message was on the
                # wire goes out in one message.
                events, held = bundle(item, attachment, self.max_message_bytes)
                yield events
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            if run is not None:
                run.detach(attachment)

    async def _durable(
        self, run: LiveRun, context: grpc.aio.ServicerContext[pb.RunRequest, pb.RunResponse]
    ) -> bool:
        """Wait until the run's events are journaled; False (the stream is
        ended, and the run) when the journal failed."""
        try:
            await run.durable()
        except Exception as exc:
            log.exception("run %s: the journal failed; ending the run", run.run_id)
            run.cancel.set()
            await self._reject(
                context,
                RequestRejected(
                    grpc.StatusCode.UNAVAILABLE,
                    "JOURNAL_UNAVAILABLE",
                    "",
                    f"the server could not journal the run's events: {exc!r}",
                ),
            )
            return False
        return True

    async def _read_first(self, requests: AsyncIterator[pb.RunRequest]) -> _Start | pb.ReattachRun:
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
        kind = first.WhichOneof("kind")
        if kind == "reattach":
            if not first.reattach.run_id:
                raise RequestRejected(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "INVALID_REQUEST",
                    "reattach.run_id",
                    "reattach.run_id must not be empty",
                )
            return first.reattach
        if kind != "start":
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                "start",
                f"the first message must be 'start' or 'reattach', got {kind!r}",
            )
        return await self._parse(first.start)

    async def _parse(self, msg: pb.StartRun) -> _Start:
        # Runs of one workflow share its parsed and compiled form.
        key = msg.workflow.SerializeToString(deterministic=True)
        known = self._workflows.get(key)
        try:
            if known is not None and len(msg.prior_messages) <= INLINE_PRIOR_MESSAGES:
                self._workflows.move_to_end(key)
                start = _parse_start(msg, known)
            else:
                # Compiling up to 128 schemas takes a while: not on the event
                # loop, where it would stall every other run.
                start = await asyncio.to_thread(_parse_start, msg, known)
                if known is None:
                    self._workflows[key] = start.workflow
                    if len(self._workflows) > WORKFLOW_CACHE_SIZE:
                        self._workflows.popitem(last=False)
        except WorkflowError as exc:
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT, "INVALID_WORKFLOW", exc.field, str(exc)
            ) from exc
        if not start.workflow.tool_output_secrets:
            start.workflow.tool_output_secrets = self.tool_output_secrets
        return start

    def _new_run(self, run_id: str, owner: str, start: _Start) -> LiveRun:
        run = LiveRun(
            run_id,
            owner,
            self.journal,
            self.reattach_grace_s,
            tool_timeout_s=start.options.tool_timeout_s,
            omit=start.omit,
            batch=start.batch,
        )
        run.executor.on_round_trip(self.metrics.tool_round_trips.observe)
        self.active_runs += 1
        self._live[run_id] = run
        self._idle.clear()
        return run

    def _trace(self, run: LiveRun, start: _Start, carrier: Carrier, reattached: bool) -> None:
        if self.tracing is not None:
            run.traced(
                self.tracing.start_run(
                    self.backend, run.run_id, start.workflow.name, carrier,
                    session_id=start.session_id, reattached=reattached,
                )
            )  # fmt: skip

    def _forget(self, run: LiveRun) -> None:
        if self._live.pop(run.run_id, None) is not None:
            self.active_runs -= 1
        if not self._live:
            self._idle.set()

    def _run_started(self, run_id: str, options: RunOptions, reattached: bool) -> pb.RunResponse:
        info = self.backend.info()
        return pb.RunResponse(
            run_started=pb.RunStarted(
                run_id=run_id,
                backend=info.name,
                model=info.model,
                context_budget_tokens=info.context_budget_tokens,
                tool_call_mode=_run_mode(info.tool_call_mode, options),
                backend_chain=backend_chain(self.backend),
                reattach_grace_s=round(self.reattach_grace_s),
                reattached=reattached,
            )
        )

    async def _load_session(self, start: _Start, owner: str) -> None:
        """A session run without prior messages continues the session's
        conversation: it becomes `start.prior`."""
        if start.session_id and not start.prior and self.journal is not None:
            found = await self.journal.load_session(start.session_id)
            if found is not None:
                if found[0] != owner:
                    raise RequestRejected(
                        grpc.StatusCode.PERMISSION_DENIED,
                        "NOT_RUN_OWNER",
                        "start.session_id",
                        "the session belongs to another caller",
                    )
                start.prior = _session_messages(found[1])

    async def _start_run(
        self, start: _Start, owner: str, carrier: Carrier = ()
    ) -> tuple[LiveRun, Attachment]:
        await self._load_session(start, owner)
        run_id = start.run_id or uuid.uuid4().hex
        if run_id in self._live or run_id in self._starting:
            raise _run_exists(run_id)
        self._starting.add(run_id)
        try:
            return await self._create_run(run_id, start, owner, carrier)
        finally:
            self._starting.discard(run_id)

    async def _create_run(
        self, run_id: str, start: _Start, owner: str, carrier: Carrier = ()
    ) -> tuple[LiveRun, Attachment]:
        if self.journal is not None:
            try:
                await self.journal.create_run(
                    run_id, start.raw, owner, start.session_id, self.holder, now()
                )
            except RunExists as exc:
                # An id the journal has (an ended run's too), or two starts
                # with one id racing on replicas: the insert fails.
                raise _run_exists(run_id) from exc
            # Kept by the journal; the run does not need it again.
            start.raw = b""
        self.metrics.runs_started.inc()
        run = self._new_run(run_id, owner, start)
        self._trace(run, start, carrier, reattached=False)
        attachment = run.attach(0)
        await run.emit(self._run_started(run_id, start.options, False))
        rlog = run_logger(run_id, start.labels)
        rlog.info(
            "run %s started: workflow=%r tools=%d labels=%s",
            run_id, start.workflow.name, len(start.workflow.tools),
            clip(repr(start.labels), MAX_LOGGED_VALUE),
        )  # fmt: skip
        run.engine = asyncio.create_task(self._engine(run, rlog, start))
        return run, attachment

    async def _reattach(
        self, msg: pb.ReattachRun, owner: str, carrier: Carrier = ()
    ) -> tuple[LiveRun | None, Attachment]:
        run = self._live.get(msg.run_id)
        if run is not None:
            _check_owner(run.owner, owner)
            upto = run.seq
            attachment = run.attach(msg.after_seq)
            if run.journal is not None and msg.after_seq < upto:
                # A journaled run's events are in the journal, not in memory;
                # those after `upto` come live, to this attachment already.
                with contextlib.suppress(Exception):
                    await run.durable()
                record = await run.journal.load(run.run_id, msg.after_seq)
                missed = [_event(s, d) for s, d in (record.events if record else ()) if s <= upto]
                attachment.backlog.extendleft(
                    reversed([e for e in missed if e.WhichOneof("kind") not in run.omit])
                )
            attachment.backlog.appendleft(self._run_started(run.run_id, RunOptions(), True))
            log.info("run %s: reattached after seq %d", run.run_id, msg.after_seq)
            return run, attachment
        if msg.run_id in self._starting:
            # Its start is being handled on another stream (this one's client
            # lost the first before run_started): it is here in a moment.
            raise RequestRejected(
                grpc.StatusCode.UNAVAILABLE,
                "RUN_BUSY",
                "reattach.run_id",
                "the run is starting on this server; retry",
            )
        if self.journal is None:
            raise _not_found(msg.run_id)
        record = await self.journal.load(msg.run_id)
        if record is None:
            raise _not_found(msg.run_id)
        _check_owner(record.owner, owner)
        events = [_event(seq, data) for seq, data in record.events]
        start_msg = pb.StartRun.FromString(record.start)
        start = await self._parse(start_msg)
        opening = self._run_started(msg.run_id, start.options, True)
        if record.status != RUNNING:
            # Ended: what the client missed, then the stream ends.
            done = Attachment([opening, *(e for e in events if e.seq > msg.after_seq)])
            done.queue.put_nowait(None)
            return None, done
        if not await self._claim(msg.run_id):
            raise RequestRejected(
                grpc.StatusCode.UNAVAILABLE,
                "RUN_BUSY",
                "reattach.run_id",
                "another replica holds the run and did not release it; retry",
            )
        # The claim may have raced a last write of the previous holder.
        record = await self.journal.load(msg.run_id) or record
        events = [_event(seq, data) for seq, data in record.events]
        transcript = [
            message_from_pb(e.message_appended.message, "journal")
            for e in events
            if e.WhichOneof("kind") == "message_appended"
        ]
        known, approvals = _known_answers(record.results)
        if not _request_reached(transcript, start.prior):
            # Stopped before its opening messages were all journaled: it
            # starts again (no model turn or tool call happened yet).
            await self._load_session(start, record.owner)
        # No await from here on: the run is in _live only with its engine.
        run = self._new_run(msg.run_id, record.owner, start)
        self._trace(run, start, carrier, reattached=True)
        run.restore(events)
        attachment = run.attach(msg.after_seq)
        # Resumed here: what the stream missed is what the journal had.
        attachment.backlog.extendleft(
            reversed(
                [
                    e
                    for e in events
                    if e.seq > msg.after_seq and e.WhichOneof("kind") not in run.omit
                ]
            )
        )
        attachment.backlog.appendleft(opening)
        run.early = known
        rlog = run_logger(msg.run_id, start.labels)
        rlog.info(
            "run %s resumed from the journal at seq %d (%d messages, %d results kept)",
            msg.run_id, run.seq, len(transcript), len(known),
        )  # fmt: skip
        run.engine = asyncio.create_task(
            self._engine(run, rlog, start, _Resume(transcript, known, approvals))
        )
        return run, attachment

    async def _claim(self, run_id: str) -> bool:
        """Hold the run in the journal: at once when nobody does (or its
        holder died), else after asking the holder to let it go."""
        assert self.journal is not None
        if await self.journal.claim(run_id, self.holder, now()):
            return True
        await self.journal.request_handoff(run_id, self.holder)
        deadline = time.monotonic() + LEASE_S + 2.0
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if await self.journal.claim(run_id, self.holder, now()):
                return True
        return False

    async def _engine(
        self,
        run: LiveRun,
        rlog: logging.LoggerAdapter[logging.Logger],
        start: _Start,
        resume: _Resume | None = None,
    ) -> None:
        run_id = run.run_id
        emit = run.emit
        # This task's model calls get spans (the task has its own context).
        MODEL_CALLS.set(run.trace)
        # Messages already journaled (and maybe seen) by a run that starts
        # again are not sent twice: a fresh start appends the same ones.
        journaled = 0
        if resume is not None and not _request_reached(resume.transcript, start.prior):
            journaled, resume = len(resume.transcript), None

        async def on_message(message: Message, index: int) -> None:
            if index < journaled:
                return
            self.metrics.message(message)
            if not run.builds("message_appended"):
                return
            await emit(
                pb.RunResponse(
                    message_appended=pb.MessageAppended(message=_message_pb(message), index=index)
                )
            )

        async def on_chunk(chunk: StreamChunk, iteration: int) -> None:
            if not run.builds("chunk"):
                return
            await emit(
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
            await emit(
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
            await emit(
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
            await emit(
                pb.RunResponse(
                    queued=pb.Queued(position=position, iteration=iteration, preempted=preempted)
                )
            )

        approver = run.executor.approve
        if resume is not None and resume.approvals:
            decided = resume.approvals

            async def approve(call: ToolCallInfo, iteration: int) -> Approval:
                # A decision the client sent before the restart stands.
                known = decided.get(call.call_id)
                return known if known is not None else await run.executor.approve(call, iteration)

            approver = approve

        status = FAILED
        moved = False
        try:
            if resume is None:
                result = await run_workflow(
                    start.workflow,
                    start.user_message,
                    backend=self.backend,
                    executor=run.executor,
                    options=start.options,
                    prior_messages=start.prior,
                    on_message=on_message,
                    on_chunk=on_chunk,
                    on_compact=on_compact,
                    on_queue=on_queue,
                    cancel=run.cancel,
                    run_id=run_id,
                    approver=approver,
                    on_screen=on_screen,
                )
            else:
                result = await resume_run(
                    start.workflow,
                    resume.transcript,
                    backend=self.backend,
                    executor=run.executor,
                    options=start.options,
                    known_results=resume.known,
                    on_message=on_message,
                    on_chunk=on_chunk,
                    on_compact=on_compact,
                    on_queue=on_queue,
                    on_screen=on_screen,
                    approver=approver,
                    cancel=run.cancel,
                    run_id=run_id,
                )
        except asyncio.CancelledError:
            # Stopped without an outcome (LiveRun.stop): the run goes on on
            # another server, from the journal.
            moved = True
            raise
        except ForgeError as exc:
            reason, message = exc.reason, exc.message
            if run.shutting_down and isinstance(exc, WorkflowCancelledError):
                reason = FailureReason.SHUTTING_DOWN
                message = f"the server is shutting down and its drain period ended ({message})"
            elif run.cancel_reason and isinstance(exc, WorkflowCancelledError):
                message = f"{run.cancel_reason} ({message})"
            rlog.info("run %s failed: %s%s", run_id, reason.value, self._payload(message))
            self.metrics.runs_finished.labels("failed", reason.value).inc()
            self.metrics.usage(exc.usage)
            await emit(_failed(reason, message, exc))
        except Exception as exc:
            rlog.exception("run %s crashed", run_id)
            self.metrics.runs_finished.labels("failed", FailureReason.INTERNAL.value).inc()
            await emit(_failed(FailureReason.INTERNAL, f"internal error: {exc!r}", None))
        else:
            status = COMPLETED
            rlog.info(
                "run %s completed by %s after %d iterations",
                run_id, result.terminal_tool, result.iterations,
            )  # fmt: skip
            self.metrics.runs_finished.labels("completed", "").inc()
            self.metrics.usage(result.usage)
            if start.session_id and self.journal is not None:
                # Before the client hears of the end: its next run in the
                # session must find this conversation.
                await self.journal.save_session(
                    start.session_id,
                    run.owner,
                    pb.RunCompleted(
                        transcript=[_message_pb(m) for m in result.transcript]
                    ).SerializeToString(),
                    now(),
                )
            await emit(
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
        finally:
            self._forget(run)
            if moved:
                rlog.info("run %s left this server", run_id)
            else:
                await run.end()
                if self.journal is not None:
                    with contextlib.suppress(Exception):
                        # Its size counts every event: all committed first.
                        await run.durable()
                        await self.journal.finish(run_id, status, now())
                rlog.info("run %s closed", run_id)

    async def _read_rest(
        self,
        requests: AsyncIterator[pb.RunRequest],
        run: LiveRun | None,
        attachment: Attachment,
        context: grpc.aio.ServicerContext[pb.RunRequest, pb.RunResponse],
    ) -> None:
        try:
            async for request in requests:
                if run is None:
                    continue  # an ended run's replay: nothing to route
                rejected = await self._route(request, run)
                if rejected is not None:
                    await run.reject(rejected)
                    return
        except DecodeError as exc:
            # Left alone, this would end only this task: the run would wait
            # for the tool timeout with the stream still open.
            if run is not None:
                await run.reject(_unparsable("a message after start", exc))
            return
        except Exception:
            # The connection broke: the handler detaches the run.
            log.debug("reading the client's stream failed", exc_info=True)
            return
        # A cancelled RPC (the connection broke) ends the requests too; give
        # the cancellation a moment to show before reading it as a half-close.
        await asyncio.sleep(HALF_CLOSE_SETTLE_S)
        if context.cancelled() or context.done():
            return
        # The client half-closed: it will answer nothing more on this stream.
        if run is not None and run.attachment is attachment:
            run.cancel.set()

    async def _route(self, request: pb.RunRequest, run: LiveRun) -> RequestRejected | None:
        """Deliver one client message after start; the rejection that ends the
        stream when it is a protocol error. With a journal, a result is
        written as it takes effect, and committed before anything that
        follows from it reaches a client (LiveRun.durable): a server that
        dies first asks for it again on the next stream, whose SDK sends the
        answer it kept. A result sent again is ignored (the executor counts
        each call's first)."""
        executor = run.executor
        kind = request.WhichOneof("kind")
        if kind == "tool_result":
            result = request.tool_result
            bad_field = invalid_result(result)
            if bad_field:
                return RequestRejected(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "INVALID_REQUEST",
                    bad_field,
                    f"{bad_field}: unknown enum value {result.error.kind}",
                )
            if not run.asked(result.call_id):
                return _unknown_call("tool_result.call_id", result.call_id)
            if self.journal is not None:
                run.journal_write(
                    self.journal.keep_result(run.run_id, result.call_id, result.SerializeToString())
                )
            if not executor.resolve(result):
                # Sent before a restart, not sent again yet: kept for when
                # the resumed run gets to it.
                run.early[result.call_id] = outcome_of(result)
        elif kind == "approval":
            decision = request.approval
            if not executor.knows_approval(decision.call_id):
                return _unknown_call("approval.call_id", decision.call_id)
            if self.journal is not None:
                run.journal_write(
                    self.journal.keep_result(
                        run.run_id, "approval:" + decision.call_id, decision.SerializeToString()
                    )
                )
            executor.decide(decision)
        elif kind == "cancel":
            run.cancel.set()
        else:
            return RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                kind or "kind",
                f"unexpected {kind or 'empty'} message after start",
            )
        return None


def _unknown_call(field: str, call_id: str) -> RequestRejected:
    what = "tool call" if field.startswith("tool_result") else "call to be approved"
    return RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_CALL_ID",
        field,
        f"{field} {_echo(call_id)} does not match any {what} the server is waiting for",
    )


def _not_found(run_id: str) -> RequestRejected:
    return RequestRejected(
        grpc.StatusCode.NOT_FOUND,
        "RUN_NOT_FOUND",
        "reattach.run_id",
        f"no run {_echo(run_id)} on this server or in its journal (ended and pruned, or never "
        "started)",
    )


def _check_owner(run_owner: str, caller: str) -> None:
    if run_owner != caller:
        raise RequestRejected(
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_RUN_OWNER",
            "reattach.run_id",
            "the run was started by another caller",
        )


def _event(seq: int, data: bytes) -> pb.RunResponse:
    event = pb.RunResponse.FromString(data)
    event.seq = seq
    return event


def _known_answers(results: dict[str, bytes]) -> tuple[dict[str, ToolOutcome], dict[str, Approval]]:
    known: dict[str, ToolOutcome] = {}
    approvals: dict[str, Approval] = {}
    for key, data in results.items():
        if key.startswith("approval:"):
            decision = pb.ApprovalDecision.FromString(data)
            approvals[key[len("approval:") :]] = Approval(decision.approved, decision.reason)
        else:
            known[key] = outcome_of(pb.ToolResult.FromString(data))
    return known, approvals


async def _uncancelled(
    opening: Coroutine[Any, Any, tuple[LiveRun | None, Attachment]],
) -> tuple[LiveRun | None, Attachment]:
    """Start or reattach a run to its end even when the stream is cancelled
    meanwhile (its client went away): cut short, it would leave a run in
    _live with no engine, which a reattach would wait on for ever. A stream
    cancelled meanwhile detaches once the run is set up."""
    task = asyncio.ensure_future(opening)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:

        def detach(done: asyncio.Future[tuple[LiveRun | None, Attachment]]) -> None:
            if not done.cancelled() and done.exception() is None:
                run, attachment = done.result()
                if run is not None:
                    run.detach(attachment)

        task.add_done_callback(detach)
        raise


def _run_exists(run_id: str) -> RequestRejected:
    return RequestRejected(
        grpc.StatusCode.ALREADY_EXISTS,
        "RUN_EXISTS",
        "start.run_id",
        f"a run {_echo(run_id)} exists already: reattach to it, or pick another id",
    )


def _request_reached(transcript: list[Message], prior: list[Message]) -> bool:
    """Whether a journaled transcript holds the run's own user message (the
    opening messages are system prompt, `prior`, then that request)."""

    def requests(messages: list[Message]) -> int:
        return sum(m.type is MessageType.USER_INPUT for m in messages)

    return requests(transcript) > requests(prior)


def _session_messages(data: bytes) -> list[Message]:
    """A session's conversation, as the prior messages of its next run."""
    transcript = pb.RunCompleted.FromString(data).transcript
    return [
        message_from_pb(m, f"session[{i}]") for i, m in enumerate(transcript) if not m.transient
    ]


def _parse_start(msg: pb.StartRun, workflow: Workflow | None = None) -> _Start:
    """`msg` checked and parsed; `workflow`: its workflow, parsed already."""
    if not msg.HasField("workflow"):
        raise WorkflowError("start.workflow", "is required")
    workflow = workflow or workflow_from_pb(msg.workflow)
    options = options_from_pb(msg.options)
    prior = prior_from_pb(msg.prior_messages)
    if not msg.user_message.strip():
        raise WorkflowError("start.user_message", "must not be empty")
    if msg.run_id and not _RUN_ID.fullmatch(msg.run_id):
        raise WorkflowError("start.run_id", "must be 1-64 of A-Z a-z 0-9 . _ -")
    return _Start(
        workflow,
        options,
        msg.user_message,
        prior,
        dict(msg.labels),
        msg.session_id,
        msg.SerializeToString(),
        msg.run_id,
        omit=_omitted(msg.events),
        batch=msg.events.batch,
    )


def _omitted(events: pb.EventOptions) -> frozenset[str]:
    kinds = []
    for i, value in enumerate(events.omit):
        kind = _OMITTABLE.get(value)
        if kind is None:
            raise WorkflowError(
                f"start.events.omit[{i}]",
                f"{value} is not an event kind that can be left out (one of "
                + ", ".join(pb.EventKind.Name(k) for k in _OMITTABLE)
                + ")",
            )
        kinds.append(kind)
    return frozenset(kinds)


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


def bundle(
    first: pb.RunResponse, attachment: Attachment, limit: int
) -> tuple[pb.RunResponse, object]:
    """`first` and the events ready after it, as one message (an EventBatch
    when there are several) within `limit` bytes; and what was taken but not
    sent (EMPTY, the end of the stream, or an event for the next message)."""
    first = fit(first, limit)
    events = [first]
    # Batch framing: a tag and a length per event, and the batch's own.
    room = limit - first.ByteSize() - 32
    held: object = EMPTY
    while len(events) < MAX_BATCH_EVENTS:
        item = attachment.ready()
        if not isinstance(item, pb.RunResponse):
            held = item
            break
        size = item.ByteSize()
        if size + 16 > room:
            held = item
            break
        room -= size + 16
        events.append(item)
    if len(events) == 1:
        return first, held
    return pb.RunResponse(batch=pb.EventBatch(events=events), seq=events[-1].seq), held


def fit(response: pb.RunResponse, limit: int) -> pb.RunResponse:
    """`response` made to fit the message size limit instead of failing the
    stream with RESOURCE_EXHAUSTED and losing the outcome.

    A final message drops its transcript (and says so): the client already has
    every message from `message_appended`. Text that alone is over the limit
    is cut, with a marker saying so.
    """
    size = original = response.ByteSize()
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
    log.warning(
        "a %s event of %d bytes was cut to the %d-byte message limit", kind, original, limit
    )
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
    out = [_message_pb(m) for m in result.transcript]
    for i in reversed(range(len(out))):
        message = out[i]
        if message.role == mpb.ROLE_TOOL and message.tool_call_id == result.terminal_call_id:
            if message.content == result.result:
                # A copy: the cached one stays the message as it was.
                out[i] = mpb.Message()
                out[i].CopyFrom(message)
                out[i].content = ""
            break
    return out


def _message_pb(message: Message) -> mpb.Message:
    """`message` on the wire, converted once: it goes out when appended and
    again in the final transcript. Callers copy it into their own message
    (protobuf fields copy on assignment) and never change it."""
    converted: mpb.Message | None = message.__dict__.get("_pb")
    if converted is None:
        converted = message.__dict__["_pb"] = message_to_pb(message)
    return converted


def _failed(reason: FailureReason, message: str, exc: ForgeError | None) -> pb.RunResponse:
    return pb.RunResponse(
        run_failed=pb.RunFailed(
            reason=reason_to_pb(reason),
            message=message,
            details=exc.details if exc else {},
            iterations=exc.iterations if exc else 0,
            usage=usage_to_pb(exc.usage if exc else None),
            transcript=[_message_pb(m) for m in exc.transcript] if exc else [],
        )
    )


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: RequestRejected) -> None:
    await context.abort(exc.code, exc.message, trailing_metadata=exc.trailing_metadata())
