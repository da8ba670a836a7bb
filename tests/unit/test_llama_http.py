"""The pieces' `/completion` client (backends/llama/http_client.py) against HTTP servers on
loopback: answers, streams, and failures raised the way the llama-server
backend's retries expect them."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, asynccontextmanager
from typing import Any

import httpx
import pytest
from aiohttp import web

from forge_core.backends.llama.http_client import CompletionClient, Unavailable

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Refused(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status


@asynccontextmanager
async def server(handler: Handler) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/completion", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def client(url: str, timeout_s: float = 10.0) -> CompletionClient:
    return CompletionClient(url, timeout_s=timeout_s, connections=4, refused=Refused)


async def test_an_answer_and_a_stream() -> None:
    bodies: list[dict[str, Any]] = []

    async def answer(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        if not body.get("stream"):
            return web.json_response({"content": "hi", "timings": {"prompt_n": 3}})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for event in ({"content": "a"}, {"content": "b", "stop": True}):
            await resp.write(f"data: {json.dumps(event)}\n\n".encode())
        return resp

    async with server(answer) as url:
        completions = client(url)
        try:
            assert await completions.post({"prompt": "x", "n_predict": 1}) == {
                "content": "hi",
                "timings": {"prompt_n": 3},
            }
            async with aclosing(completions.events({"prompt": "y"})) as events:
                got = [event async for event in events]
            # The same connection serves both.
            assert await completions.post({"prompt": "z"}) is not None
        finally:
            await completions.aclose()
    assert got == [{"content": "a"}, {"content": "b", "stop": True}]
    assert [b.get("stream") for b in bodies] == [None, True, None]
    assert bodies[0] == {"prompt": "x", "n_predict": 1}


async def test_statuses_become_the_backends_errors() -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        status = int((await request.json())["status"])
        return web.json_response({"error": {"message": "no"}}, status=status)

    async with server(answer) as url:
        completions = client(url)
        try:
            # Loading a model: a transport failure, retried by the backend.
            with pytest.raises(Unavailable, match="503"):
                await completions.post({"status": 503})
            assert issubclass(Unavailable, httpx.TransportError)
            with pytest.raises(Refused) as refused:
                await completions.post({"status": 400})
            assert refused.value.status == 400 and "no" in str(refused.value)
            with pytest.raises(Refused):
                async with aclosing(completions.events({"status": 500})) as events:
                    [event async for event in events]
        finally:
            await completions.aclose()


async def test_a_refused_connection_and_a_broken_stream_are_transport_errors() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    completions = client(closed)
    try:
        with pytest.raises(httpx.ConnectError):
            await completions.post({"prompt": "x"})
    finally:
        await completions.aclose()

    async def breaks(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b'data: {"content": "a"}\n\n')
        assert request.transport is not None
        request.transport.abort()  # the server died mid-stream
        return resp

    async with server(breaks) as url:
        completions = client(url)
        got: list[dict[str, Any]] = []
        try:
            with pytest.raises(httpx.TransportError):
                async with aclosing(completions.events({"prompt": "x"})) as events:
                    async for event in events:
                        got.append(event)
        finally:
            await completions.aclose()
    assert got == [{"content": "a"}]


async def test_a_server_that_does_not_answer_in_time_is_a_read_timeout() -> None:
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.json_response({})

    async with server(slow) as url:
        completions = client(url, timeout_s=0.2)
        try:
            with pytest.raises(httpx.ReadTimeout):
                await completions.post({"prompt": "x"})
        finally:
            release.set()
            await completions.aclose()


async def test_a_connection_the_server_closed_is_not_used_again() -> None:
    """llama-server closes a connection after a streamed answer without
    saying so, and any connection after its keep-alive timeout: the next
    request goes out on a new connection instead of failing."""
    peers: list[int] = []

    async def answer(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername")[1])
        if not (await request.json()).get("stream"):
            return web.json_response({"content": "ok"})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b'data: {"content": "a", "stop": true}\n\n')
        await resp.write_eof()
        request.transport.close()
        return resp

    async with server(answer) as url:
        completions = client(url)
        try:
            async with aclosing(completions.events({"prompt": "x"})) as events:
                assert [e async for e in events] == [{"content": "a", "stop": True}]
            assert await completions.post({"prompt": "y"}) == {"content": "ok"}
            assert await completions.post({"prompt": "z"}) == {"content": "ok"}
        finally:
            await completions.aclose()
    # The stream's connection was not reused; the two posts shared one.
    assert peers[1] != peers[0] and peers[2] == peers[1]
