"""A run's cancellation, cheap to wait on beside other work.

Racing every model call and tool batch against `asyncio.Event.wait()` costs
two tasks and an `asyncio.wait` per await; with a signal that calls back
when set, the engine awaits the work itself and is interrupted only when
the run is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal


class LazyEvent(asyncio.Event):
    """An asyncio.Event that keeps its waiters only while there are any.

    asyncio.Event allocates a deque of waiters up front (about 760 bytes, one
    64-slot block); a server holds one or two events per open run, which
    nobody waits on most of the time. This one allocates a list when a
    coroutine first waits and drops it when the last waiter leaves. Same
    behaviour otherwise: set() wakes every waiter, clear() rearms it."""

    def __init__(self) -> None:
        # Not asyncio.Event.__init__: its deque is what this class saves.
        # Every method that touches asyncio.Event's own fields is overridden.
        self._value = False
        self._pending: list[asyncio.Future[bool]] | None = None

    def __repr__(self) -> str:
        extra = "set" if self._value else "unset"
        if self._pending:
            extra = f"{extra}, waiters:{len(self._pending)}"
        return f"<{object.__repr__(self)[1:-1]} [{extra}]>"

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if self._value:
            return
        self._value = True
        for fut in self._pending or ():
            if not fut.done():
                fut.set_result(True)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> Literal[True]:
        if self._value:
            return True
        fut = asyncio.get_running_loop().create_future()
        if self._pending is None:
            self._pending = []
        self._pending.append(fut)
        try:
            await fut
            return True
        finally:
            # As asyncio.Event: a waiter leaves the list itself, woken or not.
            pending = self._pending
            assert pending is not None
            pending.remove(fut)
            if not pending:
                self._pending = None


class CancelSignal(LazyEvent):
    """An asyncio.Event that also calls its callbacks, synchronously, when set."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)

    def remove_callback(self, callback: Callable[[], None]) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)
