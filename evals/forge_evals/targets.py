"""What the eval's runs talk to: a real Forge gRPC server.

Every run goes through the gRPC server with the Python SDK executing the
tools, so the eval measures the product as users get it. The server is either
started in this process around a backend, or an already running one
given by address. A scenario's budget override travels in the run's
options (RunOptions.context_budget_tokens), so it applies either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Any, Protocol

from forge_core.backends.base import Backend, ChatRequest
from forge_core.backends.scripted import ScriptedBackend, Turn, calls, text
from forge_evals.scenario import Scenario
from forge_server.app import ForgeServer, ServerOptions, start_server


class Target(Protocol):
    def describe(self) -> dict[str, Any]:
        """backend, model, tool_call_mode, context_budget_tokens: for the records."""
        ...

    async def address(self) -> str: ...

    async def aclose(self) -> None: ...


class InProcessTarget:
    """A Forge server on a loopback port in this process, around `backend`."""

    def __init__(self, backend: Backend, host: str = "127.0.0.1") -> None:
        self.backend = backend
        self.host = host
        self._server: ForgeServer | None = None

    def describe(self) -> dict[str, Any]:
        info = self.backend.info()
        return {
            "backend": info.name,
            "model": info.model,
            "tool_call_mode": info.tool_call_mode,
            "context_budget_tokens": info.context_budget_tokens,
            "server": "in-process",
        }

    async def address(self) -> str:
        if self._server is None:
            self._server = await start_server(self.backend, ServerOptions(host=self.host, port=0))
        return f"{self.host}:{self._server.port}"

    async def aclose(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop(0)


class AddressTarget:
    """A Forge server someone else runs."""

    def __init__(self, address: str, info: dict[str, Any]) -> None:
        self._address = address
        self.info = info

    def describe(self) -> dict[str, Any]:
        return {**self.info, "server": self._address}

    async def address(self) -> str:
        return self._address

    async def aclose(self) -> None:
        return None


def oracle_backend(scenarios: Iterable[Scenario]) -> ScriptedBackend:
    """A perfect model: replays each scenario's reference solution.

    Scores 1.0 with efficiency 1.0 on every scenario under every ablation; a
    check of the scenarios themselves (reference, validate, ideal count) and
    of the harness, through the real server and SDK.
    """
    refs = {s.name: s.reference for s in scenarios}

    def respond(request: ChatRequest, index: int) -> Turn:
        ref = refs.get(request.workflow_name, ())
        if index >= len(ref):
            return text("I have nothing more to call.")
        step = ref[index]
        return calls((step.tool, dict(step.args)))

    return ScriptedBackend(responder=respond, name="oracle")


@contextlib.asynccontextmanager
async def in_process(backend: Backend) -> AsyncIterator[InProcessTarget]:
    target = InProcessTarget(backend)
    try:
        yield target
    finally:
        await target.aclose()
