"""A chain of backends tried in order: the next one answers when one fails.

A model call goes to the first backend of the chain that is not cooling down.
When it fails with a retriable error (errors.is_retriable: unreachable, timed
out, 5xx, 429, a managed llama-server that died) the same call goes to the
next one; any other failure (a 4xx about the request, a conversation that
does not fit the context, a cancelled run) is the run's failure at once,
since the next backend would only refuse the same request.

A backend that failed `failure_threshold` retriable calls in a row cools down
for `cooldown_s`: calls skip it until then, so a dead server costs one
connection attempt per call at most a few times, not on every call. When
every backend is cooling down, they are all tried anyway, in order: a call is
never refused without asking anyone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import httpx

from forge_core.backends.base import (
    Backend,
    BackendInfo,
    BackendReply,
    ChatRequest,
    QueueReporting,
    RunTracking,
    TokenCounting,
)
from forge_core.calls import ChunkSink, ChunkType, StreamChunk
from forge_core.context import estimate_tokens
from forge_core.errors import BackendError, is_retriable

log = logging.getLogger(__name__)

DEFAULT_FAILURE_THRESHOLD = 3
DEFAULT_COOLDOWN_S = 30.0


@dataclass(frozen=True)
class BackendHealth:
    """One backend of a chain as GetServerInfo reports it."""

    name: str
    model: str
    url: str
    available: bool
    cooldown_remaining_s: float
    consecutive_failures: int
    calls: int
    failures: int
    last_error: str


@runtime_checkable
class HealthReporting(Protocol):
    """A backend made of several that reports each one's health, in order."""

    def health(self) -> list[BackendHealth]: ...


class _Member:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.name = backend.info().name
        self.calls = 0
        self.failures = 0
        # Retriable failures since the last success: what cools it down.
        self.consecutive = 0
        self.cooling_until = 0.0
        self.last_error = ""


class _Streamed:
    """Whether the sink got output since the last RETRY (which voids it)."""

    def __init__(self, on_chunk: ChunkSink | None) -> None:
        self.on_chunk = on_chunk
        self.dirty = False

    async def __call__(self, chunk: StreamChunk) -> None:
        self.dirty = chunk.type is not ChunkType.RETRY
        if self.on_chunk is not None:
            await self.on_chunk(chunk)

    async def void(self) -> None:
        """Tell the caller that what the failed backend streamed is void."""
        if self.dirty:
            await self(StreamChunk(ChunkType.RETRY))


class FallbackBackend:
    """Backends tried in order (see the module docstring); itself a Backend."""

    def __init__(
        self,
        backends: Sequence[Backend],
        *,
        failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not backends:
            raise ValueError("a fallback chain needs at least one backend")
        self.members = [_Member(b) for b in backends]
        self.failure_threshold = max(1, failure_threshold)
        self.cooldown_s = max(0.0, cooldown_s)
        self._clock = clock

    @property
    def chain(self) -> list[str]:
        return [m.name for m in self.members]

    def info(self) -> BackendInfo:
        """The first backend's info, with the smallest context budget of the
        chain: any of them may have to take the conversation over."""
        infos = [m.backend.info() for m in self.members]
        first = infos[0]
        smallest = min(infos, key=lambda i: i.context_budget_tokens)
        if smallest.context_budget_tokens >= first.context_budget_tokens:
            return first
        return BackendInfo(
            name=first.name,
            model=first.model,
            context_budget_tokens=smallest.context_budget_tokens,
            slots=first.slots,
            budget_mode=first.budget_mode,
            backend_mode=first.backend_mode,
            url=first.url,
            tool_call_mode=first.tool_call_mode,
            budget_source=f"the smallest in the fallback chain: {smallest.name}'s "
            f"({smallest.budget_source or smallest.budget_mode})",
            kv_cache_type=first.kv_cache_type,
        )

    def _cooling(self, member: _Member, now: float) -> bool:
        return member.cooling_until > now

    def _order(self) -> list[_Member]:
        now = self._clock()
        ready = [m for m in self.members if not self._cooling(m, now)]
        return ready or list(self.members)

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        sink = _Streamed(on_chunk)
        # No sink for a caller that asked for none, as without a chain.
        forward = sink if on_chunk is not None else None
        failed: list[tuple[_Member, BaseException]] = []
        for member in self._order():
            await sink.void()
            member.calls += 1
            try:
                reply = await member.backend.complete(request, forward)
            except Exception as exc:
                member.failures += 1
                member.last_error = str(exc) or type(exc).__name__
                # httpx errors a backend let through unwrapped are transport
                # failures too.
                if not (is_retriable(exc) or isinstance(exc, httpx.TransportError)):
                    raise
                self._failed(member)
                failed.append((member, exc))
                log.warning(
                    "run %s: backend %s failed (%s); trying the next one",
                    request.run_id, member.name, member.last_error,
                )  # fmt: skip
                continue
            member.consecutive = 0
            member.cooling_until = 0.0
            reply.usage.backend = member.name
            return reply
        await sink.void()
        summary = "; ".join(f"{m.name}: {m.last_error}" for m, _ in failed)
        raise BackendError(
            f"every backend of the chain failed: {summary}",
            retriable=True,
            backends=[m.name for m, _ in failed],
        ) from failed[-1][1]

    def _failed(self, member: _Member) -> None:
        member.consecutive += 1
        if member.consecutive >= self.failure_threshold:
            member.cooling_until = self._clock() + self.cooldown_s
            log.warning(
                "backend %s failed %d calls in a row; skipping it for %.0fs",
                member.name, member.consecutive, self.cooldown_s,
            )  # fmt: skip

    def health(self) -> list[BackendHealth]:
        now = self._clock()
        out = []
        for m in self.members:
            info = m.backend.info()
            remaining = max(0.0, m.cooling_until - now)
            out.append(
                BackendHealth(
                    name=m.name,
                    model=info.model,
                    url=info.url,
                    available=remaining == 0.0,
                    cooldown_remaining_s=remaining,
                    consecutive_failures=m.consecutive,
                    calls=m.calls,
                    failures=m.failures,
                    last_error=m.last_error,
                )
            )
        return out

    async def count_tokens(self, request: ChatRequest) -> int:
        """The count of the backend the next call goes to, if it can count;
        else (or when counting fails: it may be down) the loop's estimate."""
        member = self._order()[0]
        if isinstance(member.backend, TokenCounting):
            try:
                return await member.backend.count_tokens(request)
            except (BackendError, httpx.HTTPError) as exc:
                log.info("backend %s cannot count tokens (%s); estimating", member.name, exc)
        return estimate_tokens(request.messages)

    def forget_run(self, run_id: str) -> None:
        for m in self.members:
            if isinstance(m.backend, RunTracking):
                m.backend.forget_run(run_id)

    def queued_runs(self) -> int:
        return sum(
            m.backend.queued_runs() for m in self.members if isinstance(m.backend, QueueReporting)
        )

    async def aclose(self) -> None:
        for m in self.members:
            await m.backend.aclose()
