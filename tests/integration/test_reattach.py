"""Durable runs on the real loopback server with the SQLite journal, through
the generated stubs: a broken stream detaches its run, a new stream
reattaches and gets what it missed; results count once per call id; a run
nobody reattaches to is cancelled after the grace period; a finished run
replays its end; sessions carry the conversation. The model is a
ScriptedBackend.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client.errors import rejected_error as _rejected
from forge_core.backends.scripted import ScriptedBackend
from forge_server.app import ForgeServer, ServerOptions
from forge_server.journal.sqlite import SqliteJournal
from tests.helpers import address, running_server, settled
from tests.integration.test_run_stream import WEATHER_SCRIPT, weather_workflow


@asynccontextmanager
async def journaled(
    tmp_path: Path, grace_s: float = 30.0, script: Any = None
) -> AsyncIterator[tuple[ForgeServer, Any]]:
    """The server and a stub; typed Any: the generated stubs' types are the
    sync ones, not grpc.aio's."""
    journal = SqliteJournal(tmp_path / "journal.db")
    await journal.open()
    backend = ScriptedBackend(scripts={"weather": script or WEATHER_SCRIPT})
    options = ServerOptions(host="127.0.0.1", port=0, journal=journal, reattach_grace_s=grace_s)
    try:
        async with running_server(backend, options) as server:
            async with grpc.aio.insecure_channel(address(server)) as channel:
                yield server, pb_grpc.ForgeServiceStub(channel)
    finally:
        await journal.aclose()


def start(**kwargs: Any) -> pb.RunRequest:
    return pb.RunRequest(
        start=pb.StartRun(
            workflow=weather_workflow([]).to_proto(), user_message="Weather in Paris?", **kwargs
        )
    )


async def until(call: Any, kind: str) -> list[pb.RunResponse]:
    """Events read from `call` up to and including the first of `kind`."""
    seen = []
    while True:
        event = await asyncio.wait_for(call.read(), 10)
        assert event is not grpc.aio.EOF, f"stream ended before {kind}"
        seen.append(event)
        if event.WhichOneof("kind") == kind:
            return seen


def result(call_id: str, output: str) -> pb.RunRequest:
    return pb.RunRequest(tool_result=pb.ToolResult(call_id=call_id, output=output))


async def test_a_dropped_stream_reattaches_and_gets_what_it_missed(tmp_path: Path) -> None:
    async with journaled(tmp_path) as (server, stub):
        first = stub.Run()
        await first.write(start())
        events = await until(first, "tool_call")
        run_id = events[0].run_started.run_id
        assert events[0].run_started.reattach_grace_s == 30
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        call_id = events[-1].tool_call.call_id
        # Seen up to the event before the call; then the connection breaks.
        seen = events[-2].seq
        first.cancel()
        await settled(lambda: server.service.runs.live[run_id].attachment is None)
        assert server.service.active_runs == 1  # still alive, waiting

        second = stub.Run()
        await second.write(pb.RunRequest(reattach=pb.ReattachRun(run_id=run_id, after_seq=seen)))
        again = await until(second, "tool_call")
        assert again[0].run_started.reattached and again[0].seq == 0
        # Exactly what was missed: the call, with its original number.
        assert [e.seq for e in again[1:]] == [seen + 1]
        assert again[-1].tool_call.call_id == call_id
        await second.write(result(call_id, "72F and sunny in Paris"))
        # The same result again (the client was not sure it arrived): ignored.
        await second.write(result(call_id, "a second answer"))
        report = (await until(second, "tool_call"))[-1].tool_call
        await second.write(result(report.call_id, "reported"))
        done = (await until(second, "run_completed"))[-1]
        assert done.run_completed.terminal_tool == "report_weather"
        contents = [m.content for m in done.run_completed.transcript]
        assert "72F and sunny in Paris" in contents and "a second answer" not in contents


async def test_a_call_seen_before_the_break_is_sent_again_on_reattach(tmp_path: Path) -> None:
    async with journaled(tmp_path) as (_, stub):
        first = stub.Run()
        await first.write(start())
        events = await until(first, "tool_call")
        run_id, call = events[0].run_started.run_id, events[-1]
        first.cancel()
        second = stub.Run()
        await second.write(
            pb.RunRequest(reattach=pb.ReattachRun(run_id=run_id, after_seq=call.seq))
        )
        again = await until(second, "tool_call")
        # Nothing new since, but the call still waits for its result.
        assert [e.WhichOneof("kind") for e in again] == ["run_started", "tool_call"]
        assert again[-1].tool_call.call_id == call.tool_call.call_id
        second.cancel()


async def test_a_run_nobody_reattaches_to_is_cancelled_after_the_grace(tmp_path: Path) -> None:
    async with journaled(tmp_path, grace_s=0.3) as (server, stub):
        first = stub.Run()
        await first.write(start())
        run_id = (await until(first, "tool_call"))[0].run_started.run_id
        first.cancel()
        await settled(lambda: server.service.active_runs == 0)
        # Its end is journaled: a late reattach gets the outcome.
        late = stub.Run()
        await late.write(pb.RunRequest(reattach=pb.ReattachRun(run_id=run_id, after_seq=0)))
        failed = (await until(late, "run_failed"))[-1].run_failed
        assert failed.reason == pb.FAILURE_REASON_CANCELLED
        assert "reattached within" in failed.message
        assert await asyncio.wait_for(late.read(), 5) is grpc.aio.EOF


async def test_reattaching_to_an_unknown_run_is_not_found(tmp_path: Path) -> None:
    async with journaled(tmp_path) as (_, stub):
        call = stub.Run()
        await call.write(pb.RunRequest(reattach=pb.ReattachRun(run_id="nope", after_seq=0)))
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await asyncio.wait_for(call.read(), 10)
        err = failed.value
        assert err.code() == grpc.StatusCode.NOT_FOUND
        parsed = _rejected(err.code(), err.details() or "", err.trailing_metadata())
        assert (parsed.reason, parsed.field) == ("RUN_NOT_FOUND", "reattach.run_id")


async def test_without_a_journal_a_dropped_stream_cancels_its_run() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub: Any = pb_grpc.ForgeServiceStub(channel)
            call = stub.Run()
            await call.write(start())
            events = await until(call, "tool_call")
            assert events[0].run_started.reattach_grace_s == 0
            call.cancel()
            await settled(lambda: server.service.active_runs == 0)


async def test_a_session_carries_the_conversation_to_the_next_run(tmp_path: Path) -> None:
    script = [*WEATHER_SCRIPT, *WEATHER_SCRIPT]
    async with journaled(tmp_path, script=script) as (server, stub):
        for question in ("Weather in Paris?", "And tomorrow?"):
            call = stub.Run()
            request = start(session_id="s-1")
            request.start.user_message = question
            await call.write(request)
            for _ in range(2):
                tool_call = (await until(call, "tool_call"))[-1].tool_call
                await call.write(result(tool_call.call_id, f"out of {tool_call.tool_name}"))
            done = (await until(call, "run_completed"))[-1].run_completed
            await call.done_writing()
        users = [m.content for m in done.transcript if m.role == 2]
        assert users == ["Weather in Paris?", "And tomorrow?"]
        # The session's conversation came from the journal, not the client.
        assert json.dumps([m.content for m in done.transcript]).count("out of get_weather") == 2
        await settled(lambda: server.service.active_runs == 0)


async def test_a_client_chosen_run_id_reattaches_before_run_started(tmp_path: Path) -> None:
    """A stream that breaks before the client read run_started: the client
    named the run, so it can still reattach and gets everything from seq 1."""
    async with journaled(tmp_path) as (_, stub):
        first = stub.Run()
        await first.write(start(run_id="client-run-1"))
        await until(first, "run_started")
        first.cancel()
        second = stub.Run()
        await second.write(
            pb.RunRequest(reattach=pb.ReattachRun(run_id="client-run-1", after_seq=0))
        )
        events = await until(second, "tool_call")
        assert [e.WhichOneof("kind") for e in events[:2]] == ["run_started", "run_started"]
        assert events[1].seq == 1 and events[1].run_started.run_id == "client-run-1"
        second.cancel()
        # The id is taken now.
        third = stub.Run()
        await third.write(start(run_id="client-run-1"))
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await asyncio.wait_for(third.read(), 10)
        err = failed.value
        assert err.code() == grpc.StatusCode.ALREADY_EXISTS
        parsed = _rejected(err.code(), err.details() or "", err.trailing_metadata())
        assert (parsed.reason, parsed.field) == ("RUN_EXISTS", "start.run_id")
        bad = stub.Run()
        await bad.write(start(run_id="not a valid id!"))
        with pytest.raises(grpc.aio.AioRpcError) as invalid:
            await asyncio.wait_for(bad.read(), 10)
        assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_drained_servers_run_goes_on_elsewhere_with_its_call_still_open(
    tmp_path: Path,
) -> None:
    """Replica A drains while a tool call is open: it hands the run over
    (UNAVAILABLE SHUTTING_DOWN) without telling the client the call was
    cancelled, and replica B, on the same journal, asks for it again."""
    async with journaled(tmp_path) as (a, stub_a):
        first = stub_a.Run()
        await first.write(start())
        events = await until(first, "tool_call")
        run_id, call = events[0].run_started.run_id, events[-1]
        await a.service.drain(0)
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while (event := await asyncio.wait_for(first.read(), 10)) is not grpc.aio.EOF:
                assert event.WhichOneof("kind") != "tool_call_cancelled", event
        assert ended.value.code() == grpc.StatusCode.UNAVAILABLE

        journal_b = SqliteJournal(tmp_path / "journal.db")
        await journal_b.open()
        backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
        options = ServerOptions(host="127.0.0.1", port=0, journal=journal_b, reattach_grace_s=30)
        try:
            async with running_server(backend, options) as b:
                async with grpc.aio.insecure_channel(address(b)) as channel:
                    second: Any = pb_grpc.ForgeServiceStub(channel).Run()
                    await second.write(
                        pb.RunRequest(reattach=pb.ReattachRun(run_id=run_id, after_seq=call.seq))
                    )
                    again = await until(second, "tool_call")
                    kinds = [e.WhichOneof("kind") for e in again]
                    assert kinds == ["run_started", "tool_call"], kinds
                    assert again[-1].tool_call.call_id == call.tool_call.call_id
                    await second.write(result(call.tool_call.call_id, "72F and sunny in Paris"))
                    report = (await until(second, "tool_call"))[-1].tool_call
                    await second.write(result(report.call_id, "reported"))
                    rest = await until(second, "run_completed")
                    assert "tool_call_cancelled" not in [e.WhichOneof("kind") for e in rest]
                    contents = [m.content for m in rest[-1].run_completed.transcript]
                    assert "72F and sunny in Paris" in contents
        finally:
            await journal_b.aclose()


async def test_a_run_stopped_before_its_request_was_journaled_starts_again(
    tmp_path: Path,
) -> None:
    """A server died after journaling only the first events of a run (the
    user message not among them): the run resumed elsewhere starts again,
    and the messages already journaled are not sent twice."""
    async with journaled(tmp_path) as (_, stub):
        first = stub.Run()
        await first.write(start(run_id="whole"))
        opening = await until(first, "tool_call")
        first.cancel()
        kinds = [e.WhichOneof("kind") for e in opening]
        assert kinds[:2] == ["run_started", "message_appended"]

        journal = SqliteJournal(tmp_path / "journal.db")
        await journal.open()
        try:
            record = await journal.load("whole")
            assert record is not None
            # As a server that died long ago left it: its lease has expired.
            await journal.create_run("cut", record.start, "", "", "dead-server", time.time() - 600)
            for event in opening[:2]:
                copy = pb.RunResponse()
                copy.CopyFrom(event)
                if copy.HasField("run_started"):
                    copy.run_started.run_id = "cut"
                data = copy.SerializeToString()
                await journal.append("cut", copy.seq, data, len(data))
        finally:
            await journal.aclose()

        second = stub.Run()
        await second.write(pb.RunRequest(reattach=pb.ReattachRun(run_id="cut", after_seq=0)))
        events = await until(second, "tool_call")
        await second.write(result(events[-1].tool_call.call_id, "72F and sunny in Paris"))
        events += await until(second, "tool_call")
        await second.write(result(events[-1].tool_call.call_id, "reported"))
        events += await until(second, "run_completed")
    indices = [e.message_appended.index for e in events if e.HasField("message_appended")]
    assert indices == list(range(len(indices)))
    done = events[-1].run_completed
    assert done.terminal_tool == "report_weather"
    assert [m.content for m in done.transcript if m.role == 2] == ["Weather in Paris?"]


class SlowCreateJournal(SqliteJournal):
    """A real SQLite journal whose create_run waits for the test."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.creating = asyncio.Event()
        self.go_on = asyncio.Event()

    async def create_run(
        self, run_id: str, start: bytes, owner: str, session_id: str, holder: str, now: float
    ) -> None:
        await super().create_run(run_id, start, owner, session_id, holder, now)
        self.creating.set()
        await self.go_on.wait()


async def test_a_reattach_while_its_start_is_handled_is_told_to_retry(tmp_path: Path) -> None:
    """The client lost its first stream right after sending `start` and
    reattaches by its own run id while the server is still handling that
    start: RUN_BUSY (retry), not a second copy of the run resumed from the
    half-written journal."""
    journal = SlowCreateJournal(tmp_path / "journal.db")
    await journal.open()
    options = ServerOptions(host="127.0.0.1", port=0, journal=journal, reattach_grace_s=30)
    try:
        async with running_server(
            ScriptedBackend(scripts={"weather": WEATHER_SCRIPT}), options
        ) as server:
            async with grpc.aio.insecure_channel(address(server)) as channel:
                stub: Any = pb_grpc.ForgeServiceStub(channel)
                first = stub.Run()
                await first.write(start(run_id="racing"))
                await asyncio.wait_for(journal.creating.wait(), 10)
                early = stub.Run()
                await early.write(pb.RunRequest(reattach=pb.ReattachRun(run_id="racing")))
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await asyncio.wait_for(early.read(), 10)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
                assert (
                    _rejected(refused.value.code(), "", refused.value.trailing_metadata()).reason
                    == "RUN_BUSY"
                )
                journal.go_on.set()
                first.cancel()
                late = stub.Run()
                await late.write(pb.RunRequest(reattach=pb.ReattachRun(run_id="racing")))
                events = await until(late, "tool_call")
                assert [e.WhichOneof("kind") for e in events[:2]] == ["run_started", "run_started"]
                assert server.service.active_runs == 1
                late.cancel()
    finally:
        await journal.aclose()
