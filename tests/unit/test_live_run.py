"""LiveRun's journal bookkeeping, with a journal whose commits the test
releases by hand (no real store can hold a commit open on demand)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from forge.v1 import forge_service_pb2 as pb
from forge_server.journal import Journal
from forge_server.runs import LiveRun


class HeldJournal:
    """append() returns a commit the test completes with commit()."""

    def __init__(self) -> None:
        self.writes: list[asyncio.Future[None]] = []

    def append(self, run_id: str, seq: int, event: bytes, size: int) -> asyncio.Future[None]:
        self.writes.append(asyncio.get_running_loop().create_future())
        return self.writes[-1]

    def commit(self) -> None:
        for write in self.writes:
            if not write.done():
                write.set_result(None)


def started(run_id: str = "r1") -> pb.RunResponse:
    return pb.RunResponse(run_started=pb.RunStarted(run_id=run_id))


async def test_a_cancelled_waiter_does_not_cancel_the_write_for_the_others() -> None:
    """A stream that goes away while it waits for the journal (its handler is
    cancelled) leaves the shared write alone: the next stream's wait ends
    when the commit does, instead of failing for ever."""
    journal = HeldJournal()
    run = LiveRun("r1", "", cast(Journal, cast(Any, journal)), 30.0)
    await run.emit(started())
    first = asyncio.create_task(run.durable())
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    assert first.cancelled()
    assert not journal.writes[0].cancelled()

    second = asyncio.create_task(run.durable())
    await asyncio.sleep(0)
    assert not second.done()
    journal.commit()
    await asyncio.wait_for(second, 1.0)


async def test_durable_waits_for_every_write_so_far() -> None:
    journal = HeldJournal()
    run = LiveRun("r1", "", cast(Journal, cast(Any, journal)), 30.0)
    await run.emit(started())
    await run.emit(started())
    waiting = asyncio.create_task(run.durable())
    await asyncio.sleep(0)
    journal.writes[0].set_result(None)
    await asyncio.sleep(0)
    assert not waiting.done()
    journal.commit()
    await asyncio.wait_for(waiting, 1.0)
