"""The OpenAI-compatible endpoint: POST /v1/chat/completions, GET /v1/models.

A Starlette app served by uvicorn in forge-server's own event loop, beside
the gRPC server and on the same backend (slots, budgets and the managed
llama-server are shared). Each request is one turn of a run: the loop
replays the conversation the caller resends (forge_core/replay.py), so
required steps, prerequisites and failed calls span requests, and then asks
the model with every guardrail on. Tools run in the caller, as the API
expects.

Streaming sends the model's tokens as they come: a tool call's name and
arguments as `tool_calls` deltas, a text answer as `content` deltas. When a
guardrail refuses what was already streamed (rare under the grammar, which
only admits calls that pass), one chunk carries the extension field
`forge.retry`, and what follows replaces what the choice had accumulated
(README, "OpenAI-compatible endpoint").

Named workflows: `PUT /v1/forge/workflows/{name}` (or --openai-workflows)
registers a workflow in forge.v1.Workflow's JSON form; a request names it
with the `X-Forge-Workflow` header or `metadata.forge_workflow`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from forge.v1 import workflow_pb2 as wpb
from forge_core.backends.base import Backend, ChunkType, StreamChunk, Usage
from forge_core.errors import FailureReason, ForgeError
from forge_core.loop import IterationChunkSink, MessageSink
from forge_core.messages import Message, MessageType, ToolCallInfo
from forge_core.replay import ConversationError, TurnCalls, TurnDone, next_turn
from forge_core.workflow import RESPOND_TOOL, WorkflowError
from forge_server.auth import Authenticator
from forge_server.convert import options_from_pb, workflow_from_pb
from forge_server.errors import RequestRejected
from forge_server.metrics import Metrics
from forge_server.openai_convert import (
    ApiError,
    ChatRequest,
    Registered,
    check_model,
    is_plain_chat,
    new_call_id,
    parse_request,
    request_messages,
    request_workflow,
)
from forge_server.openai_metrics import CountRequests
from forge_server.openai_plain import PlainAnswer, plain_turn
from forge_server.openai_stream import CallReader, partial_string_field
from forge_server.tracing import RunTrace, ServerTracing, traced_turn

log = logging.getLogger(__name__)

WORKFLOW_HEADER = "x-forge-workflow"
WORKFLOW_METADATA = "forge_workflow"
# "live" (default): deltas as the model writes them, a refused attempt marked
# by `forge.retry`; "accepted": each turn's calls or answer only once the
# guardrails accepted them, for clients whose accumulators cannot take the
# marker (the official SDKs' stream helpers).
STREAM_HEADER = "x-forge-stream"
STREAM_METADATA = "forge_stream"
STREAM_MODES = ("live", "accepted")
_NUDGES = (MessageType.RETRY_NUDGE, MessageType.STEP_NUDGE, MessageType.PREREQUISITE_NUDGE)

# HTTP status and OpenAI error type per failure: the model could not be made
# to produce an acceptable turn is the request's outcome (422), a backend
# outage is the server's (503).
_FAILURE_STATUS = {
    FailureReason.CONTEXT_BUDGET_EXCEEDED: (400, "invalid_request_error"),
    FailureReason.BACKEND: (503, "server_error"),
    FailureReason.INTERNAL: (500, "server_error"),
    FailureReason.SHUTTING_DOWN: (503, "server_error"),
    FailureReason.CANCELLED: (499, "server_error"),
}


class WorkflowRegistry:
    """Workflows by name, in forge.v1.Workflow's JSON form plus RunOptions."""

    def __init__(self) -> None:
        self._named: dict[str, Registered] = {}

    def get(self, name: str) -> Registered | None:
        return self._named.get(name)

    def names(self) -> list[str]:
        return sorted(self._named)

    def register(self, data: Any, name: str = "") -> Registered:
        """Raises ApiError naming the field."""
        if not isinstance(data, dict) or not isinstance(data.get("workflow"), dict):
            raise ApiError(
                400, 'the body must be {"workflow": {...}, "options": {...}}', param="workflow"
            )
        workflow_pb = wpb.Workflow()
        options_pb = wpb.RunOptions()
        try:
            json_format.ParseDict(data["workflow"], workflow_pb)
            json_format.ParseDict(data.get("options") or {}, options_pb)
        except json_format.ParseError as exc:
            raise ApiError(400, f"not a forge.v1 workflow: {exc}", param="workflow") from exc
        if name and workflow_pb.name and workflow_pb.name != name:
            raise ApiError(
                400, f"workflow.name {workflow_pb.name!r} is not {name!r}", param="workflow.name"
            )
        workflow_pb.name = workflow_pb.name or name
        try:
            registered = Registered(workflow_from_pb(workflow_pb), options_from_pb(options_pb))
        except WorkflowError as exc:
            raise ApiError(400, str(exc), param=exc.field) from exc
        self._named[registered.workflow.name] = registered
        return registered

    def remove(self, name: str) -> bool:
        return self._named.pop(name, None) is not None

    def load(self, path: Path) -> None:
        """A file holding a list of {"workflow": ..., "options": ...}."""
        entries = json.loads(path.read_text())
        if not isinstance(entries, list):
            raise SystemExit(f"{path}: expected a JSON list of {{workflow, options}} objects")
        for i, entry in enumerate(entries):
            try:
                self.register(entry)
            except ApiError as exc:
                raise SystemExit(f"{path}[{i}]: {exc.message}") from exc


@dataclass
class OpenAIEndpoint:
    backend: Backend
    registry: WorkflowRegistry = field(default_factory=WorkflowRegistry)
    auth: Authenticator | None = None
    # Workflows that leave tool_output_secrets unspecified.
    tool_output_secrets: str = "allow"
    # The gRPC server's, so that one /metrics counts both APIs.
    metrics: Metrics | None = None
    # A run span per request, child of its traceparent header; None: off.
    tracing: ServerTracing | None = None

    def app(self) -> Starlette:
        middleware = [Middleware(CountRequests, metrics=self.metrics)] if self.metrics else []
        return Starlette(
            middleware=middleware,
            routes=[
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/v1/forge/workflows", self.list_workflows, methods=["GET"]),
                Route(
                    "/v1/forge/workflows/{name}",
                    self.workflow,
                    methods=["GET", "PUT", "DELETE"],
                ),
            ],
            exception_handlers={ApiError: _error_response, 404: _not_found, 405: _not_allowed},
        )

    async def _authenticate(self, request: Request) -> None:
        if self.auth is None:
            return
        header = request.headers.get("authorization", "")
        try:
            await self.auth.authenticate([("authorization", header)])
        except RequestRejected as exc:
            status = 401 if exc.reason == "UNAUTHENTICATED" else 403
            raise ApiError(
                status, exc.message, type_="authentication_error", code="invalid_api_key"
            ) from exc

    async def models(self, request: Request) -> Response:
        await self._authenticate(request)
        info = self.backend.info()
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": info.model, "object": "model", "created": 0, "owned_by": "forge"}],
            }
        )

    async def list_workflows(self, request: Request) -> Response:
        await self._authenticate(request)
        return JSONResponse({"object": "list", "data": self.registry.names()})

    async def workflow(self, request: Request) -> Response:
        await self._authenticate(request)
        name = request.path_params["name"]
        if request.method == "PUT":
            try:
                data = json.loads(await request.body())
            except json.JSONDecodeError as exc:
                raise ApiError(400, f"the body is not JSON: {exc}") from exc
            registered = self.registry.register(data, name)
            return JSONResponse({"name": registered.workflow.name, "registered": True})
        if request.method == "DELETE":
            if not self.registry.remove(name):
                raise ApiError(
                    404, f"no workflow {name!r}", param="name", code="workflow_not_found"
                )
            return JSONResponse({"name": name, "deleted": True})
        found = self.registry.get(name)
        if found is None:
            raise ApiError(404, f"no workflow {name!r}", param="name", code="workflow_not_found")
        return JSONResponse({"name": name, "tools": [t.name for t in found.workflow.tools]})

    async def completions(self, request: Request) -> Response:
        await self._authenticate(request)
        body = parse_request(await request.body())
        check_model(body.model, self.backend.info().model)
        turn = self._turn(request, body)
        if body.stream:
            return StreamingResponse(
                self._stream(body, turn),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        try:
            verdict = await traced_turn(turn.trace, live_turn(turn, self.backend), _verdict_usage)
        except ForgeError as exc:
            raise failure_error(exc) from exc
        except ConversationError as exc:
            raise ApiError(400, str(exc), param=exc.field_path) from exc
        self._count_usage(verdict)
        return JSONResponse(turn.completion(verdict))

    def _count_usage(self, verdict: Answer) -> None:
        if self.metrics is not None:
            self.metrics.usage(_verdict_usage(verdict))

    def _turn(self, request: Request, body: ChatRequest) -> _Turn:
        name, where = _named(request, body, WORKFLOW_HEADER, WORKFLOW_METADATA)
        registered = None
        if name:
            registered = self.registry.get(name)
            if registered is None:
                raise ApiError(
                    404,
                    f"no workflow {name!r} is registered (PUT /v1/forge/workflows/{{name}})",
                    param=where,
                    code="workflow_not_found",
                )
        mode, where = _named(request, body, STREAM_HEADER, STREAM_METADATA)
        if mode and mode not in STREAM_MODES:
            raise ApiError(400, f"{where}: one of {', '.join(STREAM_MODES)}", param=where)
        resolved = request_workflow(body, registered)
        if not resolved.workflow.tool_output_secrets:
            resolved.workflow.tool_output_secrets = self.tool_output_secrets
        plain = is_plain_chat(body, registered)
        messages = request_messages(body, resolved.workflow, plain)
        # The model that served it, as OpenAI reports the resolved model.
        model = self.backend.info().model
        turn = _Turn(body, resolved, messages, model, mode or "live", plain=plain)
        if self.tracing is not None:
            turn.trace = self.tracing.start_run(
                self.backend, turn.id, resolved.workflow.name, request.headers.items(),
                api="openai",
            )  # fmt: skip
        return turn

    async def _stream(self, body: ChatRequest, turn: _Turn) -> AsyncIterator[str]:
        events: asyncio.Queue[tuple[StreamChunk | Message | None, int]] = asyncio.Queue()

        async def on_chunk(chunk: StreamChunk, iteration: int) -> None:
            await events.put((chunk, iteration))

        async def on_message(message: Message, index: int) -> None:
            if message.type in _NUDGES:
                await events.put((message, 0))

        task = asyncio.ensure_future(
            traced_turn(
                turn.trace, live_turn(turn, self.backend, on_chunk, on_message), _verdict_usage
            )
        )
        task.add_done_callback(lambda _: events.put_nowait((None, 0)))
        writer = _StreamWriter(turn)
        try:
            # content null: whether text follows is not known yet.
            yield writer.sse({"role": "assistant", "content": None})
            while True:
                event, iteration = await events.get()
                if event is None:
                    break
                if isinstance(event, Message):
                    writer.refused(event.content)
                    continue
                for out in writer.chunk(event, iteration):
                    yield out
            try:
                verdict = task.result()
            except (ForgeError, ConversationError) as exc:
                error = (
                    failure_error(exc)
                    if isinstance(exc, ForgeError)
                    else ApiError(400, str(exc), param=exc.field_path)
                )
                yield "data: " + json.dumps(error.body()) + "\n\n"
                yield "data: [DONE]\n\n"
                return
            self._count_usage(verdict)
            for out in writer.finish(verdict):
                yield out
            if body.stream_options is not None and body.stream_options.include_usage:
                yield writer.usage_chunk(verdict)
            yield "data: [DONE]\n\n"
        finally:
            if not task.done():
                # The client went away: stop the model call.
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


Answer = TurnCalls | TurnDone | PlainAnswer


async def live_turn(
    turn: _Turn,
    backend: Backend,
    on_chunk: IterationChunkSink | None = None,
    on_message: MessageSink | None = None,
) -> Answer:
    """The turn with the model behind it: refusals are retried inside."""
    if turn.plain:
        sink = None
        if on_chunk is not None:
            iteration_sink = on_chunk

            async def sink(chunk: StreamChunk) -> None:
                await iteration_sink(chunk, 0)

        workflow = turn.registered.workflow
        return await plain_turn(
            backend, workflow.name, turn.messages, turn.registered.options, sink
        )
    verdict = await next_turn(
        turn.registered.workflow,
        turn.messages,
        options=turn.registered.options,
        backend=backend,
        on_chunk=on_chunk,
        on_message=on_message,
    )
    if not isinstance(verdict, TurnCalls | TurnDone):
        raise ForgeError("the guard asked for a retry with a model behind it")
    return verdict


@dataclass
class _Turn:
    body: ChatRequest
    registered: Registered
    messages: list[Message]
    model: str
    # One of STREAM_MODES.
    stream_mode: str = "live"
    # No tools and no workflow: a plain answer, straight from the model.
    plain: bool = False
    id: str = field(default_factory=lambda: "chatcmpl-" + uuid.uuid4().hex[:24])
    created: int = field(default_factory=lambda: int(time.time()))
    # Its run span (tracing on).
    trace: RunTrace | None = None

    def completion(self, verdict: Answer) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(verdict, TurnCalls):
            message["tool_calls"] = [_call_json(c, new_call_id()) for c in verdict.calls]
            finish = "tool_calls"
        elif isinstance(verdict, PlainAnswer):
            message["content"] = verdict.text
            finish = "length" if verdict.truncated else "stop"
        else:
            message["content"] = verdict.result.result
            finish = "stop"
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": _usage(verdict),
            "forge": self.extension(verdict),
        }

    def extension(self, verdict: Answer) -> dict[str, Any]:
        """What Forge adds: which workflow, its coercions, whether it is done."""
        out: dict[str, Any] = {"workflow": self.registered.workflow.name}
        usage = _verdict_usage(verdict)
        out["model_calls"] = usage.model_calls
        # llama-server's own timings, summed: what the model took of the wall time.
        out["prompt_ms"] = round(usage.prompt_ms, 3)
        out["generation_ms"] = round(usage.generation_ms, 3)
        if isinstance(verdict, TurnCalls):
            out["coercions"] = [
                {"tool": c.name, "path": k.path, "original": k.original, "coerced": k.coerced}
                for c in verdict.calls
                for k in c.coercions
            ]
        elif isinstance(verdict, PlainAnswer):
            # No tools, so nothing for the guardrails to check or end.
            out["plain"] = True
        else:
            out["done"] = {
                "terminal_tool": verdict.result.terminal_tool,
                "terminal_call_id": verdict.result.terminal_call_id,
            }
        return out


class _StreamWriter:
    """SSE chunks for one turn: deltas while the model writes, a `forge.retry`
    marker when a refused attempt's deltas must be dropped."""

    def __init__(self, turn: _Turn) -> None:
        self.turn = turn
        self.iteration = -1
        self.attempt = 0
        self.reason = ""
        self._reset()

    def _reset(self) -> None:
        self.reader = CallReader()
        self.sent_anything = False
        self.content = ""
        # Reader index -> (OpenAI tool_calls index, id); respond calls: -1.
        self.indices: dict[int, tuple[int, str]] = {}

    def sse(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        chunk: dict[str, Any] = {
            "id": self.turn.id,
            "object": "chat.completion.chunk",
            "created": self.turn.created,
            "model": self.turn.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        chunk.update(extra)
        return "data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n"

    def refused(self, reason: str) -> None:
        self.reason = reason

    def _restart(self) -> list[str]:
        """A new attempt: what the last one streamed is void."""
        out = []
        if self.sent_anything:
            self.attempt += 1
            out.append(
                self.sse(
                    {},
                    forge={"retry": {"attempt": self.attempt, "reason": self.reason}},
                )
            )
        self._reset()
        return out

    def chunk(self, chunk: StreamChunk, iteration: int) -> list[str]:
        out: list[str] = []
        if iteration != self.iteration or chunk.type is ChunkType.RETRY:
            self.iteration = iteration
            out += self._restart()
        if chunk.type not in (ChunkType.TOOL_CALL_DELTA, ChunkType.TEXT_DELTA):
            return out
        if self.turn.stream_mode != "live":
            # Sent whole by finish() once accepted.
            return out
        if self.turn.plain:
            if chunk.content:
                out.append(self.sse({"content": chunk.content}))
                self.content += chunk.content
                self.sent_anything = True
            return out
        for delta in self.reader.feed(chunk.content):
            if delta.name is not None:
                if delta.name == RESPOND_TOOL:
                    self.indices[delta.index] = (-1, "")
                else:
                    k = sum(1 for v in self.indices.values() if v[0] >= 0)
                    call_id = new_call_id()
                    self.indices[delta.index] = (k, call_id)
                    out.append(
                        self.sse(
                            {
                                "tool_calls": [
                                    {
                                        "index": k,
                                        "id": call_id,
                                        "type": "function",
                                        "function": {"name": delta.name, "arguments": ""},
                                    }
                                ]
                            }
                        )
                    )
                    self.sent_anything = True
            k, _ = self.indices[delta.index]
            if k < 0:
                text = partial_string_field(self.reader.calls[delta.index].args, "message")
                if (
                    text is not None
                    and len(text) > len(self.content)
                    and text.startswith(self.content)
                ):
                    out.append(self.sse({"content": text[len(self.content) :]}))
                    self.content = text
                    self.sent_anything = True
            elif delta.args:
                out.append(
                    self.sse({"tool_calls": [{"index": k, "function": {"arguments": delta.args}}]})
                )
        return out

    def streamed_calls(self) -> list[tuple[str, Any]]:
        calls = []
        for i, call in enumerate(self.reader.calls):
            if self.indices.get(i, (-1, ""))[0] < 0:
                continue
            try:
                args = json.loads(call.args) if call.args_done else None
            except json.JSONDecodeError:
                args = None
            calls.append((call.name or "", args))
        return calls

    def finish(self, verdict: Answer) -> list[str]:
        out: list[str] = []
        extension = self.turn.extension(verdict)
        if isinstance(verdict, TurnCalls):
            accepted = [(c.name, c.args) for c in verdict.calls]
            if accepted != self.streamed_calls() or self.content:
                # Not what was streamed (coerced, read differently, or not
                # readable while it streamed): the accepted calls, whole.
                self.reason = self.reason or "the accepted calls differ from what was streamed"
                out += self._restart()
                for k, call in enumerate(verdict.calls):
                    entry = _call_json(call, new_call_id())
                    out.append(self.sse({"tool_calls": [{"index": k, **entry}]}))
            out.append(self.sse({}, "tool_calls", forge=extension))
            return out
        if isinstance(verdict, PlainAnswer):
            if self.content != verdict.text:
                self.reason = self.reason or "the answer differs from what was streamed"
                out += self._restart()
                out.append(self.sse({"content": verdict.text}))
            finish = "length" if verdict.truncated else "stop"
            out.append(self.sse({}, finish, forge=extension))
            return out
        result = verdict.result.result
        if self.content != result or self.streamed_calls():
            self.reason = self.reason or "the answer differs from what was streamed"
            out += self._restart()
            out.append(self.sse({"content": result}))
        out.append(self.sse({}, "stop", forge=extension))
        return out

    def usage_chunk(self, verdict: Answer) -> str:
        chunk = json.loads(self.sse({})[6:])
        chunk["choices"] = []
        chunk["usage"] = _usage(verdict)
        return "data: " + json.dumps(chunk) + "\n\n"


def _named(request: Request, body: ChatRequest, header: str, key: str) -> tuple[str, str]:
    """A Forge setting from its header, else from `metadata`; and where it
    came from, for an error's `param`."""
    value = request.headers.get(header)
    if value:
        return value, header.title()
    return (body.metadata or {}).get(key, ""), f"metadata.{key}"


def _call_json(call: ToolCallInfo, call_id: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments_json()},
    }


def _verdict_usage(verdict: Answer) -> Usage:
    if isinstance(verdict, TurnCalls | PlainAnswer):
        return verdict.usage
    return verdict.result.usage


def _usage(verdict: Answer) -> dict[str, int]:
    usage = _verdict_usage(verdict)
    prompt, completion = usage.prompt_tokens, usage.completion_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def failure_error(exc: ForgeError) -> ApiError:
    status, type_ = _FAILURE_STATUS.get(exc.reason, (422, "forge_guardrail_error"))
    code = (
        "context_length_exceeded"
        if exc.reason is FailureReason.CONTEXT_BUDGET_EXCEEDED
        else exc.reason.lower()
    )
    return ApiError(status, str(exc), type_=type_, code=code)


async def _error_response(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), status_code=exc.status)


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse(
        ApiError(404, f"no route {request.url.path}", code="not_found").body(), status_code=404
    )


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return JSONResponse(
        ApiError(405, f"{request.method} is not allowed on {request.url.path}").body(),
        status_code=405,
    )


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # forge-server's own SIGTERM/SIGINT handlers drain both servers;
        # uvicorn's would replace them.
        yield


class OpenAIServer:
    """uvicorn serving the endpoint inside the running event loop."""

    def __init__(self, server: uvicorn.Server, task: asyncio.Task[None], port: int) -> None:
        self.server = server
        self.task = task
        self.port = port

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 5.0)


async def serve_openai(endpoint: OpenAIEndpoint, host: str, port: int) -> OpenAIServer:
    """Start the endpoint on host:port (0: a free port) in this event loop."""
    config = uvicorn.Config(
        endpoint.app(),
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        # Forge's own handlers own SIGTERM/SIGINT (graceful drain).
        timeout_graceful_shutdown=2,
    )
    server = _EmbeddedServer(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise OSError(f"the OpenAI endpoint did not start on {host}:{port}")
        await asyncio.sleep(0.02)
    sockets = [s for srv in server.servers for s in srv.sockets]
    bound = sockets[0].getsockname()[1] if sockets else port
    return OpenAIServer(server, task, bound)
