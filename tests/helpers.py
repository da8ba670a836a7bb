"""Test helpers: a real Forge gRPC server on a free loopback port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from forge_core.backends.base import Backend
from forge_server.app import ForgeServer, ServerOptions, start_server


@asynccontextmanager
async def running_server(
    backend: Backend, options: ServerOptions | None = None
) -> AsyncIterator[ForgeServer]:
    """Start the real grpc.aio server (Forge + health + reflection) on 127.0.0.1:0."""
    server = await start_server(backend, options or ServerOptions(host="127.0.0.1", port=0))
    try:
        yield server
    finally:
        await server.stop(0)


def address(server: ForgeServer) -> str:
    return f"127.0.0.1:{server.port}"


async def wait_for_server(addr: str, timeout_s: float) -> None:
    """Poll the gRPC health service until the server at `addr` is SERVING."""
    import asyncio
    import time

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout_s
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=2)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"no SERVING answer from {addr} within {timeout_s}s")
            await asyncio.sleep(0.2)


async def settled(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait (bounded) for the server's bookkeeping after a stream ended: the
    client sees the final message before the server has released the run."""
    for _ in range(int(timeout_s / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    assert condition()
