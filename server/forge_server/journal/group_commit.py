"""Many small journal writes, few commits, and no thread hop for the usual one.

Every event of every run is journaled before a stream sees it: one commit
(and one hop to the journal's thread) per event made the journal the most
expensive part of a tool round trip. Writes queued in the same turn of the
event loop or the next, or while a commit is in flight, go together in the
next commit, so a busy server commits once per batch of events instead of
once per event, and a client's result shares a commit with the events its
run emits in reply. Each write still completes (its future resolves) only
once it is committed, and commits happen in the order the writes were
queued.

Where the journal offers `inline` (SQLite: a WAL append without an fsync,
40-65 µs here), a batch commits on the event loop itself: the hop to the
journal's thread and back cost 2-3 times the commit in CPU and latency
(bench/RESULTS.md §16). `inline` never waits: a batch it cannot commit at
once (another writer holds the lock, any error) raises `WouldBlock` before
anything is committed and goes to the thread, whose `commit` waits for
locks and fails bad writes one by one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

# One write: SQL, parameters, and the future told its row count.
_Write = tuple[str, tuple[Any, ...], "asyncio.Future[int]"]
Statements = list[tuple[str, tuple[Any, ...]]]


class WouldBlock(Exception):
    """The inline commit cannot go ahead without waiting: nothing was written."""


class GroupCommit:
    """Queues writes and commits them in batches: with `inline` on the event
    loop where it can, else with `commit`, which runs on `submit` (the
    journal's own thread). Both return each write's row count or the
    exception it failed with."""

    def __init__(
        self,
        commit: Callable[[Statements], list[int | Exception]],
        submit: Callable[..., asyncio.Future[Any]],
        inline: Callable[[Statements], list[int | Exception]] | None = None,
    ) -> None:
        self._commit = commit
        self._submit = submit
        self._inline = inline
        self._pending: list[_Write] = []
        self._in_flight: asyncio.Future[Any] | None = None
        # An inline commit is due at the loop's next turn.
        self._scheduled = False
        self._idle: asyncio.Event | None = None

    def write(self, sql: str, params: tuple[Any, ...]) -> asyncio.Future[int]:
        """Queue one write; the future resolves with its row count once committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        self._pending.append((sql, params, future))
        if self._in_flight is None and not self._scheduled:
            if self._inline is not None:
                # This turn's writes and the next turn's join the same
                # commit: a client's result is written in the turn it is
                # read, the events its run emits in reply in the next (the
                # engine's task wakes there), and one commit for both costs
                # less than a loop turn more.
                self._scheduled = True
                loop.call_soon(loop.call_soon, self._flush_inline)
            else:
                self._start()
        return future

    async def idle(self) -> None:
        """Until every write queued so far is committed (other statements
        run after them, in order)."""
        while self._in_flight is not None or self._scheduled:
            if self._idle is None:
                self._idle = asyncio.Event()
            await self._idle.wait()

    def _flush_inline(self) -> None:
        self._scheduled = False
        if self._in_flight is not None:
            return  # its _done goes on with the pending writes
        if not self._pending:
            self._next()
            return
        assert self._inline is not None
        batch, self._pending = self._pending, []
        try:
            outcomes = self._inline([(sql, params) for sql, params, _ in batch])
        except WouldBlock:
            self._start(batch)
            return
        self._resolve(batch, outcomes)
        self._next()

    def _start(self, batch: list[_Write] | None = None) -> None:
        if batch is None:
            batch, self._pending = self._pending, []
        statements = [(sql, params) for sql, params, _ in batch]
        self._in_flight = self._submit(self._commit, statements)
        self._in_flight.add_done_callback(lambda done: self._done(done, batch))

    def _done(self, done: asyncio.Future[Any], batch: list[_Write]) -> None:
        self._in_flight = None
        error = done.exception() if not done.cancelled() else asyncio.CancelledError()
        if error is not None:
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(error)
        else:
            self._resolve(batch, done.result())
        self._next()

    @staticmethod
    def _resolve(batch: list[_Write], outcomes: list[int | Exception]) -> None:
        for (_, _, future), outcome in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def _next(self) -> None:
        """After a commit: the writes queued meanwhile, or wake `idle`."""
        if self._pending:
            if self._inline is not None:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._flush_inline)
            else:
                self._start()
        elif self._idle is not None:
            self._idle.set()
            self._idle = None
