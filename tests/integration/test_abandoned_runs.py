"""A run whose server died and whose client never came back is ended as
abandoned, visibly, instead of staying `running` until retention prunes it.

Real forge-server processes (scripted backend) on a real journal, SQLite
and PostgreSQL (tests/postgres.py): the first is SIGKILLed while its run
waits on a tool; the second, restarted under the same replica id as a
Kubernetes pod keeps its name, must not renew the dead process's lease
forever: once the lease and the reattach grace have run out it ends the run
as abandoned, counts it in /metrics, and a client that reattaches late is
told so in-band.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_core.llama_host.process import free_port
from forge_server.journal import open_journal
from forge_server.journal.base import ABANDONED, LEASE_S, RUNNING
from tests.helpers import wait_for_server
from tests.integration.test_replicas import SCRIPT
from tests.integration.test_run_stream import weather_workflow

GRACE_S = 1.0


async def launch(
    port: int, journal: str, script: Path, log: Path, metrics_port: int = -1
) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(script),
        "--host", "127.0.0.1", "--port", str(port), "--metrics-port", str(metrics_port),
        "--journal", journal, "--reattach-grace", str(GRACE_S), "--replica-id", "pod-0",
        stdout=asyncio.subprocess.DEVNULL, stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    await wait_for_server(f"127.0.0.1:{port}", 60)
    return proc


async def start_run_until_tool_call(address: str) -> tuple[str, int]:
    """A run waiting on its first tool call; its id and that event's seq."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub: Any = pb_grpc.ForgeServiceStub(channel)
        call = stub.Run()
        await call.write(
            pb.RunRequest(
                start=pb.StartRun(workflow=weather_workflow([]).to_proto(), user_message="W?")
            )
        )
        run_id = ""
        while True:
            event = await call.read()
            assert event is not grpc.aio.EOF
            if event.WhichOneof("kind") == "run_started":
                run_id = event.run_started.run_id
            if event.WhichOneof("kind") == "tool_call":
                return run_id, int(event.seq)


@pytest.fixture(params=["sqlite", "postgres"])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.mark.timeout(180)
async def test_a_dead_servers_run_is_ended_as_abandoned(tmp_path: Path, journal_url: str) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    log = tmp_path / "server.log"
    port, metrics_port = free_port(), free_port()
    journal = open_journal(journal_url)
    assert journal is not None
    await journal.open()
    procs: list[asyncio.subprocess.Process] = []
    try:
        procs.append(await launch(port, journal_url, script, log))
        run_id, waiting_seq = await start_run_until_tool_call(f"127.0.0.1:{port}")
        procs[0].send_signal(signal.SIGKILL)
        await procs[0].wait()
        procs.append(await launch(port, journal_url, script, log, metrics_port))

        # The dead lease (at most LEASE_S), the grace (at least LEASE_S),
        # one upkeep round (LEASE_S / 3), and as much again for slow cores.
        record = None
        for _ in range(int(2 * (LEASE_S + max(GRACE_S, LEASE_S) + LEASE_S) / 0.2)):
            record = await journal.load(run_id)
            assert record is not None
            if record.status != RUNNING:
                break
            await asyncio.sleep(0.2)
        assert record is not None and record.status == ABANDONED, log.read_text()[-3000:]
        last = pb.RunResponse.FromString(record.events[-1][1])
        assert last.WhichOneof("kind") == "run_failed"
        assert last.run_failed.reason == pb.FAILURE_REASON_CANCELLED
        assert last.run_failed.details["abandoned"] == "true"
        assert record.events[-1][0] == waiting_seq + 1

        async with httpx.AsyncClient() as http:
            metrics = (await http.get(f"http://127.0.0.1:{metrics_port}/metrics")).text
        assert "forge_runs_abandoned_total 1.0" in metrics
        assert "ended 1 runs as abandoned" in log.read_text()

        # A client that comes back late is told, in-band, then the stream ends.
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub: Any = pb_grpc.ForgeServiceStub(channel)
            call = stub.Run()
            await call.write(
                pb.RunRequest(reattach=pb.ReattachRun(run_id=run_id, after_seq=waiting_seq))
            )
            kinds: list[str] = []
            failed = None
            while (event := await call.read()) is not grpc.aio.EOF:
                kinds.append(event.WhichOneof("kind"))
                if kinds[-1] == "run_failed":
                    failed = event.run_failed
        assert kinds == ["run_started", "run_failed"]
        assert failed is not None and "abandoned" in failed.message
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        await journal.aclose()
