"""Counting the OpenAI endpoint's requests in the gRPC server's /metrics."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from forge_server.metrics import Metrics


def _route(path: str) -> str:
    """A bounded label for /metrics: the route, never a workflow's name."""
    if path == "/v1/chat/completions":
        return "chat_completions"
    if path == "/v1/models":
        return "models"
    if path.startswith("/v1/forge/workflows"):
        return "workflows"
    return "other"


class CountRequests:
    """Counts each request by route and the status it was answered with
    (forge_openai_requests); a streamed answer counts its 200 once it starts."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def counting(message: AsgiMessage) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting)
        finally:
            self.metrics.openai_requests.labels(_route(scope["path"]), str(status)).inc()
