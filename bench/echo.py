"""The floor for a Python gRPC round trip: a bare grpc.aio bidirectional echo.

Server (a child process in the benchmarks):

    python -m bench.echo --port 50099 --reply-bytes 120

Every message a stream receives is answered with one reply of --reply-bytes
bytes: the same shape as a Forge tool round trip (result in, next call out)
without anything Forge does in between. Raw bytes, no protobuf parsing.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import AsyncIterator

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

METHOD = "/bench.Echo/Chat"


def _identity(data: bytes) -> bytes:
    return data


def _handler(reply: bytes) -> grpc.GenericRpcHandler:
    async def chat(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        async for _ in requests:
            yield reply

    return grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "Chat": grpc.stream_stream_rpc_method_handler(
                chat, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )


async def serve(port: int, reply_bytes: int) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((_handler(b"x" * reply_bytes),))
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await checker.set("", health_pb2.HealthCheckResponse.SERVING)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1)


def chat_stub(channel: grpc.aio.Channel) -> grpc.aio.StreamStreamMultiCallable[bytes, bytes]:
    return channel.stream_stream(
        METHOD, request_serializer=_identity, response_deserializer=_identity
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--reply-bytes", type=int, default=100)
    args = p.parse_args()
    asyncio.run(serve(args.port, args.reply_bytes))


if __name__ == "__main__":
    main()
