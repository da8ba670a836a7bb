"""Many small journal writes, few commits.

Every event of every run is journaled before a stream sees it: one commit
(and one hop to the journal's thread) per event made the journal the most
expensive part of a tool round trip. Writes queued while a commit is in
flight go together in the next one, so a busy server commits once per
batch of events instead of once per event, and a run's events of one turn
share a commit. Each write still completes (its future resolves) only once
it is committed, and commits happen in the order the writes were queued.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

# One write: SQL, parameters, and the future told its row count.
_Write = tuple[str, tuple[Any, ...], "asyncio.Future[int]"]


class GroupCommit:
    """Queues writes and commits them in batches with `commit`, which runs
    on `submit` (the journal's own thread) and returns each write's row
    count or the exception it failed with."""

    def __init__(
        self,
        commit: Callable[[list[tuple[str, tuple[Any, ...]]]], list[int | Exception]],
        submit: Callable[..., asyncio.Future[Any]],
    ) -> None:
        self._commit = commit
        self._submit = submit
        self._pending: list[_Write] = []
        self._in_flight: asyncio.Future[Any] | None = None
        self._idle: asyncio.Event | None = None

    def write(self, sql: str, params: tuple[Any, ...]) -> asyncio.Future[int]:
        """Queue one write; the future resolves with its row count once committed."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.append((sql, params, future))
        if self._in_flight is None:
            self._start()
        return future

    async def idle(self) -> None:
        """Until every write queued so far is committed (other statements
        run after them, in order)."""
        while self._in_flight is not None:
            if self._idle is None:
                self._idle = asyncio.Event()
            await self._idle.wait()

    def _start(self) -> None:
        batch, self._pending = self._pending, []
        statements = [(sql, params) for sql, params, _ in batch]
        self._in_flight = self._submit(self._commit, statements)
        self._in_flight.add_done_callback(lambda done: self._done(done, batch))

    def _done(self, done: asyncio.Future[Any], batch: list[_Write]) -> None:
        self._in_flight = None
        error = done.exception() if not done.cancelled() else asyncio.CancelledError()
        counts: list[int | Exception] = [] if error is not None else done.result()
        for i, (_, _, future) in enumerate(batch):
            if future.done():
                continue
            outcome = error if error is not None else counts[i]
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
        if self._pending:
            self._start()
        elif self._idle is not None:
            self._idle.set()
            self._idle = None
