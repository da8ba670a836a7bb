"""The Forge client: a connection to a server; each run is one RunStream."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge.v1 import messages_pb2 as mpb
from forge_client.convert import message_from_pb, message_to_pb, server_info_from_pb
from forge_client.errors import ServerUnreachableError, rpc_error, run_failed
from forge_client.events import Approver, Event, RunResult
from forge_client.guard import GuardVerdict, verdict_from_pb
from forge_client.messages import Message, ServerInfo, ToolCall
from forge_client.options import RunOptions, omitted_event_kinds
from forge_client.stream import CONNECT_TIMEOUT_S, RunStream, ServerLink
from forge_client.tracing import run_metadata
from forge_client.workflow import Workflow

DEFAULT_ADDRESS = "127.0.0.1:50051"
# Where ForgeClient reads a bearer token from when none is given.
TOKEN_ENV = "FORGE_TOKEN"


class ForgeClient:
    """A connection to a Forge server.

    >>> async with ForgeClient("127.0.0.1:50051") as client:
    ...     result = await client.run(workflow, "What's the weather in Paris?")
    """

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        token: str | None = None,
        keepalive_s: float | None = 30.0,
        max_message_bytes: int = 16 * 1024 * 1024,
        channel_options: Sequence[tuple[str, Any]] = (),
        reattach: bool = True,
        reattach_deadline_s: float | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        """`token`: sent as `authorization: Bearer <token>`; None (the
        default) reads $FORGE_TOKEN, "" sends none.

        `channel_options` are gRPC channel arguments, passed to the channel
        after the SDK's own (one with the same name replaces the SDK's), e.g.
        `[("grpc.lb_policy_name", "round_robin")]` with a `dns:///` address.

        `reattach` (on by default): when a run's stream breaks and the server
        keeps the run (it has a journal: RunStarted.reattach_grace_s > 0),
        open a new stream and continue the run there, on this server or any
        replica sharing its journal; tools keep running meanwhile and no
        event is delivered twice. The SDK tries for the run's grace period,
        or at most `reattach_deadline_s` seconds when given, then raises
        ConnectionLostError. `reattach=False`: a broken stream raises
        ConnectionLostError at once, as without a journal.

        `connect_timeout_s` (5 s by default): until this client has had an
        answer from the server, a run whose server cannot be reached is tried
        for this long (a server still starting), with one warning logged,
        then raises ServerUnreachableError naming the address. Once the
        server has answered, a break is a restart and gets the reattach
        deadline above."""
        defaults: dict[str, Any] = {
            "grpc.max_receive_message_length": max_message_bytes,
            "grpc.max_send_message_length": max_message_bytes,
            # A server that restarts is dialled again within seconds, not
            # after gRPC's default backoff of up to two minutes.
            "grpc.max_reconnect_backoff_ms": 5000,
        }
        if keepalive_s:
            defaults.update(
                {
                    "grpc.keepalive_time_ms": int(keepalive_s * 1000),
                    "grpc.keepalive_permit_without_calls": 0,
                    # Keep pinging through a long tool call (gRPC stops after 2
                    # pings without data by default, which defeats keepalive).
                    "grpc.http2.max_pings_without_data": 0,
                }
            )
        defaults.update(dict(channel_options))
        options = list(defaults.items())
        if reattach_deadline_s is not None and reattach_deadline_s < 0:
            raise ValueError("reattach_deadline_s must be >= 0")
        if connect_timeout_s < 0:
            raise ValueError("connect_timeout_s must be >= 0")
        self._link = ServerLink(address, connect_timeout_s)
        self._reattach = reattach
        self._reattach_deadline_s = reattach_deadline_s
        if credentials is not None:
            self._channel = grpc.aio.secure_channel(address, credentials, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(address, options=options)
        if token is None:
            # As the Go and TypeScript SDKs: a deployment's token without code.
            token = os.environ.get(TOKEN_ENV) or None
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._stub = pb_grpc.ForgeServiceStub(self._channel)

    async def __aenter__(self) -> ForgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def server_info(self, timeout_s: float = 10.0) -> ServerInfo:
        try:
            info: pb.GetServerInfoResponse = await self._stub.GetServerInfo(
                pb.GetServerInfoRequest(), metadata=self._metadata, timeout=timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            raise rpc_error(exc) from exc
        return server_info_from_pb(info)

    async def wait_for_ready(self, timeout_s: float = 30.0) -> ServerInfo:
        """Wait until the server answers (a sidecar still starting), at most
        `timeout_s`, and return its ServerInfo; ServerUnreachableError naming
        the address when none answered in time. (gRPC's wait_for_ready: the
        call waits for the channel to connect instead of failing at once.)"""
        try:
            info: pb.GetServerInfoResponse = await self._stub.GetServerInfo(
                pb.GetServerInfoRequest(),
                metadata=self._metadata,
                timeout=timeout_s,
                wait_for_ready=True,
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                raise ServerUnreachableError(
                    f"no Forge server answered at {self._link.address} within {timeout_s:g}s"
                ) from exc
            raise rpc_error(exc) from exc
        self._link.reached = True
        return server_info_from_pb(info)

    def start(
        self,
        workflow: Workflow,
        user_message: str,
        *,
        prior_messages: Sequence[Message | mpb.Message] = (),
        options: RunOptions | None = None,
        labels: dict[str, str] | None = None,
        approve: Approver | None = None,
        session_id: str = "",
        omit_events: Sequence[str] = (),
    ) -> RunStream:
        """Open the run's stream. Iterate the returned RunStream for events;
        its `result` is set once iteration ends (or a typed error is raised).

        `approve` decides on destructive calls when the options ask for
        approval; without it every such call is denied. `prior_messages` are
        Messages from an earlier transcript (protobuf messages, as earlier
        releases returned, are still accepted). `session_id` carries the
        conversation across runs on the server: with no `prior_messages`,
        the run continues the session's last completed conversation.
        `omit_events` names event kinds the server need not send ("chunk",
        "message_appended", "compacted", "queued", "tool_output_screened"):
        the run and its final transcript are the same without them."""
        start = pb.StartRun(
            workflow=workflow.to_proto(),
            user_message=user_message,
            prior_messages=[message_to_pb(m) for m in prior_messages],
            options=(options or RunOptions()).to_proto(),
            labels=labels or {},
            session_id=session_id,
            # Named here, so a stream that breaks before run_started can
            # still reattach (or start the run again if it never arrived).
            run_id=uuid.uuid4().hex if self._reattach else "",
            # Several events per message where the run has them ready.
            events=pb.EventOptions(batch=True, omit=omitted_event_kinds(omit_events)),
        )
        # The caller's trace context goes with the stream (forge_client/tracing.py).
        metadata = self._metadata + run_metadata()
        call = self._stub.Run(metadata=metadata)
        return RunStream(
            call,
            workflow,
            start,
            approve,
            reopen=lambda: self._stub.Run(metadata=metadata),
            reattach=self._reattach,
            reattach_deadline_s=self._reattach_deadline_s,
            link=self._link,
        )

    async def run(
        self,
        workflow: Workflow,
        user_message: str,
        *,
        prior_messages: Sequence[Message | mpb.Message] = (),
        options: RunOptions | None = None,
        labels: dict[str, str] | None = None,
        on_event: Callable[[Event], Awaitable[None] | None] | None = None,
        approve: Approver | None = None,
        session_id: str = "",
        omit_events: Sequence[str] = (),
    ) -> RunResult:
        """Run the workflow to its terminal tool and return the result.

        Raises a RunFailedError subclass (ToolCallError, StepEnforcementError,
        ...) when the run fails, RequestRejectedError when the server refuses it.
        """
        stream = self.start(
            workflow,
            user_message,
            prior_messages=prior_messages,
            options=options,
            labels=labels,
            approve=approve,
            session_id=session_id,
            omit_events=omit_events,
        )
        if on_event is None:
            # Nobody reads the events: the stream skips building the
            # per-call ones (the run and its result are the same).
            stream.deliver_events = False
        async with contextlib.aclosing(stream):
            async for event in stream:
                if on_event is not None:
                    maybe = on_event(event)
                    if maybe is not None:
                        await maybe
        assert stream.result is not None
        return stream.result

    async def guard(
        self,
        workflow: Workflow,
        messages: Sequence[Message | mpb.Message],
        *,
        reply_text: str = "",
        reply_tool_calls: Sequence[ToolCall] = (),
        options: RunOptions | None = None,
        timeout_s: float | None = 30.0,
    ) -> GuardVerdict:
        """One guard decision for a loop that makes its own model calls.

        `messages` is the conversation so far (the user's request, each
        model turn's assistant message and its tool results, corrections from
        earlier retries); the model's reply to it is `reply_text` (raw text)
        or `reply_tool_calls` (a native tool-calling API's calls). Neither,
        with the terminal tool's result last in `messages`, asks whether the
        run is done. The workflow's tools are not called here.

        Returns GuardCalls (run them, append `verdict.message` and each
        call's `result_message(...)`), GuardRetry (append `verdict.messages`
        and ask the model again) or GuardDone. Raises a RunFailedError
        subclass when the guard gives up (as `run` would fail; its
        `transcript` is `messages`), RequestRejectedError naming the field
        for input the server cannot read.
        """
        sent = [message_to_pb(m) for m in messages]
        request = pb.GuardRequest(
            workflow=workflow.to_proto(),
            options=(options or RunOptions()).to_proto(),
            messages=sent,
            reply_text=reply_text,
            reply_tool_calls=[
                mpb.ToolCall(id=c.id, name=c.name, arguments_json=c.arguments_json)
                for c in reply_tool_calls
            ],
        )
        try:
            response: pb.GuardResponse = await self._stub.Guard(
                request, metadata=self._metadata, timeout=timeout_s
            )
        except grpc.aio.AioRpcError as exc:
            raise rpc_error(exc) from exc
        verdict = verdict_from_pb(response)
        if isinstance(verdict, pb.RunFailed):
            failed = run_failed(verdict)
            if not failed.transcript:
                failed.transcript = [message_from_pb(m) for m in sent]
            raise failed
        return verdict
