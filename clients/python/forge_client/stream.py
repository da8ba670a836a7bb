"""One run's stream: events in, tool results and approvals out, reattach
when the stream breaks and the server keeps the run."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import inspect
import json
import logging
import random
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

import grpc
import pydantic

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge_client.convert import message_from_pb, usage_from_pb
from forge_client.errors import (
    ConnectionLostError,
    ServerUnreachableError,
    ToolResolutionError,
    ToolUnreachableError,
    rejected_error,
    rpc_error,
    run_failed,
)
from forge_client.events import (
    NO_APPROVER,
    Approval,
    ApprovalDecided,
    ApprovalRequested,
    Approver,
    Coercion,
    Event,
    MessageAppended,
    Reattached,
    RunCompleted,
    RunResult,
    ToolCallCancelled,
    ToolCallFinished,
    ToolCallStarted,
    event_from_pb,
)
from forge_client.messages import Message, Role
from forge_client.tools import ToolCallContext, encode_output, set_current_tool_call
from forge_client.tracing import invoke
from forge_client.workflow import Workflow

log = logging.getLogger(__name__)

# How long a client that has never had an answer from its server tries to
# reach it before ServerUnreachableError (ForgeClient(connect_timeout_s=...)).
CONNECT_TIMEOUT_S = 5.0

Call = grpc.aio.StreamStreamCall[pb.RunRequest, pb.RunResponse]

# Reattach backoff: 50 ms doubling up to 2 s, each delay jittered.
REATTACH_BACKOFF_S = 0.05
REATTACH_BACKOFF_MAX_S = 2.0
# How long a stream that broke before run_started keeps trying (the server's
# grace is not known yet).
PRESTART_REATTACH_S = 30.0
# A reattach answered with these reasons cannot succeed later.
_FINAL_REASONS = frozenset({"RUN_NOT_FOUND", "NOT_RUN_OWNER"})


class ServerLink:
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
        link: ServerLink | None = None,
    ) -> None:
        self._call: Call | None = call
        self._link = link or ServerLink("the server", CONNECT_TIMEOUT_S)
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
        self.deliver_events = True
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
                exc.code(), exc.details() or "", exc.trailing_metadata(), rpc_error(exc)
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
            raise self._broken(code, details, trailers, rejected_error(code, details, trailers))
        assert isinstance(response, pb.RunResponse)
        return response

    def _broken(
        self, code: grpc.StatusCode, details: str, trailers: Any, error: Exception
    ) -> Exception:
        """What a stream that ended with `code` raises: _Broken when a reattach
        may mend it, else `error` (the SDK's error without reattach), or
        ConnectionLostError when a reattach gave up."""
        reason = rejected_error(code, details, trailers).reason
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
                    reason = rejected_error(
                        exc.code(), exc.details() or "", exc.trailing_metadata()
                    )
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
            await self._send_start()
            while True:
                if self._local:
                    for local in self._take_local():
                        yield local
                response = await self._next_response()
                if response is None:
                    continue
                # Tasks queue their event before sending what the server
                # answers, so this keeps them ahead of that answer.
                if self._local:
                    for local in self._take_local():
                        yield local
                kind = response.WhichOneof("kind")
                if kind == "tool_call":
                    event: Event | None = await self._on_tool_call(response)
                elif kind == "approval_request":
                    event = await self._on_approval_request(response)
                else:
                    event = self._on_event(response, kind)
                if event is not None:
                    yield event
                if self.result is not None:
                    # run_completed: the tools' last events, then the result's.
                    for local in self._take_local():
                        yield local
                    yield RunCompleted(self.result)
                    return
        finally:
            await self.aclose()

    async def _send_start(self) -> None:
        try:
            await self._write(pb.RunRequest(start=self._start))
        except grpc.aio.AioRpcError as exc:
            # The connection failed under the start: with a run id of its
            # own the reader reattaches (or starts again), as for any
            # break before run_started.
            if not self._can_reattach():
                raise rpc_error(exc) from exc
            log.debug("writing the start failed", exc_info=True)

    async def _next_response(self) -> pb.RunResponse | None:
        """The next event from the server, one by one out of a batch; None
        after a reattach or a batch was taken in."""
        if self._batched:
            return self._batched.popleft()
        try:
            response = await self._read()
        except _Broken as broken:
            await self._reconnect(broken)
            return None
        if response.WhichOneof("kind") == "batch":
            self._batched.extend(response.batch.events)
            return None
        return response

    async def _on_tool_call(self, response: pb.RunResponse) -> ToolCallStarted | None:
        # Sent again after a reattach while it waits for its answer:
        # deduplicated by call id, not seq.
        self._last_seq = max(self._last_seq, response.seq)
        request = response.tool_call
        self._asked.add(request.call_id)
        answer = self._answers.get(request.call_id)
        if answer is not None:
            await self._send(answer, request.call_id)
        elif request.call_id not in self._calls_seen:
            self._calls_seen.add(request.call_id)
            return self._dispatch(request)
        return None

    async def _on_approval_request(self, response: pb.RunResponse) -> ApprovalRequested | None:
        self._last_seq = max(self._last_seq, response.seq)
        asked = response.approval_request
        self._asked.add("approval:" + asked.call_id)
        decision = self._decisions.get(asked.call_id)
        if decision is not None:
            await self._send(decision, "approval:" + asked.call_id)
        elif asked.call_id not in self._approvals_seen:
            self._approvals_seen.add(asked.call_id)
            return self._ask(asked)
        return None

    def _on_event(self, response: pb.RunResponse, kind: str | None) -> Event | None:
        """Every other event: dropped when handled before the stream broke;
        run_completed sets `result`, run_failed raises."""
        seq = response.seq
        if kind == "run_started":
            self._started = True
            self._link.reached = True
            if response.run_started.reattached:
                return self._on_reattached(response.run_started)
        if seq and seq <= self._last_seq:
            return None  # handled before the stream broke
        self._last_seq = max(self._last_seq, seq)
        if kind == "run_started":
            self.run_id = response.run_started.run_id
            self._grace_s = response.run_started.reattach_grace_s
        elif kind == "message_appended":
            m = response.message_appended
            if not self.deliver_events:
                self._streamed.append(m.message)
                return None
            message = message_from_pb(m.message)
            self._streamed.append(message)
            return MessageAppended(message, m.index)
        elif kind == "tool_call_cancelled":
            gone = response.tool_call_cancelled
            task = self._tasks_by_call.pop(gone.call_id, None)
            if task is not None:
                task.cancel()
            return ToolCallCancelled(
                gone.call_id, gone.reason, self._tool_names.get(gone.call_id, "")
            )
        elif kind == "run_completed":
            self._finished = True
            self.result = self._result(response.run_completed)
            return None
        elif kind == "run_failed":
            self._finished = True
            raise run_failed(response.run_failed, self._streamed_transcript())
        return event_from_pb(response, kind)

    def _on_reattached(self, started: pb.RunStarted) -> Reattached:
        self._grace_s = started.reattach_grace_s or self._grace_s
        attempts, self._deadline = self._attempts, None
        log.info("run %s: reattached after seq %d", self.run_id or self._start_id, self._after_seq)
        return Reattached(self.run_id, self._after_seq, attempts)

    def _result(self, done: pb.RunCompleted) -> RunResult:
        return RunResult(
            terminal_tool=done.terminal_tool,
            value=self._values.get(done.terminal_call_id, done.result),
            output=done.result,
            iterations=done.iterations,
            usage=usage_from_pb(done.usage),
            transcript=(
                self._streamed_transcript() if done.transcript_omitted else _with_result(done)
            ),
            run_id=self.run_id,
        )

    def _dispatch(self, request: pb.ToolCallRequest) -> ToolCallStarted | None:
        """Start the call's task; its ToolCallStarted (None when nobody reads
        events: the arguments are then parsed only by the tool)."""
        call_id = request.call_id
        self._tool_names[call_id] = request.tool_name
        task = asyncio.create_task(self._run_tool(request))
        self._tool_tasks.add(task)
        self._tasks_by_call[call_id] = task
        if not self.deliver_events:
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
            set_current_tool_call(
                ToolCallContext(request.call_id, request.tool_name, self.run_id, request.iteration)
            )
            value = await invoke(tool, request)
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
        if self.deliver_events:
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
