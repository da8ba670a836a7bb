"""Backend fallback chains: which failures move a call on, and the chain's rules.

The failures come from real servers on loopback (tests/stub_openai.py answers
503, 429, 400, a context overflow, a broken or a slow stream; a closed port
refuses the connection). Only Anthropic, a hosted API, is a MockTransport.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx2
import pytest

from forge_core.backends.base import Backend, ChunkType, StreamChunk, ToolCall
from forge_core.backends.fallback import FallbackBackend
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.backends.native import status_error
from forge_core.backends.openai_compat import OpenAICompatBackend
from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.context import estimate_tokens
from forge_core.errors import (
    BackendError,
    ContextBudgetExceededError,
    WorkflowCancelledError,
    is_retriable,
)
from forge_core.modes import BudgetMode
from tests.stub_openai import BROKEN, CONTEXT, OK, SLOW, StubOpenAI, stub_openai
from tests.unit.native_history import request
from tests.unit.test_backend_anthropic import LOOKUP_CALL, Server, streamed
from tests.unit.test_backend_anthropic import backend as anthropic_backend


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def openai(stub: StubOpenAI, budget: int = 4096, timeout_s: float = 600.0) -> OpenAICompatBackend:
    return OpenAICompatBackend(
        stub.url, model="stub-model", context_budget_tokens=budget, timeout_s=timeout_s
    )


def dead_llama() -> LlamaServerBackend:
    """A llama-server backend whose server is gone: the port refuses connections."""
    return LlamaServerBackend(
        f"http://127.0.0.1:{closed_port()}",
        model="gemma",
        context_budget_tokens=8192,
        slots=1,
        budget_mode=BudgetMode.BACKEND,
        backend_mode="external",
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    yield Clock()


# ── The classifier ─────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("error", "retriable"),
    [
        (BackendError("x", status=503), True),
        (BackendError("x", status=500), True),
        (BackendError("x", status=429), True),
        (BackendError("x", status=408), True),
        (BackendError("x", status=400), False),
        (BackendError("x", status=401), False),
        (BackendError("x", status=404), False),
        (BackendError("x", retriable=True), True),
        # An explicit verdict wins over the status.
        (BackendError("x", retriable=False, status=503), False),
        (BackendError("no script for workflow 'w'"), False),
        (status_error(400, "maximum context length is 4096 tokens", "x"), False),
        (ContextBudgetExceededError("too long"), False),
        (WorkflowCancelledError("preempted"), False),
        (ConnectionRefusedError(), True),
        (TimeoutError(), True),
        (ValueError("a bug"), False),
    ],
)
def test_classifier(error: BaseException, retriable: bool) -> None:
    assert is_retriable(error) is retriable


def test_a_backend_error_caused_by_a_socket_error_is_retriable() -> None:
    try:
        try:
            raise ConnectionResetError("reset by peer")
        except OSError as exc:
            raise BackendError("lost it") from exc
    except BackendError as err:
        assert is_retriable(err)


# ── Real servers, classified ───────────────────────────────────────────────


async def failure(backend: Backend) -> BaseException:
    with pytest.raises(Exception) as caught:
        await backend.complete(request(), None)
    await backend.aclose()
    return caught.value


@pytest.mark.parametrize(("answer", "retriable"), [(503, True), (429, True), (502, True)])
async def test_server_error_answers_are_retriable(answer: int, retriable: bool) -> None:
    with stub_openai([answer]) as stub:
        err = await failure(openai(stub))
    assert isinstance(err, BackendError) and is_retriable(err) is retriable
    assert err.details["status"] == str(answer)


async def test_a_bad_request_and_a_context_overflow_are_not_retriable() -> None:
    with stub_openai([400, CONTEXT]) as stub:
        bad = await failure(openai(stub))
        overflow = await failure(openai(stub))
    assert isinstance(bad, BackendError) and not is_retriable(bad)
    assert isinstance(overflow, ContextBudgetExceededError) and not is_retriable(overflow)


async def test_refused_connections_broken_streams_and_timeouts_are_retriable() -> None:
    refused = await failure(dead_llama())
    assert isinstance(refused, BackendError) and is_retriable(refused)
    with stub_openai([BROKEN]) as stub:
        broken = await failure(openai(stub))
    assert isinstance(broken, BackendError) and is_retriable(broken)
    with stub_openai([SLOW]) as stub:
        slow = await failure(openai(stub, timeout_s=0.3))
    assert isinstance(slow, BackendError) and is_retriable(slow)
    assert "Timeout" in repr(slow.__cause__)


async def test_anthropic_overload_and_connection_failures_are_retriable() -> None:
    overloaded = Server(
        httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error"}})
    )
    err = await failure(anthropic_backend(overloaded))
    assert isinstance(err, BackendError) and is_retriable(err)

    def refuse(req: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=req)

    err = await failure(anthropic_backend(Server(refuse)))
    assert isinstance(err, BackendError) and is_retriable(err)
    rejected = Server(
        httpx2.Response(400, json={"type": "error", "error": {"type": "invalid_request_error"}})
    )
    err = await failure(anthropic_backend(rejected))
    assert isinstance(err, BackendError) and not is_retriable(err)


# ── The chain ──────────────────────────────────────────────────────────────


async def test_a_retriable_failure_moves_the_same_call_to_the_next_backend() -> None:
    with stub_openai([OK]) as stub:
        chain = FallbackBackend([dead_llama(), openai(stub)])
        reply = await chain.complete(request(), None)
        await chain.aclose()
    assert reply.response == [ToolCall("lookup", {})]
    assert reply.usage.backend == "openai"
    llama, remote = chain.health()
    assert (llama.name, llama.calls, llama.failures, llama.consecutive_failures) == (
        "llama-server",
        1,
        1,
        1,
    )
    assert "refused" in llama.last_error.lower() or "connect" in llama.last_error.lower()
    assert (remote.calls, remote.failures, remote.last_error) == (1, 0, "")


async def test_503_then_429_then_success_on_the_first_backend() -> None:
    second = ScriptedBackend(scripts={"*": [call("lookup"), call("lookup")]})
    with stub_openai([503, 429, OK]) as stub:
        chain = FallbackBackend([openai(stub), second], failure_threshold=3)
        served = [(await chain.complete(request(), None)).usage.backend for _ in range(3)]
        await chain.aclose()
    assert served == ["scripted", "scripted", "openai"]
    first = chain.health()[0]
    assert (first.calls, first.failures, first.consecutive_failures) == (3, 2, 0)
    assert "429" in first.last_error


async def test_non_retriable_failures_are_raised_without_trying_the_next(clock: Clock) -> None:
    second = ScriptedBackend(scripts={"*": [call("lookup")]})
    with stub_openai([400, CONTEXT]) as stub:
        chain = FallbackBackend([openai(stub), second], clock=clock)
        with pytest.raises(BackendError) as bad:
            await chain.complete(request(), None)
        with pytest.raises(ContextBudgetExceededError):
            await chain.complete(request(), None)
        await chain.aclose()
    assert bad.value.details["status"] == "400"
    assert list(second.requests) == []
    # The server answered: it is not counted towards a cooldown.
    assert chain.health()[0].consecutive_failures == 0
    assert chain.health()[0].available


async def test_repeated_failures_cool_a_backend_down(clock: Clock) -> None:
    second = ScriptedBackend(scripts={"*": [call("lookup")] * 10})
    with stub_openai([503]) as stub:
        chain = FallbackBackend(
            [openai(stub), second], failure_threshold=2, cooldown_s=30, clock=clock
        )
        for _ in range(2):
            await chain.complete(request(), None)
        assert len(stub.requests) == 2
        health = chain.health()[0]
        assert (health.available, health.cooldown_remaining_s) == (False, 30.0)
        # Cooling: skipped, not even asked.
        await chain.complete(request(), None)
        assert len(stub.requests) == 2
        clock.now += 10
        assert chain.health()[0].cooldown_remaining_s == 20.0
        # The cooldown is over: tried again; still failing, it cools again.
        clock.now += 21
        reply = await chain.complete(request(), None)
        assert len(stub.requests) == 3
        assert reply.usage.backend == "scripted"
        assert not chain.health()[0].available
        await chain.aclose()


async def test_a_success_ends_the_run_of_failures(clock: Clock) -> None:
    second = ScriptedBackend(scripts={"*": [call("lookup")] * 10})
    with stub_openai([503, OK, 503, 503]) as stub:
        chain = FallbackBackend([openai(stub), second], failure_threshold=2, clock=clock)
        for _ in range(3):
            await chain.complete(request(), None)
        # 503, ok, 503: never two in a row.
        assert chain.health()[0].available
        assert chain.health()[0].consecutive_failures == 1
        await chain.aclose()


async def test_when_every_backend_cools_they_are_all_tried_anyway(clock: Clock) -> None:
    with stub_openai([503]) as a, stub_openai([429, 429, OK]) as b:
        chain = FallbackBackend([openai(a), openai(b)], failure_threshold=1, clock=clock)
        with pytest.raises(BackendError, match="every backend of the chain failed") as failed:
            await chain.complete(request(), None)
        assert failed.value.details["backends"] == "openai,openai"
        assert [h.available for h in chain.health()] == [False, False]
        with pytest.raises(BackendError):
            await chain.complete(request(), None)
        assert (len(a.requests), len(b.requests)) == (2, 2)
        reply = await chain.complete(request(), None)
        assert (len(a.requests), len(b.requests)) == (3, 3)
        await chain.aclose()
    assert reply.response == [ToolCall("lookup", {})]


async def test_output_streamed_by_a_failed_backend_is_voided_with_a_retry_chunk() -> None:
    chunks: list[StreamChunk] = []

    async def sink(chunk: StreamChunk) -> None:
        chunks.append(chunk)

    with stub_openai([BROKEN]) as a, stub_openai([OK]) as b:
        chain = FallbackBackend([openai(a), openai(b)])
        await chain.complete(request(), sink)
        await chain.aclose()
    kinds = [c.type for c in chunks]
    # The first backend's own retry, then the chain's before the second one.
    assert kinds == [
        ChunkType.TEXT_DELTA,
        ChunkType.RETRY,
        ChunkType.TEXT_DELTA,
        ChunkType.RETRY,
        ChunkType.TOOL_CALL_DELTA,
        ChunkType.TOOL_CALL_DELTA,
        ChunkType.FINAL,
    ]


async def test_no_retry_chunk_when_the_failed_backend_streamed_nothing() -> None:
    chunks: list[StreamChunk] = []

    async def sink(chunk: StreamChunk) -> None:
        chunks.append(chunk)

    with stub_openai([503]) as a, stub_openai([OK]) as b:
        chain = FallbackBackend([openai(a), openai(b)])
        await chain.complete(request(), sink)
        await chain.aclose()
    assert ChunkType.RETRY not in [c.type for c in chunks]


async def test_anthropic_overloaded_falls_back_to_the_next() -> None:
    overloaded = Server(
        httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error"}})
    )
    with stub_openai([OK]) as stub:
        chain = FallbackBackend([anthropic_backend(overloaded), openai(stub)])
        reply = await chain.complete(request(), None)
        await chain.aclose()
    assert reply.usage.backend == "openai"
    assert [h.failures for h in chain.health()] == [1, 0]


async def test_anthropic_serves_after_a_dead_llama_server() -> None:
    chain = FallbackBackend([dead_llama(), anthropic_backend(Server(streamed(*LOOKUP_CALL)))])
    reply = await chain.complete(request(), None)
    await chain.aclose()
    assert reply.usage.backend == "anthropic"
    assert reply.response == [ToolCall("lookup", {"id": "7"})]


async def test_info_is_the_first_backends_with_the_smallest_budget() -> None:
    with stub_openai([OK]) as stub:
        chain = FallbackBackend([dead_llama(), openai(stub, budget=4096)])
        info = chain.info()
        assert (info.name, info.model, info.context_budget_tokens) == (
            "llama-server",
            "gemma",
            4096,
        )
        assert "openai" in info.budget_source
        assert chain.chain == ["llama-server", "openai"]
        bigger = FallbackBackend([openai(stub, budget=4096), dead_llama()])
        assert bigger.info() is bigger.members[0].backend.info()
        await chain.aclose()
        await bigger.aclose()


async def test_token_counts_fall_back_to_the_estimate_when_the_counter_is_down() -> None:
    with stub_openai([OK]) as stub:
        chain = FallbackBackend([dead_llama(), openai(stub)])
        req = request()
        assert await chain.count_tokens(req) == estimate_tokens(req.messages)
        await chain.aclose()
