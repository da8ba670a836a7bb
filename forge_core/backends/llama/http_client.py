"""The HTTP client of a call's pieces: `/completion` requests over aiohttp.

A call in pieces is one to three short `/completion` requests in series, so
the HTTP client's own cost is paid on every one of them. On the 2-core
machines this runs on, the same keep-alive request to llama-server took 1.0
ms through httpx and 0.34 ms through aiohttp (bench/RESULTS.md §17; httpx's
anyio stream layer, encode/httpx#3215). The rest of the llama-server backend
(props, templates, slots, the whole-call stream) stays on httpx.

Failures are raised as the backend's other requests raise them, so its retries
treat both clients alike: a connection that fails or breaks is an
`httpx.TransportError`, a 503 (a server loading its model) `Unavailable`, any
other status the error `refused` makes of it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import httpx

KEEPALIVE_S = 4.0


class Unavailable(httpx.TransportError):
    """503: the server is up but not serving (loading a model after a restart)."""


class CompletionClient:
    """Pooled `POST /completion` to one llama-server."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float,
        connections: int,
        refused: Callable[[int, str], Exception],
    ) -> None:
        self.url = base_url.rstrip("/") + "/completion"
        self._timeout = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=timeout_s)
        self._connections = connections
        self._refused = refused
        # Made on first use: a session belongs to the loop it was made on.
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                # Idle connections go before llama-server's own keep-alive
                # timeout (5 s) closes them under a request.
                connector=aiohttp.TCPConnector(
                    limit=self._connections, keepalive_timeout=KEEPALIVE_S
                ),
                timeout=self._timeout,
                # llama-server sets no cookies; the jar would only cost time.
                cookie_jar=aiohttp.DummyCookieJar(),
                json_serialize=json.dumps,
            )
        return self._session

    async def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion's JSON answer."""
        async with self._request(body) as resp:
            try:
                out: dict[str, Any] = await resp.json(content_type=None)
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise _transport_error(exc) from exc
            except ValueError as exc:
                raise httpx.DecodingError(f"llama-server answered no JSON: {exc}") from exc
            return out

    async def events(self, body: dict[str, Any]) -> AsyncGenerator[dict[str, Any], None]:
        """A streamed completion's server-sent events, as they come."""
        async with self._request({**body, "stream": True}) as resp:
            try:
                async for raw in resp.content:
                    line = raw.decode("utf-8", errors="replace").strip()
                    if line.startswith("data:"):
                        yield json.loads(line[5:])
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise _transport_error(exc) from exc

    @asynccontextmanager
    async def _request(self, body: dict[str, Any]) -> AsyncIterator[aiohttp.ClientResponse]:
        for attempt in range(2):
            try:
                resp = await self._open().post(self.url, json=body)
                break
            except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
                # A pooled connection the server had closed before this request
                # could be written: once more, on a new connection.
                if attempt:
                    raise _transport_error(exc) from exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise _transport_error(exc) from exc
        streamed = bool(body.get("stream"))
        try:
            if resp.status != 200:
                try:
                    text = await resp.text(errors="replace")
                except (aiohttp.ClientError, TimeoutError) as exc:
                    raise _transport_error(exc) from exc
                if resp.status == 503:
                    raise Unavailable(f"HTTP 503: {text[:200]}")
                raise self._refused(resp.status, text)
            yield resp
        finally:
            if streamed:
                # llama-server closes the connection after a streamed answer
                # without saying so: it must not go back to the pool.
                resp.close()
            else:
                resp.release()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _transport_error(exc: BaseException) -> httpx.TransportError:
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx.ConnectError(str(exc))
    if isinstance(exc, TimeoutError):
        return httpx.ReadTimeout(str(exc) or "llama-server did not answer in time")
    return httpx.ReadError(str(exc) or type(exc).__name__)
