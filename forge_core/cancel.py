"""A run's cancellation, cheap to wait on beside other work.

Racing every model call and tool batch against `asyncio.Event.wait()` costs
two tasks and an `asyncio.wait` per await; with a signal that calls back
when set, the engine awaits the work itself and is interrupted only when
the run is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class CancelSignal(asyncio.Event):
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
