"""The Python SDK reattaches on its own: real servers, real sockets.

A TCP proxy written here sits between the SDK and an in-process server with
the SQLite journal; the test cuts every connection mid-run (a tool in
flight, a result just sent, a tool finishing while nothing is connected) and
the run still completes, each tool running once per call id and every event
reaching `on_event` once. A `forge_server` process is SIGKILLed mid-run and
restarted on the same port, journal and replica id: the SDK reattaches to
it. Without a journal (or with reattach off) a cut raises
ConnectionLostError as before. `channel_options` reach the gRPC channel.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import grpc
import pytest

from forge_client import (
    ConnectionLostError,
    Event,
    ForgeClient,
    MessageAppended,
    Reattached,
    RequestRejectedError,
    Role,
    RunResult,
    RunStarted,
    ToolCallFinished,
    ToolCallStarted,
    Workflow,
)
from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.llama_host.process import free_port
from forge_server.app import ForgeServer, ServerOptions
from forge_server.journal.sqlite import SqliteJournal
from tests.helpers import address, running_server, settled, wait_for_server
from tests.integration.test_run_stream import WEATHER_SCRIPT, weather_workflow

CITIES = ("Paris", "Oslo", "Rome")
SCRIPT = [
    *(call("get_weather", city=city) for city in CITIES),
    call("report_weather", city="Rome", weather="72F and sunny in Rome"),
]


class Proxy:
    """A TCP proxy on a free loopback port; `cut()` closes every connection
    (both sides, abortively), `hold()` refuses new ones until `resume()`."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.cuts = 0
        self._server: asyncio.Server | None = None
        self._conns: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._held = False
        # "replies" or "requests": the next connection forwards that
        # direction's HTTP/2 frames on stream 0 only (the connection is set
        # up, but no RPC message gets through), until the next cut.
        self.withhold: str | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cut(self) -> None:
        self.cuts += 1
        self.withhold = None
        self._abort_all()

    def _abort_all(self) -> None:
        for client, upstream in list(self._conns):
            client.transport.abort()
            upstream.transport.abort()
        self._conns.clear()

    def hold(self) -> None:
        self._held = True
        self.cut()

    def resume(self) -> None:
        self._held = False

    async def aclose(self) -> None:
        self._abort_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._held:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self._conns.add(pair)
        withhold, self.withhold = self.withhold, None
        to_upstream = _frames_on_stream_0(reader, preface=True) if withhold == "requests" else None
        to_client = _frames_on_stream_0(up_reader, preface=False) if withhold == "replies" else None
        try:
            await asyncio.gather(
                _pipe(reader, up_writer, to_upstream), _pipe(up_reader, writer, to_client)
            )
        finally:
            self._conns.discard(pair)
            writer.transport.abort()
            up_writer.transport.abort()


async def _frames_on_stream_0(reader: asyncio.StreamReader, preface: bool) -> AsyncIterator[bytes]:
    """What `reader` carries, less every HTTP/2 frame of a stream (the
    connection's own frames, SETTINGS, PING, are kept)."""
    if preface:
        yield await reader.readexactly(24)  # PRI * HTTP/2.0 ...
    while True:
        header = await reader.readexactly(9)
        payload = await reader.readexactly(int.from_bytes(header[:3], "big"))
        if int.from_bytes(header[5:9], "big") & 0x7FFFFFFF == 0:
            yield header + payload


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while data := await reader.read(65536):
        yield data


async def _pipe(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    chunks: AsyncIterator[bytes] | None = None,
) -> None:
    try:
        async for data in chunks or _chunks(reader):
            writer.write(data)
            await writer.drain()
    except asyncio.IncompleteReadError:
        pass
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()


@asynccontextmanager
async def proxied_server(
    tmp_path: Path | None, script: list[Any], grace_s: float = 30.0
) -> AsyncIterator[tuple[ForgeServer, Proxy]]:
    """An in-process server (journaled unless tmp_path is None) behind a Proxy."""
    journal = SqliteJournal(tmp_path / "journal.db") if tmp_path is not None else None
    if journal is not None:
        await journal.open()
    options = ServerOptions(
        host="127.0.0.1", port=0, journal=journal, reattach_grace_s=grace_s if journal else 0.0
    )
    try:
        async with running_server(ScriptedBackend(scripts={"weather": script}), options) as server:
            proxy = Proxy(server.port)
            await proxy.start()
            try:
                yield server, proxy
            finally:
                await proxy.aclose()
    finally:
        if journal is not None:
            await journal.aclose()


class Gated:
    """A weather workflow whose get_weather calls wait for the test: each
    call announces itself (`entered[city]`) and returns when released."""

    def __init__(self, gated: tuple[str, ...]) -> None:
        self.runs: Counter[str] = Counter()
        self.entered = {city: asyncio.Event() for city in CITIES}
        self.returned = {city: asyncio.Event() for city in CITIES}
        self.release = {city: asyncio.Event() for city in CITIES}
        for city in CITIES:
            if city not in gated:
                self.release[city].set()
        self.workflow = Workflow("weather", "Look up weather and report it.")

        @self.workflow.tool(required=True)
        async def get_weather(city: str) -> str:
            """Get current weather for a city."""
            self.runs[city] += 1
            self.entered[city].set()
            await self.release[city].wait()
            self.returned[city].set()
            return f"72F and sunny in {city}"

        @self.workflow.tool(terminal=True)
        async def report_weather(city: str, weather: str) -> dict[str, str]:
            """Report the weather."""
            self.runs["report"] += 1
            return {"city": city, "report": weather}


def assert_each_event_once(events: list[Event]) -> None:
    # Reattached is the SDK's own: two breaks at the same point look alike.
    keys = [repr(e) for e in events if not isinstance(e, Reattached)]
    assert len(keys) == len(set(keys)), [k for k, n in Counter(keys).items() if n > 1]
    started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
    finished = [e.call_id for e in events if isinstance(e, ToolCallFinished)]
    assert len(started) == len(set(started)) and sorted(started) == sorted(finished)
    # Nothing missed either: the conversation's messages arrive 0, 1, 2, ...
    indices = [e.index for e in events if isinstance(e, MessageAppended)]
    assert indices == list(range(len(indices)))
    assert sum(isinstance(e, RunStarted) for e in events) == 1


async def wait(event: asyncio.Event, what: str, timeout_s: float = 15.0) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout_s)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def answered(server: ForgeServer, call_id: str) -> Callable[[], bool]:
    """Whether the server's run has the result for `call_id`."""

    def check() -> bool:
        return any(run.executor.answered(call_id) for run in server.service.runs.live.values())

    return check


async def test_cuts_mid_run_reattach_and_every_tool_runs_once(tmp_path: Path) -> None:
    tools = Gated(gated=("Paris", "Rome"))
    events: list[Event] = []
    reattached = asyncio.Event()
    oslo_done = asyncio.Event()
    oslo_call: list[str] = []

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, Reattached):
            reattached.set()
        if isinstance(event, ToolCallFinished) and event.output.endswith("Oslo"):
            oslo_call.append(event.call_id)
            oslo_done.set()

    async with proxied_server(tmp_path, SCRIPT) as (server, proxy):
        async with ForgeClient(proxy.address) as client:
            run = asyncio.create_task(
                client.run(tools.workflow, "Weather in Paris, Oslo, Rome?", on_event=on_event)
            )
            # 1. Cut while Paris is in flight, and keep the proxy closed until
            # the tool has returned: its result is kept and sent again when
            # the server re-sends the call on the new stream.
            await wait(tools.entered["Paris"], "Paris to start")
            proxy.hold()
            tools.release["Paris"].set()
            await wait(tools.returned["Paris"], "Paris to return")
            await asyncio.sleep(0.3)  # a reattach attempt or two is refused
            proxy.resume()
            await wait(reattached, "the first reattach")

            # 2. Cut right after Oslo's result reached the server.
            await wait(oslo_done, "Oslo's result")
            await settled(answered(server, oslo_call[0]))
            reattached.clear()
            proxy.cut()
            await wait(reattached, "the second reattach")

            # 3. Cut while Rome is in flight; it finishes on the new stream.
            await wait(tools.entered["Rome"], "Rome to start")
            reattached.clear()
            proxy.cut()
            await wait(reattached, "the third reattach")
            tools.release["Rome"].set()
            result: RunResult = await asyncio.wait_for(run, 30)

    assert result.terminal_tool == "report_weather"
    assert result.value == {"city": "Rome", "report": "72F and sunny in Rome"}
    assert tools.runs == {"Paris": 1, "Oslo": 1, "Rome": 1, "report": 1}
    assert proxy.cuts == 3
    assert sum(isinstance(e, Reattached) for e in events) == 3
    assert_each_event_once(events)
    # The transcript has each result once.
    contents = [m.content for m in result.transcript]
    for city in CITIES:
        assert contents.count(f"72F and sunny in {city}") == 1


async def test_a_break_before_run_started_reattaches_by_the_clients_run_id(
    tmp_path: Path,
) -> None:
    """The start reaches the server but nothing comes back before the cut:
    the SDK reattaches by the run id it chose, and the run goes on once."""
    tools = Gated(gated=())
    events: list[Event] = []
    async with proxied_server(tmp_path, SCRIPT) as (server, proxy):
        async with ForgeClient(proxy.address) as client:
            proxy.withhold = "replies"
            run = asyncio.create_task(
                client.run(tools.workflow, "Weather?", on_event=events.append)
            )
            await settled(lambda: server.service.active_runs == 1)
            assert not events
            proxy.cut()
            result: RunResult = await asyncio.wait_for(run, 30)
    assert result.terminal_tool == "report_weather"
    assert tools.runs == {"Paris": 1, "Oslo": 1, "Rome": 1, "report": 1}
    assert sum(isinstance(e, Reattached) for e in events) == 1
    assert_each_event_once(events)
    started = [e for e in events if isinstance(e, RunStarted)]
    assert started[0].run_id == result.run_id


async def test_a_start_lost_on_the_way_is_sent_again(tmp_path: Path) -> None:
    """The start never reaches the server: the reattach by the client's run
    id is answered RUN_NOT_FOUND, so the SDK starts the run on a new stream."""
    tools = Gated(gated=())
    events: list[Event] = []
    async with proxied_server(tmp_path, SCRIPT) as (server, proxy):
        async with ForgeClient(proxy.address) as client:
            proxy.withhold = "requests"
            run = asyncio.create_task(
                client.run(tools.workflow, "Weather?", on_event=events.append)
            )
            await asyncio.sleep(0.5)
            assert server.service.active_runs == 0 and not events
            proxy.cut()
            result: RunResult = await asyncio.wait_for(run, 30)
    assert result.terminal_tool == "report_weather"
    assert tools.runs == {"Paris": 1, "Oslo": 1, "Rome": 1, "report": 1}
    assert_each_event_once(events)


async def test_a_cut_without_a_journal_raises_connection_lost() -> None:
    tools = Gated(gated=("Paris",))
    async with proxied_server(None, SCRIPT) as (server, proxy):
        async with ForgeClient(proxy.address) as client:
            events: list[Event] = []
            run = asyncio.create_task(
                client.run(tools.workflow, "Weather?", on_event=events.append)
            )
            await wait(tools.entered["Paris"], "Paris to start")
            proxy.cut()
            with pytest.raises(ConnectionLostError):
                await asyncio.wait_for(run, 10)
        await settled(lambda: server.service.active_runs == 0)
    started = [e for e in events if isinstance(e, RunStarted)]
    assert started[0].reattach_grace_s == 0
    assert not any(isinstance(e, Reattached) for e in events)


async def test_reattach_off_raises_connection_lost_on_a_journaled_server(tmp_path: Path) -> None:
    tools = Gated(gated=("Paris",))
    async with proxied_server(tmp_path, SCRIPT) as (_, proxy):
        async with ForgeClient(proxy.address, reattach=False) as client:
            run = asyncio.create_task(client.run(tools.workflow, "Weather?"))
            await wait(tools.entered["Paris"], "Paris to start")
            proxy.cut()
            with pytest.raises(ConnectionLostError):
                await asyncio.wait_for(run, 10)


async def test_reattach_gives_up_after_its_deadline(tmp_path: Path) -> None:
    tools = Gated(gated=("Paris",))
    async with proxied_server(tmp_path, SCRIPT) as (_, proxy):
        async with ForgeClient(proxy.address, reattach_deadline_s=1.0) as client:
            events: list[Event] = []
            run = asyncio.create_task(
                client.run(tools.workflow, "Weather?", on_event=events.append)
            )
            await wait(tools.entered["Paris"], "Paris to start")
            proxy.hold()
            began = time.monotonic()
            with pytest.raises(ConnectionLostError, match="reattaching failed"):
                await asyncio.wait_for(run, 10)
            took = time.monotonic() - began
    assert 0.8 < took < 5, took
    assert events and isinstance(events[0], RunStarted) and events[0].reattach_grace_s == 30


async def test_a_run_unknown_to_the_server_gives_up_at_once(tmp_path: Path) -> None:
    """A run the server lost (here: a second server with its own, empty
    journal behind the same proxy port) answers RUN_NOT_FOUND: no retries."""
    tools = Gated(gated=("Paris",))
    async with (
        proxied_server(tmp_path, SCRIPT) as (_, proxy),
        proxied_server(_subdir(tmp_path, "other"), SCRIPT) as (other, _),
    ):
        async with ForgeClient(proxy.address) as client:
            run = asyncio.create_task(client.run(tools.workflow, "Weather?"))
            await wait(tools.entered["Paris"], "Paris to start")
            proxy.upstream_port = other.port
            proxy.cut()
            began = time.monotonic()
            with pytest.raises(ConnectionLostError) as lost:
                await asyncio.wait_for(run, 10)
            assert time.monotonic() - began < 5
    cause = lost.value.__cause__
    assert isinstance(cause, RequestRejectedError) and cause.reason == "RUN_NOT_FOUND"


async def test_leaving_a_journaled_run_early_cancels_it(tmp_path: Path) -> None:
    """Breaking out of the stream cancels the run on the server, as it did
    before journals (a dropped stream alone would only detach it)."""
    tools = Gated(gated=("Paris",))
    async with proxied_server(tmp_path, SCRIPT) as (server, proxy):
        async with ForgeClient(proxy.address) as client:
            stream = client.start(tools.workflow, "Weather?")
            async for event in stream:
                if isinstance(event, ToolCallStarted):
                    break
            await stream.aclose()
            await settled(lambda: server.service.active_runs == 0)


# ── A server process killed and restarted ────────────────────────────────


def _subdir(path: Path, name: str) -> Path:
    (path / name).mkdir()
    return path / name


def _open_log(path: Path) -> IO[bytes]:
    return open(path, "ab")


def _script_file(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "get_weather", "args": {"city": city}}]} for city in CITIES
    ]
    turns.append(
        {
            "tool_calls": [
                {
                    "name": "report_weather",
                    "args": {"city": "Rome", "weather": "72F and sunny in Rome"},
                }
            ]
        }
    )
    path.write_text(json.dumps({"weather": turns}))
    return path


async def _spawn(tmp_path: Path, port: int) -> asyncio.subprocess.Process:
    log = _open_log(tmp_path / "server.log")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(_script_file(tmp_path)),
        "--journal", f"sqlite:///{tmp_path / 'j.db'}", "--replica-id", "r1",
        "--reattach-grace", "30", "--port", str(port),
        stdout=log, stderr=log,
    )  # fmt: skip
    log.close()
    return proc


async def test_a_killed_and_restarted_server_process_takes_the_run_back(tmp_path: Path) -> None:
    tools = Gated(gated=("Paris", "Rome"))
    events: list[Event] = []
    reattached = asyncio.Event()
    oslo_done = asyncio.Event()

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, Reattached):
            reattached.set()
        if isinstance(event, ToolCallFinished) and event.output.endswith("Oslo"):
            oslo_done.set()

    port = free_port()
    addr = f"127.0.0.1:{port}"
    proc = await _spawn(tmp_path, port)
    try:
        await wait_for_server(addr, 60)
        async with ForgeClient(addr) as client:
            run = asyncio.create_task(client.run(tools.workflow, "Weather?", on_event=on_event))
            # Killed while Paris is in flight; Paris returns while it is down.
            await wait(tools.entered["Paris"], "Paris to start")
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
            tools.release["Paris"].set()
            proc = await _spawn(tmp_path, port)
            await wait(reattached, "the reattach after the first restart", 60)
            # Killed again right after Oslo's result was sent, with Rome
            # about to be asked for (or asked for already).
            await wait(oslo_done, "Oslo's result")
            await asyncio.sleep(0.2)
            reattached.clear()
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
            proc = await _spawn(tmp_path, port)
            await wait(reattached, "the reattach after the second restart", 60)
            await wait(tools.entered["Rome"], "Rome to start")
            tools.release["Rome"].set()
            result = await asyncio.wait_for(run, 60)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert result.value == {"city": "Rome", "report": "72F and sunny in Rome"}, log
    assert tools.runs == {"Paris": 1, "Oslo": 1, "Rome": 1, "report": 1}, log
    assert sum(isinstance(e, Reattached) for e in events) == 2
    assert_each_event_once(events)
    assert "resumed from the journal" in log


# ── Channel options ──────────────────────────────────────────────────────


async def test_channel_options_select_round_robin_over_dns() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server:
        target = f"dns:///localhost:{server.port}"
        options = [("grpc.lb_policy_name", "round_robin")]
        async with ForgeClient(target, channel_options=options) as client:
            ran: list[str] = []
            result = await client.run(weather_workflow(ran), "Weather in Paris?")
            assert ran == ["get_weather:Paris", "report_weather:Paris"]
            assert result.terminal_tool == "report_weather"
        # An option that replaces one of the SDK's own takes effect: replies
        # larger than 10 bytes are refused by this channel.
        async with ForgeClient(
            address(server), channel_options=[("grpc.max_receive_message_length", 10)]
        ) as small:
            with pytest.raises(RequestRejectedError) as refused:
                await small.server_info()
            assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED.name


async def test_channel_options_are_passed_to_the_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[tuple[str, Any]]] = []
    real = grpc.aio.insecure_channel

    def spy(target: str, options: Any = None, **kwargs: Any) -> grpc.aio.Channel:
        seen.append(list(options or ()))
        return real(target, options=options, **kwargs)

    monkeypatch.setattr(grpc.aio, "insecure_channel", spy)
    async with ForgeClient(
        "dns:///forge-headless.ns.svc.cluster.local:50051",
        channel_options=[("grpc.lb_policy_name", "round_robin")],
    ):
        pass
    options = dict(seen[0])
    assert options["grpc.lb_policy_name"] == "round_robin"
    assert options["grpc.max_receive_message_length"] == 16 * 1024 * 1024


async def test_a_session_id_carries_the_conversation_to_the_next_run(tmp_path: Path) -> None:
    tools = Gated(gated=())
    async with proxied_server(tmp_path, [*SCRIPT, *SCRIPT]) as (_, proxy):
        async with ForgeClient(proxy.address) as client:
            await client.run(tools.workflow, "Weather in three cities?", session_id="trip")
            second = await client.run(tools.workflow, "And again?", session_id="trip")
            alone = await client.run(tools.workflow, "Once more?")
    users = [m.content for m in second.transcript if m.role == Role.USER]
    assert users == ["Weather in three cities?", "And again?"]
    assert [m.content for m in alone.transcript if m.role == Role.USER] == ["Once more?"]
