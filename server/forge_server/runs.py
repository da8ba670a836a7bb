"""A run on the server, apart from the stream that drives it.

A `LiveRun` owns the engine task, the tool executor and the run's numbered
events (RunResponse.seq). A stream *attaches* to it: it gets the events
after the seq it asks for, then the live ones, and routes the client's
results into the executor. When the stream breaks, the run *detaches*: with
a journal it keeps going for the reattach grace period (events go to the
journal and the in-memory log, tool calls wait), and a new stream sending
`reattach` takes it over; without one (grace 0) it is cancelled, as before.

Every event is written to the journal before any stream sees it, and every
client result before it reaches the executor, so a server that dies loses
nothing a client was told or sent (forge_core/replay.resume_run continues it
on the next server).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

from forge.v1 import forge_service_pb2 as pb
from forge_core.cancel import CancelSignal, LazyEvent
from forge_core.messages import Message, MessageType, ToolCallInfo
from forge_core.tool_execution import Approval, Approver, ToolOutcome
from forge_server.answer_keys import AnswerKey
from forge_server.errors import RequestRejected
from forge_server.executor import StreamToolExecutor, outcome_of
from forge_server.journal import Journal
from forge_server.journal.base import LEASE_S
from forge_server.metrics import Metrics

if TYPE_CHECKING:
    from forge_server.tracing import RunTrace

log = logging.getLogger(__name__)

# Bounded: a client that stops reading slows its own run instead of growing
# the server's memory.
OUTBOX_SIZE = 256


# What Attachment.ready() answers when nothing is ready.
EMPTY = object()

Item = pb.RunResponse | RequestRejected | None


class Outbox:
    """asyncio.Queue(maxsize) for one reader, at a fraction of its memory.

    A stream waiting for a tool result holds its outbox open, empty, for as
    long as the call takes; asyncio.Queue keeps three deques (items, getters,
    putters) and an Event with a fourth, about 3 KB a stream. This one keeps
    its items in a list (empty: no storage), the waiting reader's future in
    one field, and a list of blocked writers only once one blocks. Same
    behaviour as asyncio.Queue otherwise: put() waits while `maxsize` items
    are queued and writers go on in the order they blocked; a second reader
    waiting at the same time is an error (an attachment has one stream)."""

    __slots__ = ("_getter", "_items", "_maxsize", "_putters")

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        # list.pop(0) moves at most maxsize pointers; a list that empties
        # frees its storage, where a deque keeps a 64-slot block.
        self._items: list[Item] = []
        self._getter: asyncio.Future[None] | None = None
        self._putters: list[asyncio.Future[None]] | None = None

    def empty(self) -> bool:
        return not self._items

    def full(self) -> bool:
        return len(self._items) >= self._maxsize

    async def put(self, item: Item) -> None:
        while self.full():
            putter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if self._putters is None:
                self._putters = []
            self._putters.append(putter)
            try:
                await putter
            except BaseException:
                putter.cancel()  # in case it was not woken
                # Taken off the list already when get_nowait() woke it.
                with contextlib.suppress(ValueError):
                    self._putters.remove(putter)
                if not self.full() and not putter.cancelled():
                    # Woken for a free slot it will not take: the next
                    # writer in line gets it.
                    self._wake_putter()
                raise
        self.put_nowait(item)

    def put_nowait(self, item: Item) -> None:
        if self.full():
            raise asyncio.QueueFull
        self._items.append(item)
        getter = self._getter
        if getter is not None:
            self._getter = None
            if not getter.done():
                getter.set_result(None)

    async def get(self) -> Item:
        while not self._items:
            if self._getter is not None:
                raise RuntimeError("an Outbox has one reader at a time")
            getter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getter = getter
            try:
                await getter
            except BaseException:
                getter.cancel()  # in case it was not woken
                if self._getter is getter:
                    self._getter = None
                raise
        return self.get_nowait()

    def get_nowait(self) -> Item:
        if not self._items:
            raise asyncio.QueueEmpty
        item = self._items.pop(0)
        self._wake_putter()
        return item

    def clear(self) -> None:
        """Drop every queued item; as many blocked writers go on."""
        dropped = len(self._items)
        self._items.clear()
        for _ in range(dropped):
            self._wake_putter()

    def _wake_putter(self) -> None:
        putters = self._putters
        while putters:
            putter = putters.pop(0)
            if not putter.done():
                putter.set_result(None)
                break


class Attachment:
    """One stream's view of a run: the backlog it asked for, then live events."""

    __slots__ = ("_backlog", "kicked", "queue")

    def __init__(self, backlog: list[pb.RunResponse]) -> None:
        # None once sent: most streams idle with their backlog long gone.
        self._backlog: deque[pb.RunResponse] | None = deque(backlog) if backlog else None
        self.queue = Outbox(OUTBOX_SIZE)
        # Another stream took the run over: this one ends.
        self.kicked = False

    @property
    def backlog(self) -> deque[pb.RunResponse]:
        """What the stream gets before the live events (the caller may put
        more in front)."""
        if self._backlog is None:
            self._backlog = deque()
        return self._backlog

    async def put(self, item: Item) -> None:
        await self.queue.put(item)

    def close(self, last: RequestRejected | None = None) -> None:
        """End this stream's view: what is queued is dropped (the run's log
        and journal have it), so whoever waits to put is unblocked; `last`
        is what the stream ends with."""
        self.kicked = True
        self.queue.clear()
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(last)

    def _from_backlog(self) -> pb.RunResponse | None:
        backlog = self._backlog
        if not backlog:
            return None
        item = backlog.popleft()
        if not backlog:
            self._backlog = None
        return item

    async def next(self) -> Item:
        """The next item: a backlog event, else a live one (waits for it).
        None ends the stream; a RequestRejected ends it with that error."""
        item = self._from_backlog()
        if item is not None:
            return item
        return await self.queue.get()

    def ready(self) -> Item | object:
        """The next item if there is one already, else EMPTY."""
        item = self._from_backlog()
        if item is not None:
            return item
        if self.queue.empty():
            return EMPTY
        return self.queue.get_nowait()


@dataclass
class LiveRun:
    run_id: str
    # The caller that started it (auth subject; "" without auth).
    owner: str
    journal: Journal | None
    # Seconds a run waits for a reattach after its stream broke (0: cancel).
    grace_s: float
    executor: StreamToolExecutor = field(init=False)
    tool_timeout_s: float = 600.0
    omit: frozenset[str] = frozenset()
    batch: bool = False
    seq: int = 0
    # The run's events, for a stream that takes it over; only without a
    # journal (a journaled run's are read back from the journal).
    log: list[pb.RunResponse] = field(default_factory=list)
    cancel: CancelSignal = field(default_factory=CancelSignal)
    shutting_down: bool = False
    # Why the run was cancelled, when the server did it (no reattach in time).
    cancel_reason: str = ""
    engine: asyncio.Task[None] | None = None
    attachment: Attachment | None = None
    # A LazyEvent: nobody waits on it, and an asyncio.Event allocates a deque
    # for waiters up front (~760 bytes, more than the run's other fields).
    finished: asyncio.Event = field(default_factory=LazyEvent)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _expiry: asyncio.Task[None] | None = None
    # The answer a call or approval event asks for -> that event (re-sent on
    # reattach).
    _asked: dict[AnswerKey, pb.RunResponse] = field(default_factory=dict)
    # Results for calls a resumed run had sent before its server stopped and
    # has not sent again yet: used when it gets there (replay.resume_run).
    early: dict[str, ToolOutcome] = field(default_factory=dict)
    # stop() was called: the run continues on another server, so what the
    # engine emits while it is torn down here (ToolCallCancelled for the
    # calls it waited on) is not the run's and must reach neither the
    # journal nor a client.
    stopped: bool = False
    # Journal writes of emitted events, oldest first, until committed. A
    # list: there are a few at a time, and once empty it holds no storage
    # (a deque keeps a 64-slot block for as long as the run lives).
    _unjournaled: list[Awaitable[object]] = field(default_factory=list)
    # Its spans when the server traces runs (tracing.py); None: off.
    trace: RunTrace | None = None

    def __post_init__(self) -> None:
        self.executor = StreamToolExecutor(self.emit, self.tool_timeout_s)

    def traced(self, trace: RunTrace | None) -> None:
        """Feed the run's events and the client's answers to `trace`."""
        self.trace = trace
        self.executor.on_answer = trace.answered if trace is not None else None

    async def emit(self, response: pb.RunResponse) -> None:
        """Number `response`, journal it, keep it, and send it to the stream."""
        async with self._lock:
            if self.stopped:
                return
            if self.trace is not None:
                # Before it is journaled: a tool call carries its span's context.
                self.trace.observe(response)
            self.seq += 1
            response.seq = self.seq
            if self.journal is not None:
                data = response.SerializeToString()
                # Not awaited here: the engine goes on while the journal
                # commits; a stream sends an event only once it is committed
                # (durable()), so no client sees one that a crash would lose.
                self._unjournaled.append(
                    self.journal.append(self.run_id, self.seq, data, len(data))
                )
            else:
                self.log.append(response)
            kind = response.WhichOneof("kind")
            if kind == "tool_call":
                self._asked[AnswerKey(response.tool_call.call_id)] = response
            elif kind == "approval_request":
                self._asked[AnswerKey.decision(response.approval_request.call_id)] = response
            # Under the lock: streams get events in seq order. A slow reader
            # holds the run up (backpressure); a stream that goes away is
            # closed by detach, which frees the queue.
            attachment = self.attachment
            if attachment is not None and not attachment.kicked and kind not in self.omit:
                await attachment.put(response)

    def builds(self, kind: str) -> bool:
        """Whether an event of `kind` is worth building: a stream or the
        journal takes it."""
        return kind not in self.omit or self.journal is not None

    def journal_write(self, write: Awaitable[object]) -> None:
        """A journal write that anything the run sends next must wait for;
        under way already (Journal.keep_result), so it is queued ahead of
        the writes the run's next step makes."""
        self._unjournaled.append(write)

    async def durable(self) -> None:
        """Until every event emitted so far is in the journal."""
        while self._unjournaled:
            write = self._unjournaled[0]
            if isinstance(write, asyncio.Future) and write.done():
                # Usually so: the commit runs before the stream's task wakes.
                write.result()
            else:
                # Shielded: the writes are shared by every waiter, and a stream
                # cancelled while it waits must not cancel one for the others.
                await asyncio.shield(write)
            # Another caller may have waited on the same write and moved on.
            if self._unjournaled and self._unjournaled[0] is write:
                del self._unjournaled[0]

    def asked(self, call_id: str) -> bool:
        """Whether this run ever sent `call_id` (before a restart included)."""
        return AnswerKey(call_id) in self._asked or self.executor.knows(call_id)

    def restore(self, events: list[pb.RunResponse]) -> None:
        """Take over a journaled run's events (numbered already)."""
        self.seq = events[-1].seq if events else 0
        for event in events:
            if event.WhichOneof("kind") == "tool_call":
                self._asked[AnswerKey(event.tool_call.call_id)] = event

    async def end(self) -> None:
        """The engine is done: the attached stream ends after what it has."""
        self.finished.set()
        if self.trace is not None:
            self.trace.close()
        if self._expiry is not None:
            self._expiry.cancel()
        attachment = self.attachment
        if attachment is not None and not attachment.kicked:
            # Waits for a slow reader like any event; a stream that goes away
            # meanwhile is closed (detach), which frees the queue.
            await attachment.put(None)

    def attach(self, after_seq: int) -> Attachment:
        """A new stream takes the run: the events after `after_seq` (a
        journaled run keeps none in memory: the caller puts the journal's in
        front), then the calls and approvals still unanswered that it had
        already seen."""
        if self.attachment is not None:
            self.attachment.close()
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        backlog = [
            e for e in self.log if e.seq > after_seq and e.WhichOneof("kind") not in self.omit
        ]
        waiting = set(self.executor.waiting())
        backlog += [e for key, e in self._asked.items() if e.seq <= after_seq and key in waiting]
        attachment = Attachment(backlog)
        if self.finished.is_set():
            attachment.queue.put_nowait(None)
        self.attachment = attachment
        return attachment

    def detach(self, attachment: Attachment) -> None:
        """The stream went away without ending the run."""
        if self.attachment is not attachment:
            return
        self.attachment = None
        attachment.close()
        if self.finished.is_set():
            return
        if self.grace_s <= 0:
            self.cancel.set()
            return
        self._expiry = asyncio.ensure_future(self._expire())

    async def _expire(self) -> None:
        await asyncio.sleep(self.grace_s)
        if self.attachment is None and not self.finished.is_set():
            self.cancel_reason = f"no client reattached within {self.grace_s:g}s"
            log.info("run %s: %s; cancelling it", self.run_id, self.cancel_reason)
            self.cancel.set()

    async def reject(self, rejection: RequestRejected) -> None:
        """A protocol error on the attached stream: it ends that stream and
        the run (a client that breaks the protocol cannot drive it)."""
        attachment = self.attachment
        if attachment is not None:
            await attachment.put(rejection)
        self.cancel.set()

    async def stop(self) -> None:
        """Stop the engine without an outcome (the run moves to another
        server, which resumes it from the journal)."""
        self.stopped = True
        if self._expiry is not None:
            self._expiry.cancel()
        if self.engine is not None and not self.engine.done():
            self.engine.cancel()
            await asyncio.gather(self.engine, return_exceptions=True)
        if self.trace is not None:
            self.trace.close()
        if self.attachment is not None:
            self.attachment.close()


class RunTable:
    """The runs live on this server, by id, and how one leaves it for
    another replica: handed over (this server stops it and releases it in
    the journal) or claimed (another server's, taken over on a reattach)."""

    def __init__(self, journal: Journal | None, holder: str) -> None:
        self.journal = journal
        # This process, as the journal's leases name it.
        self.holder = holder
        self.live: dict[str, LiveRun] = {}
        # Runs whose start is between its checks and registration in `live`.
        self.starting: set[str] = set()
        self._idle = asyncio.Event()  # set while no run is live
        self._idle.set()

    def add(self, run: LiveRun) -> None:
        self.live[run.run_id] = run
        self._idle.clear()

    def forget(self, run: LiveRun) -> None:
        self.live.pop(run.run_id, None)
        if not self.live:
            self._idle.set()

    def taken(self, run_id: str) -> bool:
        """Whether a run with this id is live or starting here."""
        return run_id in self.live or run_id in self.starting

    async def idle_within(self, timeout_s: float | None) -> bool:
        try:
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def hand_over(self, run: LiveRun) -> None:
        """Stop `run` here without an outcome and release it in the journal;
        its stream ends UNAVAILABLE, so its client reattaches elsewhere."""
        attachment = run.attachment
        run.attachment = None
        if attachment is not None:
            attachment.close(
                RequestRejected(
                    grpc.StatusCode.UNAVAILABLE,
                    "SHUTTING_DOWN",
                    "",
                    "the server is shutting down; reattach to continue the run on another instance",
                )
            )
        await self._release(run)

    async def hand_over_wanted(self, wanted: list[str]) -> None:
        """Let go of the runs other replicas asked for (Journal.renew)."""
        assert self.journal is not None
        for run_id in wanted:
            run = self.live.get(run_id)
            if run is None:
                # Held under this replica id by a process that died (a
                # restart with the same --replica-id): not run here.
                await self.journal.release(run_id, self.holder)
                continue
            # Only a run no stream drives here moves; an attached one stays
            # (its client is connected to this replica).
            if run.attachment is None and not run.finished.is_set():
                log.info("run %s: handing it over to another replica", run_id)
                await self._release(run)

    async def _release(self, run: LiveRun) -> None:
        assert self.journal is not None
        await run.stop()
        self.forget(run)
        # The next holder must find every event it was sent.
        with contextlib.suppress(Exception):
            await run.durable()
        await self.journal.release(run.run_id, self.holder)

    async def claim(self, run_id: str) -> bool:
        """Hold the run in the journal: at once when nobody does (or its
        holder died), else after asking the holder to let it go."""
        assert self.journal is not None
        if await self.journal.claim(run_id, self.holder, now()):
            return True
        await self.journal.request_handoff(run_id, self.holder)
        deadline = time.monotonic() + LEASE_S + 2.0
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if await self.journal.claim(run_id, self.holder, now()):
                return True
        return False


async def reattach_live(run: LiveRun, after_seq: int, opening: pb.RunResponse) -> Attachment:
    """A new stream takes over a run live here: `opening`, the events after
    `after_seq` (a journaled run's read back from the journal), then the
    live ones."""
    upto = run.seq
    attachment = run.attach(after_seq)
    if run.journal is not None and after_seq < upto:
        # A journaled run's events are in the journal, not in memory; those
        # after `upto` come live, to this attachment already.
        with contextlib.suppress(Exception):
            await run.durable()
        record = await run.journal.load(run.run_id, after_seq)
        missed = [journaled_event(s, d) for s, d in (record.events if record else ()) if s <= upto]
        attachment.backlog.extendleft(
            reversed([e for e in missed if e.WhichOneof("kind") not in run.omit])
        )
    attachment.backlog.appendleft(opening)
    return attachment


def attach_resumed(
    run: LiveRun, events: list[pb.RunResponse], after_seq: int, opening: pb.RunResponse
) -> Attachment:
    """A run resumed here from the journal's `events`: the stream that
    reattached gets `opening` and what it missed of them."""
    run.restore(events)
    attachment = run.attach(after_seq)
    attachment.backlog.extendleft(
        reversed([e for e in events if e.seq > after_seq and e.WhichOneof("kind") not in run.omit])
    )
    attachment.backlog.appendleft(opening)
    return attachment


@dataclass
class Resume:
    """A journaled run continued on this server: its transcript so far, and
    the client's answers the journal kept."""

    transcript: list[Message]
    known: dict[str, ToolOutcome]
    approvals: dict[str, Approval]


def journaled_event(seq: int, data: bytes) -> pb.RunResponse:
    event = pb.RunResponse.FromString(data)
    event.seq = seq
    return event


def known_answers(results: dict[str, bytes]) -> tuple[dict[str, ToolOutcome], dict[str, Approval]]:
    """The journal's client answers of a run: tool results and approval
    decisions, by call id."""
    known: dict[str, ToolOutcome] = {}
    approvals: dict[str, Approval] = {}
    for stored, data in results.items():
        key = AnswerKey.parse(stored)
        if key.approval:
            decision = pb.ApprovalDecision.FromString(data)
            approvals[key.call_id] = Approval(decision.approved, decision.reason)
        else:
            known[key.call_id] = outcome_of(pb.ToolResult.FromString(data))
    return known, approvals


def request_reached(transcript: list[Message], prior: list[Message]) -> bool:
    """Whether a journaled transcript holds the run's own user message (the
    opening messages are system prompt, `prior`, then that request)."""

    def requests(messages: list[Message]) -> int:
        return sum(m.type is MessageType.USER_INPUT for m in messages)

    return requests(transcript) > requests(prior)


async def uncancelled(
    opening: Coroutine[Any, Any, tuple[LiveRun | None, Attachment]],
) -> tuple[LiveRun | None, Attachment]:
    """Start or reattach a run to its end even when the stream is cancelled
    meanwhile (its client went away): cut short, it would leave a run in
    the table with no engine, which a reattach would wait on for ever. A stream
    cancelled meanwhile detaches once the run is set up."""
    task = asyncio.ensure_future(opening)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:

        def detach(done: asyncio.Future[tuple[LiveRun | None, Attachment]]) -> None:
            if not done.cancelled() and done.exception() is None:
                run, attachment = done.result()
                if run is not None:
                    run.detach(attachment)

        task.add_done_callback(detach)
        raise


def now() -> float:
    return time.time()


def abandoned_event(grace_s: float) -> pb.RunResponse:
    """The last event of a run that was ended as abandoned (Journal.abandon):
    what a client that reattaches later is told."""
    return pb.RunResponse(
        run_failed=pb.RunFailed(
            reason=pb.FAILURE_REASON_CANCELLED,
            message=(
                "the run was abandoned: its server stopped and no client reattached within "
                f"{grace_s:g}s of its lease running out"
            ),
            details={"abandoned": "true", "reattach_grace_s": f"{grace_s:g}"},
        )
    )


async def end_abandoned(journal: Journal, grace_s: float, metrics: Metrics) -> list[str]:
    """End the journal's runs that no replica holds and no client came back
    for (their server died): otherwise they stay `running` until retention
    prunes them. Every replica calls this; each run is ended by one."""
    # At least one more lease: a holder whose loop stalled for a lease's
    # length is not declared dead at once (with --reattach-grace 0).
    grace_s = max(grace_s, LEASE_S)
    data = abandoned_event(grace_s).SerializeToString()
    ended = await journal.abandon(now(), grace_s, data)
    if ended:
        metrics.runs_abandoned.inc(len(ended))
        log.warning(
            "journal: ended %d runs as abandoned (no server held them and no client "
            "reattached within %gs): %s",
            len(ended), grace_s, ", ".join(ended[:10]) + (", ..." if len(ended) > 10 else ""),
        )  # fmt: skip
    return ended


def approver_for(run: LiveRun, resume: Resume | None) -> Approver:
    """Who decides on a call that needs approval: the client, unless it
    decided already before the run's server restarted."""
    if resume is None or not resume.approvals:
        return run.executor.approve
    decided = resume.approvals

    async def approve(call: ToolCallInfo, iteration: int) -> Approval:
        # A decision the client sent before the restart stands.
        known = decided.get(call.call_id)
        return known if known is not None else await run.executor.approve(call, iteration)

    return approve
