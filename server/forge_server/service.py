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
import socket
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import grpc

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_core.backends.base import Backend, QueueReporting
from forge_core.errors import FailureReason, ForgeError, WorkflowCancelledError
from forge_core.llama_host.hardware import detect_gpus
from forge_core.loop import RunResult, run_workflow
from forge_core.observe import MODEL_CALLS
from forge_core.replay import resume_run
from forge_core.workflow import RunOptions
from forge_server import __version__, guard
from forge_server.auth import Authenticator, Identity
from forge_server.backend import llama_device
from forge_server.client_requests import read_rest
from forge_server.convert import (
    backend_chain,
    backends_to_pb,
    gpus_to_pb,
    llama_devices_to_pb,
    message_from_pb,
)
from forge_server.errors import RequestRejected, clip
from forge_server.events import RunEvents, WireMessages, bundle, fit
from forge_server.journal import Journal
from forge_server.journal.base import COMPLETED, FAILED, LEASE_S, RUNNING, JournaledRun, RunExists
from forge_server.logs import MAX_LOGGED_VALUE, run_logger
from forge_server.metrics import Metrics
from forge_server.runs import (
    EMPTY,
    Attachment,
    LiveRun,
    Resume,
    RunTable,
    approver_for,
    attach_resumed,
    end_abandoned,
    journaled_event,
    known_answers,
    now,
    reattach_live,
    request_reached,
    uncancelled,
)
from forge_server.starts import (
    RunStart,
    StartReader,
    check_owner,
    not_found,
    run_exists,
    session_messages,
)
from forge_server.tracing import Carrier, ServerTracing, trace_run

log = logging.getLogger(__name__)

# After the drain period, runs still going are stopped and get this long to
# send their run_failed (with transcript) before the transport closes.
SHUTDOWN_FLUSH_S = 2.0

# How often the journal's old runs are pruned.
PRUNE_EVERY_S = 600.0


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
        self.runs = RunTable(journal, holder or f"{socket.gethostname()}:{os.getpid()}")
        self.retention_s = retention_s
        self.journal_max_bytes = journal_max_bytes
        self._upkeep: asyncio.Task[None] | None = None
        # For workflows that leave Workflow.tool_output_secrets unspecified.
        self.tool_output_secrets = tool_output_secrets
        self.starts = StartReader(tool_output_secrets)
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
        # Streams count from their first byte: a client that opens streams and
        # never sends `start` must not hold server resources for free.
        self.open_streams = 0
        self.draining = False
        # Read once: NVML queries are slow and GPUs do not come and go.
        self.gpus, self.gpu_status = detect_gpus()

    @property
    def active_runs(self) -> int:
        return len(self.runs.live)

    @property
    def holder(self) -> str:
        return self.runs.holder

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
                await self.runs.hand_over_wanted(await self.journal.renew(self.holder, now()))
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
        if not await self.runs.idle_within(grace_s):
            log.info("drain period over: stopping %d runs", len(self.runs.live))
            if self.journal is not None:
                for run in list(self.runs.live.values()):
                    await self.runs.hand_over(run)
            else:
                for run in self.runs.live.values():
                    run.shutting_down = True
                    run.cancel.set()
                await self.runs.idle_within(SHUTDOWN_FLUSH_S)
        if self._upkeep is not None:
            self._upkeep.cancel()
            await asyncio.gather(self._upkeep, return_exceptions=True)
            self._upkeep = None

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
            gpus=gpus_to_pb(self.gpus),
            gpu_status=self.gpu_status,
            queued_runs=queued_runs(self.backend),
            backends=backends_to_pb(self.backend),
            llama_device=device.device if device is not None else "",
            llama_devices=llama_devices_to_pb(device.devices if device is not None else ()),
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
                    self.starts.read_first(request_iterator), self.start_timeout_s
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
                    run, attachment = await uncancelled(self._reattach(first, owner, carrier))
                else:
                    run, attachment = await uncancelled(self._start_run(first, owner, carrier))
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
        reader = asyncio.create_task(
            read_rest(request_iterator, run, attachment, context, self.journal)
        )
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

    def _new_run(self, run_id: str, owner: str, start: RunStart) -> LiveRun:
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
        self.runs.add(run)
        return run

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

    async def _load_session(self, start: RunStart, owner: str) -> None:
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
                start.prior = session_messages(found[1])

    async def _start_run(
        self, start: RunStart, owner: str, carrier: Carrier = ()
    ) -> tuple[LiveRun, Attachment]:
        await self._load_session(start, owner)
        run_id = start.run_id or uuid.uuid4().hex
        if self.runs.taken(run_id):
            raise run_exists(run_id)
        self.runs.starting.add(run_id)
        try:
            return await self._create_run(run_id, start, owner, carrier)
        finally:
            self.runs.starting.discard(run_id)

    async def _create_run(
        self, run_id: str, start: RunStart, owner: str, carrier: Carrier = ()
    ) -> tuple[LiveRun, Attachment]:
        if self.journal is not None:
            try:
                await self.journal.create_run(
                    run_id, start.raw, owner, start.session_id, self.holder, now()
                )
            except RunExists as exc:
                # An id the journal has (an ended run's too), or two starts
                # with one id racing on replicas: the insert fails.
                raise run_exists(run_id) from exc
            # Kept by the journal; the run does not need it again.
            start.raw = b""
        self.metrics.runs_started.inc()
        run = self._new_run(run_id, owner, start)
        trace_run(self.tracing, self.backend, run, start, carrier, reattached=False)
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
        run = self.runs.live.get(msg.run_id)
        if run is not None:
            check_owner(run.owner, owner)
            opening = self._run_started(run.run_id, RunOptions(), True)
            attachment = await reattach_live(run, msg.after_seq, opening)
            log.info("run %s: reattached after seq %d", run.run_id, msg.after_seq)
            return run, attachment
        if msg.run_id in self.runs.starting:
            # Its start is being handled on another stream (this one's client
            # lost the first before run_started): it is here in a moment.
            raise RequestRejected(
                grpc.StatusCode.UNAVAILABLE,
                "RUN_BUSY",
                "reattach.run_id",
                "the run is starting on this server; retry",
            )
        if self.journal is None:
            raise not_found(msg.run_id)
        record = await self.journal.load(msg.run_id)
        if record is None:
            raise not_found(msg.run_id)
        check_owner(record.owner, owner)
        start = await self.starts.parse(pb.StartRun.FromString(record.start))
        opening = self._run_started(msg.run_id, start.options, True)
        if record.status != RUNNING:
            # Ended: what the client missed, then the stream ends.
            events = [journaled_event(seq, data) for seq, data in record.events]
            done = Attachment([opening, *(e for e in events if e.seq > msg.after_seq)])
            done.queue.put_nowait(None)
            return None, done
        if not await self.runs.claim(msg.run_id):
            raise RequestRejected(
                grpc.StatusCode.UNAVAILABLE,
                "RUN_BUSY",
                "reattach.run_id",
                "another replica holds the run and did not release it; retry",
            )
        # The claim may have raced a last write of the previous holder.
        record = await self.journal.load(msg.run_id) or record
        return await self._resume(msg, record, start, opening, carrier)

    async def _resume(
        self,
        msg: pb.ReattachRun,
        record: JournaledRun,
        start: RunStart,
        opening: pb.RunResponse,
        carrier: Carrier = (),
    ) -> tuple[LiveRun, Attachment]:
        """Continue here a journaled run this server now holds."""
        events = [journaled_event(seq, data) for seq, data in record.events]
        transcript = [
            message_from_pb(e.message_appended.message, "journal")
            for e in events
            if e.WhichOneof("kind") == "message_appended"
        ]
        known, approvals = known_answers(record.results)
        if not request_reached(transcript, start.prior):
            # Stopped before its opening messages were all journaled: it
            # starts again (no model turn or tool call happened yet).
            await self._load_session(start, record.owner)
        # No await from here on: the run is live only with its engine.
        run = self._new_run(msg.run_id, record.owner, start)
        trace_run(self.tracing, self.backend, run, start, carrier, reattached=True)
        # Resumed here: what the stream missed is what the journal had.
        attachment = attach_resumed(run, events, msg.after_seq, opening)
        run.early = known
        rlog = run_logger(msg.run_id, start.labels)
        rlog.info(
            "run %s resumed from the journal at seq %d (%d messages, %d results kept)",
            msg.run_id, run.seq, len(transcript), len(known),
        )  # fmt: skip
        run.engine = asyncio.create_task(
            self._engine(run, rlog, start, Resume(transcript, known, approvals))
        )
        return run, attachment

    async def _engine(
        self,
        run: LiveRun,
        rlog: logging.LoggerAdapter[logging.Logger],
        start: RunStart,
        resume: Resume | None = None,
    ) -> None:
        # This task's model calls get spans (the task has its own context).
        MODEL_CALLS.set(run.trace)
        journaled = 0
        if resume is not None and not request_reached(resume.transcript, start.prior):
            journaled, resume = len(resume.transcript), None
        wire = WireMessages()
        events = RunEvents(run, self.metrics, rlog, wire, journaled)
        hooks = events.hooks(approver_for(run, resume))
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
                    hooks=hooks,
                    cancel=run.cancel,
                    run_id=run.run_id,
                )
            else:
                result = await resume_run(
                    start.workflow,
                    resume.transcript,
                    backend=self.backend,
                    executor=run.executor,
                    options=start.options,
                    known_results=resume.known,
                    hooks=hooks,
                    cancel=run.cancel,
                    run_id=run.run_id,
                )
        except asyncio.CancelledError:
            # Stopped without an outcome (LiveRun.stop): the run goes on on
            # another server, from the journal.
            moved = True
            raise
        except ForgeError as exc:
            await run.emit(self._failed(run, rlog, wire, exc))
        except Exception as exc:
            rlog.exception("run %s crashed", run.run_id)
            self.metrics.runs_finished.labels("failed", FailureReason.INTERNAL.value).inc()
            await run.emit(wire.failed(FailureReason.INTERNAL, f"internal error: {exc!r}", None))
        else:
            status = COMPLETED
            await self._completed(run, rlog, wire, start, result)
        finally:
            await self._closed(run, rlog, status, moved)

    def _failed(
        self,
        run: LiveRun,
        rlog: logging.LoggerAdapter[logging.Logger],
        wire: WireMessages,
        exc: ForgeError,
    ) -> pb.RunResponse:
        reason, message = exc.reason, exc.message
        if run.shutting_down and isinstance(exc, WorkflowCancelledError):
            reason = FailureReason.SHUTTING_DOWN
            message = f"the server is shutting down and its drain period ended ({message})"
        elif run.cancel_reason and isinstance(exc, WorkflowCancelledError):
            message = f"{run.cancel_reason} ({message})"
        rlog.info("run %s failed: %s%s", run.run_id, reason.value, self._payload(message))
        self.metrics.runs_finished.labels("failed", reason.value).inc()
        self.metrics.usage(exc.usage)
        return wire.failed(reason, message, exc)

    async def _completed(
        self,
        run: LiveRun,
        rlog: logging.LoggerAdapter[logging.Logger],
        wire: WireMessages,
        start: RunStart,
        result: RunResult,
    ) -> None:
        rlog.info(
            "run %s completed by %s after %d iterations",
            run.run_id, result.terminal_tool, result.iterations,
        )  # fmt: skip
        self.metrics.runs_finished.labels("completed", "").inc()
        self.metrics.usage(result.usage)
        if start.session_id and self.journal is not None:
            # Before the client hears of the end: its next run in the
            # session must find this conversation.
            await self.journal.save_session(
                start.session_id,
                run.owner,
                pb.RunCompleted(transcript=wire.transcript(result.transcript)).SerializeToString(),
                now(),
            )
        await run.emit(wire.completed(result))

    async def _closed(
        self,
        run: LiveRun,
        rlog: logging.LoggerAdapter[logging.Logger],
        status: str,
        moved: bool,
    ) -> None:
        self.runs.forget(run)
        if moved:
            rlog.info("run %s left this server", run.run_id)
            return
        await run.end()
        if self.journal is not None:
            with contextlib.suppress(Exception):
                # Its size counts every event: all committed first.
                await run.durable()
                await self.journal.finish(run.run_id, status, now())
        rlog.info("run %s closed", run.run_id)


def queued_runs(backend: Backend) -> int:
    return backend.queued_runs() if isinstance(backend, QueueReporting) else 0


def _run_mode(backend_mode: str, options: RunOptions) -> str:
    # Disabling constrained decoding turns a constrained backend into prompt mode.
    if backend_mode == "constrained" and not options.constrained_decoding:
        return "prompt"
    return backend_mode


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: RequestRejected) -> None:
    await context.abort(exc.code, exc.message, trailing_metadata=exc.trailing_metadata())
