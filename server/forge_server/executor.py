"""Tool execution by the client: calls go down the stream, results come back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from forge.v1 import forge_service_pb2 as pb
from forge_core.messages import ToolCallInfo
from forge_core.tool_execution import Approval, ToolErrorKind, ToolOutcome
from forge_server.answer_keys import AnswerKey
from forge_server.convert import tool_call_to_pb


class Timer(Protocol):
    def cancel(self) -> None: ...


# asyncio's loop.call_later, or a test's hand-driven clock.
CallLater = Callable[[float, Callable[[], None]], Timer]


class StreamToolExecutor:
    """Sends one ToolCallRequest per call and waits for the matching ToolResult.

    The calls of a batch are all sent before any result is awaited, so the
    client can run them concurrently and answer in any order.
    """

    def __init__(
        self,
        send: Callable[[pb.RunResponse], Awaitable[None]],
        timeout_s: float,
        call_later: CallLater | None = None,
        on_round_trip: Callable[[float], None] | None = None,
    ) -> None:
        self._send = send
        # Seconds from sending a call to its result (metrics).
        self._on_round_trip = on_round_trip
        self._timeout_s = timeout_s
        # None: the running loop's; tests pass a clock they advance by hand.
        self._call_later = call_later
        self._pending: dict[str, asyncio.Future[ToolOutcome]] = {}
        self._approvals: dict[str, asyncio.Future[Approval]] = {}
        # Calls the server stopped waiting for (timed out, cancelled): a result
        # arriving later is expected, not a protocol error.
        self._abandoned: set[str] = set()
        # Calls (and approvals) already answered: an answer sent again after
        # a reattach is ignored, not an error.
        self._answered: set[AnswerKey] = set()
        # Told each call's and approval's first answer (tracing.RunTrace).
        self.on_answer: Callable[[pb.ToolResult | pb.ApprovalDecision], None] | None = None

    def on_round_trip(self, observe: Callable[[float], None]) -> None:
        self._on_round_trip = observe

    def waiting(self) -> list[AnswerKey]:
        """The answers still awaited: results of calls, decisions on approvals."""
        calls = [AnswerKey(c) for c, f in self._pending.items() if not f.done()]
        return calls + [AnswerKey.decision(c) for c, f in self._approvals.items() if not f.done()]

    def knows(self, call_id: str) -> bool:
        """Whether `call_id` is a call this run sent (answered or not)."""
        return (
            call_id in self._pending
            or AnswerKey(call_id) in self._answered
            or call_id in self._abandoned
        )

    def answered(self, call_id: str) -> bool:
        """Whether the result of `call_id` has arrived."""
        return AnswerKey(call_id) in self._answered

    def knows_approval(self, call_id: str) -> bool:
        key = AnswerKey.decision(call_id)
        return call_id in self._approvals or key in self._answered or call_id in self._abandoned

    def resolve(self, result: pb.ToolResult) -> bool:
        """Deliver a client's result; False when the call id was never issued."""
        future = self._pending.get(result.call_id)
        if future is not None and future.cancelled():
            return True  # the run stopped waiting; its cleanup is on its way
        if future is None or future.done():
            return result.call_id in self._abandoned or AnswerKey(result.call_id) in self._answered
        future.set_result(outcome_of(result))
        self._answered.add(AnswerKey(result.call_id))
        if self.on_answer is not None:
            self.on_answer(result)
        return True

    def decide(self, decision: pb.ApprovalDecision) -> bool:
        """Deliver a client's approval decision; False when the server asked
        for none with that call id (or no longer waits for it)."""
        future = self._approvals.get(decision.call_id)
        if future is not None and future.cancelled():
            return True
        if future is None or future.done():
            key = AnswerKey.decision(decision.call_id)
            return decision.call_id in self._abandoned or key in self._answered
        future.set_result(Approval(decision.approved, decision.reason))
        self._answered.add(AnswerKey.decision(decision.call_id))
        if self.on_answer is not None:
            self.on_answer(decision)
        return True

    async def approve(self, call: ToolCallInfo, iteration: int) -> Approval:
        """Ask the client whether `call` may run (an approval_request event)
        and wait for its decision as long as for a tool result."""
        future: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        self._approvals[call.call_id] = future
        try:
            await self._send(
                pb.RunResponse(
                    approval_request=pb.ApprovalRequest(
                        call_id=call.call_id,
                        tool_name=call.name,
                        arguments_json=call.arguments_json(),
                        iteration=iteration,
                    )
                )
            )
            timer = self._expire_after(call.call_id, future)
            try:
                return await future
            finally:
                timer.cancel()
        except TimeoutError:
            return Approval(False, f"no decision within {self._timeout_s:g}s")
        finally:
            self._approvals.pop(call.call_id, None)
            # Timed out or cancelled: a decision arriving later is no error.
            self._abandoned.add(call.call_id)

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        loop = asyncio.get_running_loop()
        futures = {c.call_id: loop.create_future() for c in calls}
        self._pending.update(futures)
        try:
            for call in calls:
                await self._send(pb.RunResponse(tool_call=tool_call_to_pb(call, iteration)))
            if len(calls) == 1:
                # The common case, without gather's task per call.
                return [await self._wait(calls[0], futures[calls[0].call_id])]
            return list(await asyncio.gather(*(self._wait(c, futures[c.call_id]) for c in calls)))
        finally:
            for call_id, future in futures.items():
                self._pending.pop(call_id, None)
                if future.cancelled() or not future.done():
                    self._abandoned.add(call_id)
                    future.cancel()
                    await self._cancelled(call_id, "the run stopped waiting for this call")

    def _expire_after(self, call_id: str, future: asyncio.Future[Any]) -> Timer:
        def expire() -> None:
            # One step, no await: from this instant the call is abandoned, so a
            # result already on its way is ignored instead of being refused
            # as an unknown call id.
            if not future.done():
                self._abandoned.add(call_id)
                future.set_exception(TimeoutError())

        call_later = self._call_later or asyncio.get_running_loop().call_later
        return call_later(self._timeout_s, expire)

    async def _wait(self, call: ToolCallInfo, future: asyncio.Future[ToolOutcome]) -> ToolOutcome:
        timer = self._expire_after(call.call_id, future)
        sent = asyncio.get_running_loop().time()
        try:
            outcome = await future
            if self._on_round_trip is not None:
                self._on_round_trip(asyncio.get_running_loop().time() - sent)
            return outcome
        except TimeoutError:
            await self._cancelled(call.call_id, f"no result within {self._timeout_s:g}s")
            # The client may have run the tool and lost only the answer:
            # whether it took effect is unknown, which is UNREACHABLE (a
            # read-only or idempotent tool is then tried once more).
            return ToolOutcome(
                error=f"the client sent no result for {call.name!r} within {self._timeout_s:g}s",
                error_kind=ToolErrorKind.UNREACHABLE,
            )
        finally:
            timer.cancel()

    async def _cancelled(self, call_id: str, reason: str) -> None:
        # Best effort: the stream may already be closing.
        # Bounded: while a run is torn down nobody may be draining the outbox.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self._send(
                    pb.RunResponse(
                        tool_call_cancelled=pb.ToolCallCancelled(call_id=call_id, reason=reason)
                    )
                ),
                timeout=1.0,
            )


_KNOWN_ERROR_KINDS = frozenset(pb.ToolErrorKind.values())


def invalid_result(result: pb.ToolResult) -> str:
    """The field of `result` the server cannot interpret, or "" when none."""
    if result.WhichOneof("outcome") == "error" and result.error.kind not in _KNOWN_ERROR_KINDS:
        return "tool_result.error.kind"
    return ""


_ERROR_KINDS = {
    pb.TOOL_ERROR_KIND_RESOLUTION: ToolErrorKind.RESOLUTION,
    pb.TOOL_ERROR_KIND_UNREACHABLE: ToolErrorKind.UNREACHABLE,
}


def outcome_of(result: pb.ToolResult) -> ToolOutcome:
    if result.WhichOneof("outcome") == "error":
        kind = _ERROR_KINDS.get(result.error.kind, ToolErrorKind.HARD)
        prefix = f"{result.error.type}: " if result.error.type else ""
        return ToolOutcome(error=prefix + result.error.message, error_kind=kind)
    return ToolOutcome(output=result.output)
