"""SlotScheduler: affinity, priority order, preemption, queue positions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from forge_core.backends.llama.slots import Lease, SlotScheduler


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_run_returns_to_the_slot_that_holds_its_cache() -> None:
    sched = SlotScheduler(2)
    a = await sched.acquire("a", 0)
    b = await sched.acquire("b", 0)
    assert {a.slot, b.slot} == {0, 1}
    sched.release(a)
    sched.release(b)
    await settle()
    # b asks first this time, yet each gets its own slot back.
    b2 = await sched.acquire("b", 0)
    a2 = await sched.acquire("a", 0)
    assert (a2.slot, b2.slot) == (a.slot, b.slot)


async def test_a_new_run_avoids_slots_other_runs_call_home() -> None:
    sched = SlotScheduler(2)
    a = await sched.acquire("a", 0)
    sched.release(a)
    await settle()
    c = await sched.acquire("c", 0)
    assert c.slot != a.slot


async def test_waiters_are_served_by_priority_then_arrival() -> None:
    sched = SlotScheduler(1)
    holder = await sched.acquire("holder", 0)
    order: list[str] = []

    async def want(run_id: str, priority: int) -> None:
        lease = await sched.acquire(run_id, priority)
        order.append(run_id)
        sched.release(lease)

    tasks = [
        asyncio.create_task(want("late-low", 5)),
        asyncio.create_task(want("first-mid", 1)),
        asyncio.create_task(want("second-mid", 1)),
    ]
    await settle()
    assert sched.waiting == 3
    sched.release(holder)
    await asyncio.gather(*tasks)
    assert order == ["first-mid", "second-mid", "late-low"]


async def test_higher_priority_work_preempts_lower_priority_inference() -> None:
    sched = SlotScheduler(1)
    low = await sched.acquire("low", 10)
    positions: list[tuple[int, bool]] = []

    async def on_queue(position: int, preempted: bool) -> None:
        positions.append((position, preempted))

    high_task = asyncio.create_task(sched.acquire("high", 0, on_queue))
    await settle()
    assert low.preempted.is_set()
    assert positions == [(1, False)]
    sched.release(low)  # the holder notices the preemption and lets go
    high: Lease = await high_task
    assert high.slot == low.slot
    assert positions[-1] == (0, False)


async def test_equal_or_lower_priority_never_preempts() -> None:
    sched = SlotScheduler(1)
    holder = await sched.acquire("holder", 0)
    same = asyncio.create_task(sched.acquire("same", 0))
    lower = asyncio.create_task(sched.acquire("lower", 3))
    await settle()
    assert not holder.preempted.is_set()
    sched.release(holder)
    first = await same
    sched.release(first)
    await lower


async def test_queue_positions_are_reported_and_updated() -> None:
    sched = SlotScheduler(1)
    holder = await sched.acquire("holder", 0)
    seen: dict[str, list[int]] = {"x": [], "y": []}

    def sink(name: str) -> Callable[[int, bool], Awaitable[None]]:
        async def on_queue(position: int, preempted: bool) -> None:
            seen[name].append(position)

        return on_queue

    x = asyncio.create_task(sched.acquire("x", 0, sink("x")))
    await settle()
    y = asyncio.create_task(sched.acquire("y", 0, sink("y")))
    await settle()
    assert seen == {"x": [1], "y": [2]}
    sched.release(holder)
    lx = await x
    await settle()
    assert seen["x"][-1] == 0 and seen["y"][-1] == 1
    sched.release(lx)
    await y
    assert seen["y"][-1] == 0


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    sched = SlotScheduler(1)
    holder = await sched.acquire("holder", 0)
    waiter = asyncio.create_task(sched.acquire("w", 0))
    await settle()
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert sched.waiting == 0
    sched.release(holder)
    again = await sched.acquire("next", 0)
    assert again.slot == 0


async def test_a_new_run_of_the_same_workflow_starts_on_the_slot_with_its_prefix() -> None:
    sched = SlotScheduler(3)
    first = await sched.acquire("run-1", 0, prefix="weather")
    other = await sched.acquire("run-x", 0, prefix="orders")
    sched.release(first)
    sched.release(other)
    sched.forget("run-1")  # the first run ended
    await settle()
    again = await sched.acquire("run-2", 0, prefix="weather")
    assert again.slot == first.slot
    # A different workflow does not take that slot while another is free.
    sched.release(again)
    await settle()
    third = await sched.acquire("run-3", 0, prefix="billing")
    assert third.slot not in (first.slot, other.slot)
