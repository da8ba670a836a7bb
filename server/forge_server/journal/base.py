"""The run journal: what a run needs to survive its stream and its server.

Every run's start request, each event the server sends (model replies and
tool calls are message_appended / tool_call events) and each tool result the
client sends are written here before they take effect, keyed by run id and
event number (RunResponse.seq). A run whose stream broke is continued from
it by a new stream (ReattachRun), on the same server or, with a shared
PostgreSQL journal, on another replica.

Ownership: one server process (its `holder` id) runs a run at a time. It
holds a lease it renews while it lives; another replica takes a run over
only when the lease has expired (the holder died) or the holder released it
on request (a handoff: the client reattached elsewhere).

Payloads are the protobuf messages' bytes (StartRun, RunResponse,
ToolResult / ApprovalDecision), so the journal needs no schema of its own
for them.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Protocol

RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
# Running, but no replica held it for the reattach grace after its lease
# ran out (its server died and no client came back): ended by `abandon`.
ABANDONED = "abandoned"

# How long a holder's claim on a run lasts without renewal; it renews every
# LEASE_S / 3.
LEASE_S = 10.0


class RunExists(Exception):
    """create_run: the journal has a run with that id already."""


@dataclass
class JournaledRun:
    run_id: str
    start: bytes
    # The caller that started it (auth subject; "" without auth).
    owner: str
    session_id: str
    status: str
    holder: str
    lease_until: float
    # (seq, RunResponse bytes), in order.
    events: list[tuple[int, bytes]] = field(default_factory=list)
    # AnswerKey.stored() -> ToolResult or ApprovalDecision bytes.
    results: dict[str, bytes] = field(default_factory=dict)


class Journal(Protocol):
    """One implementation per store (sqlite.py, postgres.py); the server
    only uses this interface."""

    # Where it writes, for logs and GetServerInfo ("sqlite:///...").
    url: str

    async def open(self) -> None: ...

    async def aclose(self) -> None: ...

    async def create_run(
        self, run_id: str, start: bytes, owner: str, session_id: str, holder: str, now: float
    ) -> None:
        """Raises RunExists when `run_id` is taken."""
        ...

    def append(self, run_id: str, seq: int, event: bytes, size: int) -> Awaitable[object]:
        """Event `seq` of the run. The write is under way when this returns
        (a run's events need not wait for each other); await the result for
        its commit."""
        ...

    async def record_result(self, run_id: str, call_id: str, result: bytes) -> bool:
        """Keep a client's result; False when one for `call_id` is already
        there (results count once per call)."""
        ...

    def keep_result(self, run_id: str, call_id: str, result: bytes) -> Awaitable[object]:
        """record_result for a caller that only needs the commit: the write
        is under way when this returns, as with `append` (no task per
        result on the round trip's path)."""
        ...

    async def finish(self, run_id: str, status: str, now: float) -> None: ...

    async def load(self, run_id: str, after_seq: int = 0) -> JournaledRun | None:
        """The run with its events after `after_seq` and all its results."""
        ...

    async def claim(self, run_id: str, holder: str, now: float) -> bool:
        """Become the run's holder: when it has none, it is ours, or the
        lease expired. The lease starts now."""
        ...

    async def renew(self, holder: str, now: float) -> list[str]:
        """Extend the leases of `holder`'s running runs; the ids of those
        another replica asked for (handoff)."""
        ...

    async def abandon(self, now: float, grace_s: float, event: bytes) -> list[str]:
        """End the running runs whose lease ran out more than `grace_s` ago
        (no replica renewed it, no client reattached): status ABANDONED,
        `event` (a RunResponse's bytes) appended as each one's last event.
        The ids of the runs this call ended (each run is ended once, by
        whichever replica gets there first)."""
        ...

    async def disown(self, holder: str) -> int:
        """Let go of the running runs held under `holder` by a process that
        died (a restart with the same replica id): they are no longer
        renewed, so they are resumed by a reattaching client or abandoned.
        How many."""
        ...

    async def request_handoff(self, run_id: str, holder: str) -> None:
        """Ask the run's holder to release it to `holder`."""
        ...

    async def release(self, run_id: str, holder: str) -> None:
        """Give the run up (a handoff): the next claim succeeds at once."""
        ...

    async def save_session(
        self, session_id: str, owner: str, transcript: bytes, now: float
    ) -> None: ...

    async def load_session(self, session_id: str) -> tuple[str, bytes] | None:
        """(owner, transcript bytes) of the session's last completed run."""
        ...

    async def prune(self, now: float, max_age_s: float, max_bytes: int) -> int:
        """Delete runs that ended (or were abandoned) longer than `max_age_s`
        ago, then the oldest ended runs until the journal holds at most
        `max_bytes` of events; how many runs went."""
        ...
