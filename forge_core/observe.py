"""Watching a run's model calls from outside the engine (tracing).

The engine knows when a model call starts and what came back; a server
that traces runs wants a span around each. It sets `MODEL_CALLS` in the
task that runs the loop (asyncio tasks copy their context, so every run has
its own); the loop reports each call to it. Unset (the default) costs one
ContextVar lookup per model call: nothing is built.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from forge_core.backends.base import BackendReply, ChatRequest

T = TypeVar("T")


class ModelCall(Protocol):
    def done(self, reply: BackendReply) -> None: ...

    def failed(self, error: BaseException) -> None: ...


class ModelCallObserver(Protocol):
    def model_call(self, iteration: int, request: ChatRequest) -> ModelCall:
        """A model call of `iteration` starts with `request`."""


MODEL_CALLS: ContextVar[ModelCallObserver | None] = ContextVar("forge_model_calls", default=None)


async def observed(
    observer: ModelCallObserver, iteration: int, request: ChatRequest, work: Awaitable[BackendReply]
) -> BackendReply:
    """`work` (the backend's answer to `request`), reported to `observer`."""
    call = observer.model_call(iteration, request)
    try:
        reply = await work
    except BaseException as exc:
        call.failed(exc)
        raise
    call.done(reply)
    return reply
