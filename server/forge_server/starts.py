"""A stream's first message read and checked: a StartRun parsed into a
RunStart (workflows parsed once and kept for the next run that sends the
same bytes), or a ReattachRun; and the rejections that name what was wrong.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
from google.protobuf.message import DecodeError

from forge.v1 import forge_service_pb2 as pb
from forge_core.messages import Message
from forge_core.workflow import RunOptions, Workflow, WorkflowError
from forge_server.convert import message_from_pb, options_from_pb, prior_from_pb, workflow_from_pb
from forge_server.errors import RequestRejected, clip

# A client-chosen run id.
_RUN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")

# Parsed workflows kept (by their bytes) for the next run that sends one.
WORKFLOW_CACHE_SIZE = 256
# A start whose workflow is known is parsed on the event loop up to this
# many prior messages (more go to a thread like a new workflow).
INLINE_PRIOR_MESSAGES = 64

# EventKind -> the RunResponse kind it leaves out.
_OMITTABLE = {
    pb.EVENT_KIND_CHUNK: "chunk",
    pb.EVENT_KIND_MESSAGE_APPENDED: "message_appended",
    pb.EVENT_KIND_COMPACTED: "compacted",
    pb.EVENT_KIND_QUEUED: "queued",
    pb.EVENT_KIND_TOOL_OUTPUT_SCREENED: "tool_output_screened",
}


@dataclass
class RunStart:
    workflow: Workflow
    options: RunOptions
    user_message: str
    prior: list[Message]
    labels: dict[str, str]
    session_id: str = ""
    # The StartRun as the client sent it (the journal keeps it).
    raw: bytes = b""
    # Chosen by the client ("": the server picks).
    run_id: str = ""
    # StartRun.events: kinds left out, and whether events are bundled.
    omit: frozenset[str] = frozenset()
    batch: bool = False


class StartReader:
    """Reads a stream's first message; keeps the parsed workflows."""

    def __init__(self, tool_output_secrets: str) -> None:
        # For workflows that leave Workflow.tool_output_secrets unspecified.
        self.tool_output_secrets = tool_output_secrets
        self._workflows: OrderedDict[bytes, Workflow] = OrderedDict()

    async def read_first(self, requests: AsyncIterator[pb.RunRequest]) -> RunStart | pb.ReattachRun:
        try:
            first = await anext(requests)
        except StopAsyncIteration:
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                "start",
                "the stream closed before a start message",
            ) from None
        except DecodeError as exc:
            raise unparsable("start", exc) from exc
        kind = first.WhichOneof("kind")
        if kind == "reattach":
            if not first.reattach.run_id:
                raise RequestRejected(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "INVALID_REQUEST",
                    "reattach.run_id",
                    "reattach.run_id must not be empty",
                )
            return first.reattach
        if kind != "start":
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_REQUEST",
                "start",
                f"the first message must be 'start' or 'reattach', got {kind!r}",
            )
        return await self.parse(first.start)

    async def parse(self, msg: pb.StartRun) -> RunStart:
        # Runs of one workflow share its parsed and compiled form.
        key = msg.workflow.SerializeToString(deterministic=True)
        known = self._workflows.get(key)
        try:
            if known is not None and len(msg.prior_messages) <= INLINE_PRIOR_MESSAGES:
                self._workflows.move_to_end(key)
                start = parse_start(msg, known)
            else:
                # Compiling up to 128 schemas takes a while: not on the event
                # loop, where it would stall every other run.
                start = await asyncio.to_thread(parse_start, msg, known)
                if known is None:
                    self._workflows[key] = start.workflow
                    if len(self._workflows) > WORKFLOW_CACHE_SIZE:
                        self._workflows.popitem(last=False)
        except WorkflowError as exc:
            raise RequestRejected(
                grpc.StatusCode.INVALID_ARGUMENT, "INVALID_WORKFLOW", exc.field, str(exc)
            ) from exc
        if not start.workflow.tool_output_secrets:
            start.workflow.tool_output_secrets = self.tool_output_secrets
        return start


def parse_start(msg: pb.StartRun, workflow: Workflow | None = None) -> RunStart:
    """`msg` checked and parsed; `workflow`: its workflow, parsed already."""
    if not msg.HasField("workflow"):
        raise WorkflowError("start.workflow", "is required")
    workflow = workflow or workflow_from_pb(msg.workflow)
    options = options_from_pb(msg.options)
    prior = prior_from_pb(msg.prior_messages)
    if not msg.user_message.strip():
        raise WorkflowError("start.user_message", "must not be empty")
    if msg.run_id and not _RUN_ID.fullmatch(msg.run_id):
        raise WorkflowError("start.run_id", "must be 1-64 of A-Z a-z 0-9 . _ -")
    return RunStart(
        workflow,
        options,
        msg.user_message,
        prior,
        dict(msg.labels),
        msg.session_id,
        msg.SerializeToString(),
        msg.run_id,
        omit=_omitted(msg.events),
        batch=msg.events.batch,
    )


def _omitted(events: pb.EventOptions) -> frozenset[str]:
    kinds = []
    for i, value in enumerate(events.omit):
        kind = _OMITTABLE.get(value)
        if kind is None:
            raise WorkflowError(
                f"start.events.omit[{i}]",
                f"{value} is not an event kind that can be left out (one of "
                + ", ".join(pb.EventKind.Name(k) for k in _OMITTABLE)
                + ")",
            )
        kinds.append(kind)
    return frozenset(kinds)


def session_messages(data: bytes) -> list[Message]:
    """A session's conversation, as the prior messages of its next run."""
    transcript = pb.RunCompleted.FromString(data).transcript
    return [
        message_from_pb(m, f"session[{i}]") for i, m in enumerate(transcript) if not m.transient
    ]


def unparsable(what: str, exc: DecodeError) -> RequestRejected:
    return RequestRejected(
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_REQUEST",
        "",
        f"{what} is not a valid forge.v1.RunRequest: {exc}",
    )


def echo(value: str) -> str:
    """A client-chosen string quoted in an error, short enough for a trailer."""
    return repr(clip(value, 64))


def not_found(run_id: str) -> RequestRejected:
    return RequestRejected(
        grpc.StatusCode.NOT_FOUND,
        "RUN_NOT_FOUND",
        "reattach.run_id",
        f"no run {echo(run_id)} on this server or in its journal (ended and pruned, or never "
        "started)",
    )


def check_owner(run_owner: str, caller: str) -> None:
    if run_owner != caller:
        raise RequestRejected(
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_RUN_OWNER",
            "reattach.run_id",
            "the run was started by another caller",
        )


def run_exists(run_id: str) -> RequestRejected:
    return RequestRejected(
        grpc.StatusCode.ALREADY_EXISTS,
        "RUN_EXISTS",
        "start.run_id",
        f"a run {echo(run_id)} exists already: reattach to it, or pick another id",
    )
