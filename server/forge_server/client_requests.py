"""A client's messages after its stream's first: tool results, approval
decisions and cancels, routed into the run the stream is attached to.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import grpc
from google.protobuf.message import DecodeError

from forge.v1 import forge_service_pb2 as pb
from forge_server.answer_keys import AnswerKey
from forge_server.errors import RequestRejected
from forge_server.executor import invalid_result, outcome_of
from forge_server.journal import Journal
from forge_server.runs import Attachment, LiveRun
from forge_server.starts import echo, unparsable

log = logging.getLogger(__name__)

# A client's cancellation and the end of its requests arrive together; this
# long after the end, an RPC not marked cancelled was half-closed.
HALF_CLOSE_SETTLE_S = 0.05


async def read_rest(
    requests: AsyncIterator[pb.RunRequest],
    run: LiveRun | None,
    attachment: Attachment,
    context: grpc.aio.ServicerContext[pb.RunRequest, pb.RunResponse],
    journal: Journal | None,
) -> None:
    """Route the client's messages after start into `run` until the stream
    ends; a half-close cancels the run (its client will answer nothing more),
    a protocol error rejects it."""
    try:
        async for request in requests:
            if run is None:
                continue  # an ended run's replay: nothing to route
            rejected = await route(request, run, journal)
            if rejected is not None:
                await run.reject(rejected)
                return
    except DecodeError as exc:
        # Left alone, this would end only this task: the run would wait
        # for the tool timeout with the stream still open.
        if run is not None:
            await run.reject(unparsable("a message after start", exc))
        return
    except Exception:
        # The connection broke: the handler detaches the run.
        log.debug("reading the client's stream failed", exc_info=True)
        return
    # A cancelled RPC (the connection broke) ends the requests too; give
    # the cancellation a moment to show before reading it as a half-close.
    await asyncio.sleep(HALF_CLOSE_SETTLE_S)
    if context.cancelled() or context.done():
        return
    # The client half-closed: it will answer nothing more on this stream.
    if run is not None and run.attachment is attachment:
        run.cancel.set()


async def route(
    request: pb.RunRequest, run: LiveRun, journal: Journal | None
) -> RequestRejected | None:
    """Deliver one client message after start; the rejection that ends the
    stream when it is a protocol error. With a journal, a result is
    written as it takes effect, and committed before anything that
    follows from it reaches a client (LiveRun.durable): a server that
    dies first asks for it again on the next stream, whose SDK sends the
    answer it kept. A result sent again is ignored (the executor counts
    each call's first)."""
    executor = run.executor
    kind = request.WhichOneof("kind")
    if kind == "tool_result":
        result = request.tool_result
        bad_field = invalid_result(result)
        if bad_field:
            return RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                bad_field,
                f"{bad_field}: unknown enum value {result.error.kind}",
            )
        if not run.asked(result.call_id):
            return unknown_call("tool_result.call_id", result.call_id)
        if journal is not None:
            run.journal_write(
                journal.keep_result(
                    run.run_id, AnswerKey(result.call_id).stored(), result.SerializeToString()
                )
            )
        if not executor.resolve(result):
            # Sent before a restart, not sent again yet: kept for when
            # the resumed run gets to it.
            run.early[result.call_id] = outcome_of(result)
    elif kind == "approval":
        decision = request.approval
        if not executor.knows_approval(decision.call_id):
            return unknown_call("approval.call_id", decision.call_id)
        if journal is not None:
            run.journal_write(
                journal.keep_result(
                    run.run_id,
                    AnswerKey.decision(decision.call_id).stored(),
                    decision.SerializeToString(),
                )
            )
        executor.decide(decision)
    elif kind == "cancel":
        run.cancel.set()
    else:
        return RequestRejected(
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
            kind or "kind",
            f"unexpected {kind or 'empty'} message after start",
        )
    return None


def unknown_call(field: str, call_id: str) -> RequestRejected:
    what = "tool call" if field.startswith("tool_result") else "call to be approved"
    return RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_CALL_ID",
        field,
        f"{field} {echo(call_id)} does not match any {what} the server is waiting for",
    )
