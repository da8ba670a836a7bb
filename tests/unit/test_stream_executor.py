"""Unit tests for StreamToolExecutor: tool calls go down the run stream as
ToolCallRequests and the client's ToolResults come back in any order."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable

import forge.v1.forge_service_pb2 as pb
from forge_core.guardrails.coercion import Coercion
from forge_core.loop import ToolErrorKind, ToolOutcome
from forge_core.messages import ToolCallInfo
from forge_server.executor import StreamToolExecutor


class Sink:
    """Captures what the executor sends down the stream."""

    def __init__(self) -> None:
        self.sent: list[pb.RunResponse] = []

    async def send(self, response: pb.RunResponse) -> None:
        self.sent.append(response)

    @property
    def requests(self) -> list[pb.ToolCallRequest]:
        return [r.tool_call for r in self.sent]


async def sent_count(sink: Sink, n: int) -> None:
    """Let the executor run until `n` requests are out (fails if it never gets there)."""
    for _ in range(100):
        if len(sink.sent) >= n:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"only {len(sink.sent)} of {n} requests were sent")


def ok(call_id: str, output: str) -> pb.ToolResult:
    return pb.ToolResult(call_id=call_id, output=output)


def failed(call_id: str, message: str, kind: int, type_: str = "") -> pb.ToolResult:
    return pb.ToolResult(
        call_id=call_id,
        error=pb.ToolError(message=message, kind=kind, type=type_),  # type: ignore[arg-type]
    )


CALLS = [
    ToolCallInfo("call_1", "fetch", {"id": "1"}),
    ToolCallInfo("call_2", "fetch", {"id": "2"}),
    ToolCallInfo("call_3", "ping", {}),
]


async def test_sends_every_call_before_awaiting_any_result() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS, iteration=4))
    await sent_count(sink, 3)
    # Nothing has been answered yet, yet the whole batch is out.
    assert not task.done()
    assert all(r.WhichOneof("kind") == "tool_call" for r in sink.sent)
    reqs = sink.requests
    assert [(r.call_id, r.tool_name) for r in reqs] == [
        ("call_1", "fetch"),
        ("call_2", "fetch"),
        ("call_3", "ping"),
    ]
    assert [json.loads(r.arguments_json) for r in reqs] == [{"id": "1"}, {"id": "2"}, {}]
    assert {r.iteration for r in reqs} == {4}
    assert all(len(r.coercions) == 0 for r in reqs)

    for c in CALLS:
        assert executor.resolve(ok(c.call_id, c.call_id.upper()))
    assert await asyncio.wait_for(task, 1) == [
        ToolOutcome(output="CALL_1"),
        ToolOutcome(output="CALL_2"),
        ToolOutcome(output="CALL_3"),
    ]


async def test_outcomes_come_back_in_call_order_when_resolved_out_of_order() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS, iteration=1))
    await sent_count(sink, 3)
    assert executor.resolve(ok("call_3", "three"))
    await asyncio.sleep(0)
    assert executor.resolve(ok("call_1", "one"))
    await asyncio.sleep(0)
    assert not task.done()
    assert executor.resolve(ok("call_2", "two"))
    outcomes = await asyncio.wait_for(task, 1)
    assert [o.output for o in outcomes] == ["one", "two", "three"]
    assert all(o.ok for o in outcomes)


async def test_resolve_unknown_call_id_is_false() -> None:
    executor = StreamToolExecutor(Sink().send, timeout_s=5)
    assert executor.resolve(ok("call_99", "x")) is False


async def test_a_second_result_for_an_answered_call_is_ignored() -> None:
    """Results count once per call id: a client that reattached sends again
    what it is not sure arrived, and that is not a protocol error."""
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS[:1], iteration=1))
    await sent_count(sink, 1)
    assert executor.resolve(ok("call_1", "one"))
    assert executor.resolve(ok("call_1", "again"))
    assert await asyncio.wait_for(task, 1) == [ToolOutcome(output="one")]
    assert executor.knows("call_1") and not executor.knows("call_2")


async def test_unanswered_call_times_out_as_unreachable() -> None:
    """The client may have run the tool and lost only its answer: the
    outcome is unknown (UNREACHABLE), not a failure the tool reported."""
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=0.05)
    task = asyncio.create_task(executor.execute(CALLS[:2], iteration=1))
    await sent_count(sink, 2)
    assert executor.resolve(ok("call_1", "one"))
    first, second = await asyncio.wait_for(task, 1)
    assert first == ToolOutcome(output="one")
    assert not second.ok
    assert second.error_kind is ToolErrorKind.UNREACHABLE
    assert second.error is not None
    assert "'fetch'" in second.error
    assert "0.05s" in second.error
    assert "no result" in second.error

    # The client answers late: expected, ignored, not a protocol error.
    assert executor.resolve(ok("call_2", "late")) is True
    # An id that was never issued still is one.
    assert executor.resolve(ok("call_3", "??")) is False


async def test_late_result_while_the_batch_is_still_waiting() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=0.05)
    slow = ToolCallInfo("call_9", "slow", {})
    first = asyncio.create_task(executor.execute(CALLS[:1], iteration=1))
    await sent_count(sink, 1)
    assert (await asyncio.wait_for(first, 1))[0].error_kind is ToolErrorKind.UNREACHABLE
    second = asyncio.create_task(executor.execute([slow], iteration=2))
    # call_1's request, its tool_call_cancelled notice, then call_9's request.
    await sent_count(sink, 3)
    assert sink.sent[1].WhichOneof("kind") == "tool_call_cancelled"
    assert sink.sent[1].tool_call_cancelled.call_id == "call_1"
    assert executor.resolve(ok("call_1", "late")) is True
    assert executor.resolve(ok("call_9", "fine")) is True
    assert await asyncio.wait_for(second, 1) == [ToolOutcome(output="fine")]


async def test_cancelled_batch_abandons_its_calls() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS[:1], iteration=1))
    await sent_count(sink, 1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert executor.resolve(ok("call_1", "late")) is True
    # The client was told to stop the tool.
    notices = [m for m in sink.sent if m.WhichOneof("kind") == "tool_call_cancelled"]
    assert [n.tool_call_cancelled.call_id for n in notices] == ["call_1"]


async def test_error_results_map_kind_and_prefix_the_type() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS, iteration=1))
    await sent_count(sink, 3)
    executor.resolve(failed("call_1", "no such city", pb.TOOL_ERROR_KIND_RESOLUTION, "LookupError"))
    executor.resolve(failed("call_2", "disk full", pb.TOOL_ERROR_KIND_HARD, "OSError"))
    executor.resolve(failed("call_3", "oops", pb.TOOL_ERROR_KIND_UNSPECIFIED))
    resolution, hard, unspecified = await asyncio.wait_for(task, 1)

    assert resolution == ToolOutcome(
        error="LookupError: no such city", error_kind=ToolErrorKind.RESOLUTION
    )
    assert hard == ToolOutcome(error="OSError: disk full", error_kind=ToolErrorKind.HARD)
    # No type: no prefix; an unspecified kind counts as a hard error.
    assert unspecified == ToolOutcome(error="oops", error_kind=ToolErrorKind.HARD)
    assert not any(o.ok for o in (resolution, hard, unspecified))


async def test_empty_output_is_a_success() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS[:1], iteration=1))
    await sent_count(sink, 1)
    executor.resolve(pb.ToolResult(call_id="call_1"))
    (outcome,) = await asyncio.wait_for(task, 1)
    assert outcome.ok
    assert outcome.output == ""


async def test_coercions_are_sent_json_encoded() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    coerced = ToolCallInfo(
        "call_1",
        "page",
        {"n": 3, "ids": [5], "label": "7", "flag": True, "gone": None},
        coercions=(
            Coercion("/n", "3", 3),
            Coercion("/ids", 5, [5]),
            Coercion("/label", 7, "7"),
            Coercion("/flag", "true", True),
            Coercion("/gone", "null", None),
        ),
    )
    task = asyncio.create_task(executor.execute([coerced], iteration=2))
    await sent_count(sink, 1)
    (req,) = sink.requests
    assert json.loads(req.arguments_json) == coerced.args
    assert [(c.path, c.original_json, c.coerced_json) for c in req.coercions] == [
        ("/n", '"3"', "3"),
        ("/ids", "5", "[5]"),
        ("/label", "7", '"7"'),
        ("/flag", '"true"', "true"),
        ("/gone", '"null"', "null"),
    ]
    for c, sent in zip(coerced.coercions, req.coercions, strict=True):
        assert json.loads(sent.original_json) == c.original
        assert json.loads(sent.coerced_json) == c.coerced
    executor.resolve(ok("call_1", "done"))
    await asyncio.wait_for(task, 1)


class HandClock:
    """A call_later whose timers fire only when the test says so: the
    interleavings of issue 22 are driven step by step, with no sleeps."""

    def __init__(self) -> None:
        self.timers: list[HandTimer] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> HandTimer:
        timer = HandTimer(callback)
        self.timers.append(timer)
        return timer

    async def armed(self, n: int) -> None:
        """Let the executor run until `n` timers are set."""
        for _ in range(100):
            if len(self.timers) >= n:
                return
            await asyncio.sleep(0)
        raise AssertionError(f"only {len(self.timers)} of {n} timers were set")

    def fire(self) -> None:
        for timer in self.timers:
            if not timer.cancelled:
                timer.cancelled = True
                timer.callback()


class HandTimer:
    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


async def test_a_result_arriving_as_its_call_times_out_is_ignored_not_refused() -> None:
    sink, clock = Sink(), HandClock()
    executor = StreamToolExecutor(sink.send, timeout_s=5, call_later=clock.call_later)
    task = asyncio.create_task(executor.execute(CALLS[:1], iteration=1))
    await clock.armed(1)
    # The timeout fires and, before the waiting task resumes, the client's
    # result arrives: the window in which the old executor answered
    # UNKNOWN_CALL_ID (its call was not yet recorded as abandoned).
    clock.fire()
    assert executor.resolve(ok("call_1", "late")) is True
    [outcome] = await task
    assert outcome.error_kind is ToolErrorKind.UNREACHABLE
    assert "within 5s" in (outcome.error or "")
    assert sink.sent[-1].tool_call_cancelled.call_id == "call_1"
    # And after the cancellation went out, still ignored.
    assert executor.resolve(ok("call_1", "later still")) is True


async def test_a_result_before_the_timeout_cancels_the_timer() -> None:
    sink, clock = Sink(), HandClock()
    executor = StreamToolExecutor(sink.send, timeout_s=5, call_later=clock.call_later)
    task = asyncio.create_task(executor.execute(CALLS[:1], iteration=1))
    await clock.armed(1)
    assert executor.resolve(ok("call_1", "in time")) is True
    clock.fire()  # too late to matter
    [outcome] = await task
    assert outcome == ToolOutcome(output="in time")
    assert all(t.cancelled for t in clock.timers)
    assert [r.WhichOneof("kind") for r in sink.sent] == ["tool_call"]


async def test_a_result_arriving_as_the_run_is_cancelled_is_ignored_not_refused() -> None:
    sink = Sink()
    executor = StreamToolExecutor(sink.send, timeout_s=5)
    task = asyncio.create_task(executor.execute(CALLS[:2], iteration=1))
    await sent_count(sink, 2)
    task.cancel()
    # Cancelling marks the awaited futures cancelled at once; the executor's
    # cleanup has not run yet.
    assert executor.resolve(ok("call_1", "late")) is True
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert executor.resolve(ok("call_2", "later")) is True
    assert executor.resolve(ok("call_9", "never issued")) is False


async def test_a_decision_arriving_as_its_approval_times_out_is_ignored_not_refused() -> None:
    sink, clock = Sink(), HandClock()
    executor = StreamToolExecutor(sink.send, timeout_s=5, call_later=clock.call_later)
    task = asyncio.create_task(executor.approve(CALLS[0], iteration=1))
    await clock.armed(1)
    clock.fire()
    assert executor.decide(pb.ApprovalDecision(call_id="call_1", approved=True)) is True
    approval = await task
    assert approval.approved is False
    assert "no decision within 5s" in approval.reason
