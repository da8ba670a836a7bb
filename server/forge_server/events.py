"""The engine's events as wire messages: what a run's RunHooks turn into
(RunEvents), its outcome (RunCompleted, RunFailed), and how an event is fit
to the message size limit and bundled with those ready after it.

Each message is converted to protobuf once per run (WireMessages): it goes
out when appended and again in the final transcript.
"""

from __future__ import annotations

import logging

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge_core.backends.base import StreamChunk
from forge_core.context import CompactionResult
from forge_core.errors import FailureReason, ForgeError
from forge_core.guardrails.screening import Screening
from forge_core.hooks import RunHooks
from forge_core.loop import RunResult
from forge_core.messages import Message, ToolCallInfo
from forge_core.tool_execution import Approver
from forge_server.convert import SECRETS_POLICY_TO_PB, message_to_pb, reason_to_pb, usage_to_pb
from forge_server.errors import clip
from forge_server.metrics import Metrics
from forge_server.runs import EMPTY, Attachment, LiveRun

log = logging.getLogger(__name__)

CHUNK_TO_PB = {
    "text_delta": pb.CHUNK_TYPE_TEXT_DELTA,
    "tool_call_delta": pb.CHUNK_TYPE_TOOL_CALL_DELTA,
    "final": pb.CHUNK_TYPE_FINAL,
    "retry": pb.CHUNK_TYPE_RETRY,
}

# The most events one EventBatch carries.
MAX_BATCH_EVENTS = 64


class WireMessages:
    """One run's messages on the wire, each converted once. Callers copy a
    converted message into their own (protobuf fields copy on assignment)
    and never change it."""

    __slots__ = ("_converted",)

    def __init__(self) -> None:
        # id(message) -> (message, its protobuf); the message is held so its
        # id is not reused while the run lives.
        self._converted: dict[int, tuple[Message, mpb.Message]] = {}

    def of(self, message: Message) -> mpb.Message:
        known = self._converted.get(id(message))
        if known is not None:
            return known[1]
        converted = message_to_pb(message)
        self._converted[id(message)] = (message, converted)
        return converted

    def transcript(self, messages: list[Message]) -> list[mpb.Message]:
        return [self.of(m) for m in messages]

    def completed(self, result: RunResult) -> pb.RunResponse:
        return pb.RunResponse(
            run_completed=pb.RunCompleted(
                terminal_tool=result.terminal_tool,
                terminal_call_id=result.terminal_call_id,
                result=result.result,
                iterations=result.iterations,
                usage=usage_to_pb(result.usage),
                transcript=self._transcript_without_result(result),
            )
        )

    def failed(self, reason: FailureReason, message: str, exc: ForgeError | None) -> pb.RunResponse:
        return pb.RunResponse(
            run_failed=pb.RunFailed(
                reason=reason_to_pb(reason),
                message=message,
                details=exc.details if exc else {},
                iterations=exc.iterations if exc else 0,
                usage=usage_to_pb(exc.usage if exc else None),
                transcript=self.transcript(exc.transcript) if exc else [],
            )
        )

    def _transcript_without_result(self, result: RunResult) -> list[mpb.Message]:
        """The transcript with the terminal result's content left out: it is
        RunCompleted.result already, and a large result sent twice halves the
        size a completion message can carry."""
        out = self.transcript(result.transcript)
        for i in reversed(range(len(out))):
            message = out[i]
            if message.role == mpb.ROLE_TOOL and message.tool_call_id == result.terminal_call_id:
                if message.content == result.result:
                    # A copy: the cached one stays the message as it was.
                    out[i] = mpb.Message()
                    out[i].CopyFrom(message)
                    out[i].content = ""
                break
        return out


class RunEvents:
    """A run's RunHooks: each engine event counted in the metrics, logged
    where it matters, and emitted to the run as its wire message."""

    def __init__(
        self,
        run: LiveRun,
        metrics: Metrics,
        rlog: logging.LoggerAdapter[logging.Logger],
        wire: WireMessages,
        journaled: int = 0,
    ) -> None:
        self.run = run
        self.metrics = metrics
        self.rlog = rlog
        self.wire = wire
        # Messages already journaled (and maybe seen) by a run that starts
        # again are not sent twice: a fresh start appends the same ones.
        self.journaled = journaled

    def hooks(self, approver: Approver) -> RunHooks:
        return RunHooks(
            on_message=self.on_message,
            on_chunk=self.on_chunk,
            on_compact=self.on_compact,
            on_queue=self.on_queue,
            on_screen=self.on_screen,
            approver=approver,
        )

    async def on_message(self, message: Message, index: int) -> None:
        if index < self.journaled:
            return
        self.metrics.message(message)
        if not self.run.builds("message_appended"):
            return
        await self.run.emit(
            pb.RunResponse(
                message_appended=pb.MessageAppended(message=self.wire.of(message), index=index)
            )
        )

    async def on_chunk(self, chunk: StreamChunk, iteration: int) -> None:
        if not self.run.builds("chunk"):
            return
        await self.run.emit(
            pb.RunResponse(
                chunk=pb.StreamChunk(
                    type=CHUNK_TO_PB[chunk.type.value],
                    content=chunk.content,
                    iteration=iteration,
                )
            )
        )

    async def on_compact(self, result: CompactionResult, iteration: int) -> None:
        self.metrics.compactions.labels(result.strategy).inc()
        self.rlog.info(
            "run %s compacted (%s phase %d): %d -> %d tokens",
            self.run.run_id, result.strategy, result.phase, result.tokens_before,
            result.tokens_after,
        )  # fmt: skip
        await self.run.emit(
            pb.RunResponse(
                compacted=pb.Compacted(
                    iteration=iteration,
                    phase=result.phase,
                    tokens_before=result.tokens_before,
                    tokens_after=result.tokens_after,
                    messages_before=result.messages_before,
                    messages_after=len(result.messages),
                    strategy=result.strategy,
                )
            )
        )

    async def on_screen(self, call: ToolCallInfo, screening: Screening, iteration: int) -> None:
        # Types and counts only: the secret itself goes nowhere.
        self.rlog.info(
            "run %s: %s %d secret(s) in the output of %s (%s)",
            self.run.run_id, "redacted" if screening.action == "redact" else "withheld",
            screening.count, call.name, ", ".join(screening.secret_types),
        )  # fmt: skip
        self.metrics.interventions.labels(f"secrets_{screening.action}").inc()
        await self.run.emit(
            pb.RunResponse(
                tool_output_screened=pb.ToolOutputScreened(
                    call_id=call.call_id,
                    tool_name=call.name,
                    action=SECRETS_POLICY_TO_PB[screening.action],
                    secret_types=list(screening.secret_types),
                    secrets=screening.count,
                    iteration=iteration,
                )
            )
        )

    async def on_queue(self, position: int, preempted: bool, iteration: int) -> None:
        await self.run.emit(
            pb.RunResponse(
                queued=pb.Queued(position=position, iteration=iteration, preempted=preempted)
            )
        )


def bundle(
    first: pb.RunResponse, attachment: Attachment, limit: int
) -> tuple[pb.RunResponse, object]:
    """`first` and the events ready after it, as one message (an EventBatch
    when there are several) within `limit` bytes; and what was taken but not
    sent (EMPTY, the end of the stream, or an event for the next message)."""
    first = fit(first, limit)
    events = [first]
    # Batch framing: a tag and a length per event, and the batch's own.
    room = limit - first.ByteSize() - 32
    held: object = EMPTY
    while len(events) < MAX_BATCH_EVENTS:
        item = attachment.ready()
        if not isinstance(item, pb.RunResponse):
            held = item
            break
        size = item.ByteSize()
        if size + 16 > room:
            held = item
            break
        room -= size + 16
        events.append(item)
    if len(events) == 1:
        return first, held
    return pb.RunResponse(batch=pb.EventBatch(events=events), seq=events[-1].seq), held


def fit(response: pb.RunResponse, limit: int) -> pb.RunResponse:
    """`response` made to fit the message size limit instead of failing the
    stream with RESOURCE_EXHAUSTED and losing the outcome.

    A final message drops its transcript (and says so): the client already has
    every message from `message_appended`. Text that alone is over the limit
    is cut, with a marker saying so.
    """
    size = original = response.ByteSize()
    if size <= limit:
        return response
    kind = response.WhichOneof("kind")
    if kind in ("run_completed", "run_failed"):
        final = response.run_completed if kind == "run_completed" else response.run_failed
        del final.transcript[:]
        final.transcript_omitted = True
        size = response.ByteSize()
        if size > limit and kind == "run_completed":
            response.run_completed.result = _cut(response.run_completed.result, size - limit)
    elif kind == "message_appended":
        message = response.message_appended.message
        message.content = _cut(message.content, size - limit)
    log.warning(
        "a %s event of %d bytes was cut to the %d-byte message limit", kind, original, limit
    )
    return response


def _cut(text: str, excess: int) -> str:
    keep = max(0, len(text.encode()) - excess - 64)
    return clip(text, keep)
