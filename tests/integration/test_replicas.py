"""Three forge-server processes sharing one real PostgreSQL journal (issue 15).

Runs are spread over the replicas; one replica is SIGKILLed while its runs
wait on tool calls. Their clients reattach to the other replicas, which take
the runs over once the dead holder's lease expires, and every run completes
with nothing lost (each tool's result is in the final transcript) and
nothing executed twice (each call id ran once in the client). The clients
here speak the protocol through the generated stubs, reattaching the way
the SDKs do, so the test pins the server's side; the SDKs have their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_core.llama_host.process import free_port
from tests.helpers import wait_for_server
from tests.integration.test_run_stream import weather_workflow

# Each run: get_weather, then report_weather.
SCRIPT = {
    "weather": [
        {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        {"tool_calls": [{"name": "report_weather", "args": {"city": "Paris", "weather": "sunny"}}]},
    ]
}
RUNS = 6


@dataclass
class Replica:
    name: str
    port: int
    proc: asyncio.subprocess.Process | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


async def launch(replica: Replica, journal_url: str, script: Path, log: Path) -> None:
    replica.proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(script),
        "--host", "127.0.0.1", "--port", str(replica.port),
        "--journal", journal_url, "--reattach-grace", "60", "--replica-id", replica.name,
        "--log-level", "INFO",
        stdout=asyncio.subprocess.DEVNULL, stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    await wait_for_server(replica.address, 60)


@dataclass
class Client:
    """One run, driven through raw stubs; reattaches to the next replica
    when its stream breaks."""

    replicas: list[Replica]
    home: int
    ran: Counter[str] = field(default_factory=Counter)
    seen: list[int] = field(default_factory=list)
    reattaches: int = 0
    run_id: str = ""
    last_seq: int = 0
    results: dict[str, str] = field(default_factory=dict)
    # Set once this client's run waits on its first tool call.
    waiting: asyncio.Event = field(default_factory=asyncio.Event)
    # Released by the test to let the tools answer.
    go: asyncio.Event = field(default_factory=asyncio.Event)

    async def drive(self) -> pb.RunCompleted:
        target = self.home
        for _ in range(40):
            replica = self.replicas[target % len(self.replicas)]
            try:
                async with grpc.aio.insecure_channel(replica.address) as channel:
                    stub: Any = pb_grpc.ForgeServiceStub(channel)
                    done = await self._stream(stub)
                    if done is not None:
                        return done
            except grpc.aio.AioRpcError as err:
                # A write racing the broken connection surfaces as INTERNAL
                # ("Internal error from Core") with no typed reason; the SDKs
                # treat that as a transport failure too.
                untyped = not any(
                    k == "grpc-status-details-bin" for k, _ in err.trailing_metadata() or ()
                )
                broken = err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) or (
                    err.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN) and untyped
                )
                if not broken:
                    raise
            except asyncio.InvalidStateError:
                pass  # wrote to a stream that had just broken
            # Broken: another replica, after a pause (the SDKs back off too).
            target += 1
            self.reattaches += 1
            await asyncio.sleep(0.5)
        raise AssertionError(f"run {self.run_id} did not complete")

    async def _stream(self, stub: Any) -> pb.RunCompleted | None:
        call = stub.Run()
        if not self.run_id:
            request = pb.RunRequest(
                start=pb.StartRun(
                    workflow=weather_workflow([]).to_proto(), user_message="Weather in Paris?"
                )
            )
        else:
            request = pb.RunRequest(
                reattach=pb.ReattachRun(run_id=self.run_id, after_seq=self.last_seq)
            )
        await call.write(request)
        while True:
            event = await call.read()
            if event is grpc.aio.EOF:
                return None
            kind = event.WhichOneof("kind")
            if kind == "run_started" and not self.run_id:
                self.run_id = event.run_started.run_id
            if event.seq:
                if event.seq <= self.last_seq and kind != "tool_call":
                    raise AssertionError(f"event {event.seq} delivered twice")
                self.seen.append(event.seq)
                self.last_seq = max(self.last_seq, event.seq)
            if kind == "tool_call":
                call_id = event.tool_call.call_id
                if call_id not in self.results:
                    self.waiting.set()
                    await self.go.wait()
                    self.ran[call_id] += 1
                    self.results[call_id] = f"{event.tool_call.tool_name} result {call_id}"
                await call.write(
                    pb.RunRequest(
                        tool_result=pb.ToolResult(call_id=call_id, output=self.results[call_id])
                    )
                )
            elif kind == "run_completed":
                completed: pb.RunCompleted = event.run_completed
                return completed
            elif kind == "run_failed":
                raise AssertionError(f"run failed: {event.run_failed.message}")


@pytest.mark.timeout(180)
async def test_a_killed_replicas_runs_finish_on_the_others(
    postgres_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    log = tmp_path / "replicas.log"
    replicas = [Replica(f"r{i}", free_port()) for i in range(3)]
    try:
        for replica in replicas:
            await launch(replica, postgres_url, script, log)
        clients = [Client(replicas, home=i % 3) for i in range(RUNS)]
        tasks = [asyncio.ensure_future(c.drive()) for c in clients]
        # Every run waits on its first tool call: replica r0's two runs are
        # in flight when it dies.
        await asyncio.wait_for(asyncio.gather(*(c.waiting.wait() for c in clients)), 60)
        victim = replicas[0]
        assert victim.proc is not None
        victim.proc.send_signal(signal.SIGKILL)
        await victim.proc.wait()
        for client in clients:
            client.go.set()
        done = await asyncio.wait_for(asyncio.gather(*tasks), 120)
    finally:
        for replica in replicas:
            if replica.proc is not None and replica.proc.returncode is None:
                replica.proc.terminate()
                await replica.proc.wait()
    for client, completed in zip(clients, done, strict=True):
        assert completed.terminal_tool == "report_weather", log.read_text()[-3000:]
        # Nothing executed twice...
        assert set(client.ran.values()) == {1}, client.ran
        assert len(client.ran) == 2
        # ...and nothing lost: every result reached the model.
        contents = [m.content for m in completed.transcript]
        for result in client.results.values():
            assert result in contents or completed.result == result
    # The killed replica's clients went elsewhere and their runs resumed there.
    moved = [c for c in clients if c.home == 0]
    assert moved and all(c.reattaches >= 1 for c in moved)
    assert "resumed from the journal" in log.read_text()


@pytest.mark.timeout(120)
async def test_a_reattach_to_another_live_replica_takes_the_run_over(
    postgres_url: str, tmp_path: Path
) -> None:
    """The client's stream to r0 breaks and its reattach lands on r1 (round
    robin) while r0 is alive and still holds the run: r1 asks for it, r0 lets
    it go, r1 resumes it from the journal."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    log = tmp_path / "replicas.log"
    replicas = [Replica(f"r{i}", free_port()) for i in range(2)]
    try:
        for replica in replicas:
            await launch(replica, postgres_url, script, log)
        async with grpc.aio.insecure_channel(replicas[0].address) as channel:
            stub: Any = pb_grpc.ForgeServiceStub(channel)
            call = stub.Run()
            await call.write(
                pb.RunRequest(
                    start=pb.StartRun(
                        workflow=weather_workflow([]).to_proto(), user_message="Weather?"
                    )
                )
            )
            events: list[pb.RunResponse] = []
            while not events or events[-1].WhichOneof("kind") != "tool_call":
                events.append(await call.read())
            call.cancel()
        client = Client(replicas[1:], home=0)
        client.run_id = events[0].run_started.run_id
        client.last_seq = events[-1].seq
        client.go.set()
        done = await asyncio.wait_for(client.drive(), 60)
    finally:
        for replica in replicas:
            if replica.proc is not None and replica.proc.returncode is None:
                replica.proc.terminate()
                await replica.proc.wait()
    assert done.terminal_tool == "report_weather"
    # The call r0 had sent was sent again by r1 and ran once.
    assert set(client.ran.values()) == {1} and len(client.ran) == 2
    text = log.read_text()
    assert "handing it over to another replica" in text
    assert "resumed from the journal" in text


@pytest.mark.timeout(120)
async def test_a_result_sent_right_after_a_restart_reattach_counts(tmp_path: Path) -> None:
    """After a restart the resumed run sends its unanswered calls again, but a
    client may answer first (it ran the tool while the server was down): the
    result is for a call the run did send, so it is kept, not refused."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    log = tmp_path / "server.log"
    journal = f"sqlite:///{tmp_path / 'journal.db'}"
    replica = Replica("r1", free_port())
    try:
        await launch(replica, journal, script, log)
        async with grpc.aio.insecure_channel(replica.address) as channel:
            stub: Any = pb_grpc.ForgeServiceStub(channel)
            call = stub.Run()
            await call.write(
                pb.RunRequest(
                    start=pb.StartRun(
                        workflow=weather_workflow([]).to_proto(), user_message="Weather?"
                    )
                )
            )
            events: list[pb.RunResponse] = []
            while not events or events[-1].WhichOneof("kind") != "tool_call":
                events.append(await call.read())
        assert replica.proc is not None
        replica.proc.send_signal(signal.SIGKILL)
        await replica.proc.wait()
        await launch(replica, journal, script, log)
        pending = events[-1].tool_call.call_id
        async with grpc.aio.insecure_channel(replica.address) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            call = stub.Run()
            run_id = events[0].run_started.run_id
            await call.write(
                pb.RunRequest(reattach=pb.ReattachRun(run_id=run_id, after_seq=events[-1].seq))
            )
            opening = await call.read()
            assert opening.run_started.reattached
            await call.write(
                pb.RunRequest(tool_result=pb.ToolResult(call_id=pending, output="sunny, early"))
            )
            asked: list[str] = []
            while True:
                event = await asyncio.wait_for(call.read(), 20)
                assert event is not grpc.aio.EOF, log.read_text()[-2000:]
                kind = event.WhichOneof("kind")
                if kind == "tool_call":
                    asked.append(event.tool_call.call_id)
                    await call.write(
                        pb.RunRequest(
                            tool_result=pb.ToolResult(
                                call_id=event.tool_call.call_id, output="reported"
                            )
                        )
                    )
                elif kind == "run_completed":
                    done = event.run_completed
                    break
                elif kind == "run_failed":
                    raise AssertionError(event.run_failed.message)
    finally:
        if replica.proc is not None and replica.proc.returncode is None:
            replica.proc.terminate()
            await replica.proc.wait()
    assert done.terminal_tool == "report_weather"
    # The early answer is the call's result; if the resumed run had sent the
    # call again before it arrived, the answer to that came second and was
    # ignored.
    (answer,) = [m for m in done.transcript if m.tool_call_id == pending and m.role == 4]
    assert answer.content == "sunny, early"
    assert asked[-1] != pending
