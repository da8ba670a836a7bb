"""A fallback chain whose first backend is a real llama-server (the bundled
Gemma 3 270M) that is killed in the middle of a run: the next model call is
served by the next backend of the chain, a real OpenAI-compatible HTTP server
on loopback (tests/stub_openai.py), and the run completes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from forge_client import Event, ForgeClient, RunStarted, Workflow
from forge_core.backends.fallback import FallbackBackend
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.llama_host.install import bundled_binary, bundled_model, launch_env
from forge_core.llama_host.process import LlamaServerConfig, free_port
from forge_server.backend import open_backend
from forge_server.cli import backend_config
from tests.helpers import address, running_server
from tests.stub_openai import OK, stub_openai
from tests.unit.native_history import request

pytestmark = pytest.mark.e2e


def report_when_offered(names: list[str]) -> tuple[str, dict[str, Any]]:
    if "report" in names:
        return "report", {"summary": "Alice ordered a lamp"}
    return names[0], {"name": "Alice"}


@pytest.fixture
def external_llama(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A llama-server Forge did not start (nothing restarts it once killed)."""
    binary = bundled_binary()
    config = LlamaServerConfig(
        model_path=bundled_model(), binary=binary, ctx_size=2048, slots=1, threads=1
    )
    port = free_port()
    log = (tmp_path / "llama.log").open("wb")
    proc = subprocess.Popen(
        config.argv(port), env=launch_env(binary), stdout=log, stderr=subprocess.STDOUT
    )
    proc.url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (tmp_path / "llama.log").read_text()[-2000:]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0).status_code == 200:
                    break
            assert time.monotonic() < deadline, "llama-server did not become healthy"
            time.sleep(0.25)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()


async def test_a_killed_llama_server_hands_the_run_to_the_next_backend(
    external_llama: subprocess.Popen[bytes],
) -> None:
    killed: list[int] = []
    wf = Workflow("orders", "Find the user, then report what they ordered.")

    @wf.tool
    def lookup_user(name: str) -> str:
        """Find a user's id by name."""
        # The model server dies between two model calls of the run.
        external_llama.kill()
        killed.append(external_llama.wait())
        return "user_id=u42; orders: a lamp"

    @wf.tool(terminal=True, prerequisites=["lookup_user"])
    def report(summary: str) -> str:
        """Report the summary to the user. Ends the task."""
        return summary

    events: list[Event] = []
    url = external_llama.url  # type: ignore[attr-defined]
    with stub_openai([OK], report_when_offered) as stub:
        config = backend_config(
            [
                f"--backend=llama-server[url={url}],openai[url={stub.url} model=stub-model]",
                "--budget-tokens=4096",
                "--tool-call-mode=constrained",
            ]
        )
        async with (
            open_backend(config) as backend,
            running_server(backend) as server,
            ForgeClient(address(server)) as client,
        ):
            before = await client.server_info()
            # No capitalised name: the model writes lookup_user's name itself
            # (a name the request wrote would be the one value Forge offers,
            # and it would write the call without asking the model).
            result = await client.run(wf, "what did alice order?", on_event=events.append)
            after = await client.server_info()
    assert killed, "the run never reached lookup_user"
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert started.backend_chain == ("llama-server", "openai")
    assert started.tool_call_mode == "constrained"
    assert result.terminal_tool == "report"
    assert result.output == "Alice ordered a lamp"
    # The prerequisite left the model one tool: the real model called it.
    assert [i.backend for i in result.usage.iterations] == ["llama-server", "openai"]
    assert result.usage.iterations[0].prompt_tokens > 0
    assert len(stub.requests) == 1
    assert [b.name for b in before.backends] == ["llama-server", "openai"]
    assert before.backends[0].url == url and before.backends[0].calls == 0
    llama, remote = after.backends
    assert (llama.calls, llama.failures, llama.consecutive_failures) == (2, 1, 1)
    assert llama.available and llama.last_error
    assert (remote.calls, remote.failures) == (1, 0)
    # The chain's budget is the smallest: llama-server's 2048-token slot.
    assert before.context_budget_tokens == 2048


async def test_a_managed_llama_server_in_a_chain_fails_over_instead_of_waiting() -> None:
    with stub_openai([OK], report_when_offered) as stub:
        config = backend_config(
            [
                f"--backend=llama-server,openai[url={stub.url} model=stub-model]",
                "--budget-tokens=4096",
                "--threads=1",
                "--slots=1",
                "--ctx-size=2048",
                "--prefix-snapshots=off",
            ]
        )
        async with open_backend(config) as backend:
            assert isinstance(backend, FallbackBackend)
            llama = backend.members[0].backend
            assert isinstance(llama, LlamaServerBackend)
            served = await backend.complete(request(), None)
            assert served.usage.backend == "llama-server"
            pid = _server_pid(llama.base_url)
            os.kill(pid, signal.SIGKILL)
            # Its supervisor restarts it; the call does not wait for that.
            started = time.monotonic()
            reply = await backend.complete(request(), None)
            assert reply.usage.backend == "openai"
            assert time.monotonic() - started < 10
    assert len(stub.requests) == 1


def _server_pid(base_url: str) -> int:
    """The pid of the llama-server started with base_url's port."""
    port = base_url.rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--port" in argv and argv[argv.index(b"--port") + 1 :][:1] == [port.encode()]:
            return int(entry.name)
    raise AssertionError(f"no llama-server process on port {port}")
