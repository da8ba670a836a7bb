"""A run whose forge-server is SIGKILLed continues on the restarted server,
with the real llama-server + 270M model behind it (issue 15).

forge-server runs as a process against the session's llama-server
(`--llama-url`, so the kill leaves the model server up, as a sidecar's
would be), with the SQLite journal and a fixed replica id. The client
reattaches after the restart: the model turns already journaled are not
asked again, the pending call is sent again, and each tool runs once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from forge_core.llama_host.process import ManagedLlamaServer, free_port
from tests.helpers import wait_for_server
from tests.integration.test_replicas import Client, Replica

pytestmark = pytest.mark.e2e


async def launch(replica: Replica, llama_url: str, journal: str, log: Path) -> None:
    replica.proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--llama-url", llama_url, "--host", "127.0.0.1", "--port", str(replica.port),
        "--journal", journal, "--reattach-grace", "120", "--replica-id", replica.name,
        "--log-level", "INFO",
        stdout=asyncio.subprocess.DEVNULL, stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    await wait_for_server(replica.address, 120)


async def test_a_killed_servers_run_finishes_on_the_restarted_one(
    llama_server: ManagedLlamaServer, tmp_path: Path
) -> None:
    journal = f"sqlite:///{tmp_path / 'journal.db'}"
    log = tmp_path / "forge.log"
    replica = Replica("r1", free_port())
    try:
        await launch(replica, llama_server.url, journal, log)
        client = Client([replica], home=0)
        task = asyncio.ensure_future(client.drive())
        # The model made its first call; the tool is running in the client.
        await asyncio.wait_for(client.waiting.wait(), 300)
        assert replica.proc is not None
        replica.proc.send_signal(signal.SIGKILL)
        await replica.proc.wait()
        await launch(replica, llama_server.url, journal, log)
        client.go.set()
        done = await asyncio.wait_for(task, 600)
    finally:
        if replica.proc is not None and replica.proc.returncode is None:
            replica.proc.terminate()
            await replica.proc.wait()
    text = log.read_text()
    assert done.terminal_tool == "report_weather", text[-3000:]
    assert client.reattaches >= 1
    assert set(client.ran.values()) == {1}, client.ran
    assert "resumed from the journal" in text
    # The first model turn (get_weather) was not asked again: the restarted
    # server's usage counts only the turns after it.
    assert done.usage.model_calls == done.iterations - 1, json.dumps(
        [m.content for m in done.transcript]
    )
