"""The run inspector: server-rendered pages of the journal's runs.

Served by `forge-server --ui-port PORT` (Starlette under uvicorn in the
server's own event loop, as the OpenAI endpoint is). Pages:

  GET /runs                    runs, newest first: ?status=running|completed|failed,
                               ?q= (run id, workflow, session or label), ?before=
                               (the keyset cursor of the next page)
  GET /runs/RUN_ID             one run's timeline; live while it runs (SSE)
  GET /runs/RUN_ID/live?after=SEQ  the timeline entries after SEQ (text/event-stream)
  GET /runs/RUN_ID/events.json the run's journal events (protobuf JSON)

A run id in the server's logs opens as http://HOST:PORT/runs/RUN_ID.

With authentication configured the pages take the gRPC API's bearer
tokens: an `Authorization: Bearer` header, or `?token=` once, which sets an
HttpOnly, SameSite=Strict cookie and redirects to the address without it.
A token sees only the runs it started unless the token file marks it
`admin` (or the verifier answers "admin": true).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from forge.v1 import forge_service_pb2 as pb
from forge_server.auth import Authenticator, Identity
from forge_server.errors import RequestRejected
from forge_server.inspector.store import STATUSES, Query, RunStore
from forge_server.inspector.view import (
    Timeline,
    hides_payloads,
    start_info,
    summarize,
    timeline,
)
from forge_server.inspector.view import (
    export as export_run,
)

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
COOKIE = "forge_inspector_token"
PAGE_SIZE = 50
# How often a live run's page looks for new events.
LIVE_POLL_S = 0.4
MAX_SEARCH = 200

_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # A ?token= address must not travel to other sites.
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class _SecurityHeaders:
    """_HEADERS on every response. Plain ASGI: a live page's event stream
    passes through untouched, and ends when the browser leaves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in _HEADERS.items():
                    headers.setdefault(key, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Inspector:
    store: RunStore | None
    auth: Authenticator | None = None
    log_payloads: bool = False
    # The server's --tool-output-secrets, for workflows that do not say.
    tool_output_secrets: str = "allow"
    # Set the cookie with Secure (served over TLS).
    secure: bool = False
    # The seq of each run live on this server, when known: a live page
    # skips the journal while it has not moved.
    live_seq: Callable[[str], int | None] = lambda run_id: None
    # --call-pieces on: a constrained call or parallel batch is made in pieces.
    call_pieces: bool = False

    def __post_init__(self) -> None:
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters["when"] = _when
        self.templates.filters["seconds"] = _seconds

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/", _home),
                Route("/runs", self._guarded(self.runs)),
                Route("/runs/{run_id}", self._guarded(self.run)),
                Route("/runs/{run_id}/events.json", self._guarded(self.export)),
                Route("/runs/{run_id}/live", self._guarded(self.live)),
                Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
            ],
            middleware=[Middleware(_SecurityHeaders)],
        )

    def _guarded(
        self, page: Callable[[Request, Identity | None], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            try:
                token, from_query = _token(request)
                identity = await self._identify(token)
                if from_query and self.auth is not None:
                    return self._set_cookie(request, token)
                if self.store is None:
                    raise Refused(503, "no journal: the inspector shows the journal's runs "
                                  "(start forge-server with --journal)")  # fmt: skip
                return await page(request, identity)
            except Refused as exc:
                return self._error(request, exc.status, exc.message)

        return handle

    async def _identify(self, token: str) -> Identity | None:
        if self.auth is None:
            return None
        if not token:
            raise Refused(
                401,
                "this server requires a bearer token: send 'Authorization: Bearer <token>' "
                "or open the page once with ?token=<token>",
            )
        try:
            return await self.auth.authenticate([("authorization", f"Bearer {token}")])
        except RequestRejected as exc:
            status = {"UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403}.get(exc.reason, 503)
            raise Refused(status, exc.message) from exc

    def _set_cookie(self, request: Request, token: str) -> Response:
        params = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = request.url.path + (f"?{urlencode(params)}" if params else "")
        response = RedirectResponse(target, 303)
        response.set_cookie(
            COOKIE, token, httponly=True, samesite="strict", secure=self.secure, path="/"
        )
        return response

    def _error(self, request: Request, status: int, message: str) -> Response:
        if request.url.path.endswith((".json", "/live")):
            return JSONResponse({"error": {"status": status, "message": message}}, status)
        html = self.templates.get_template("error.html").render(status=status, message=message)
        return HTMLResponse(html, status)

    def _render(self, name: str, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.templates.get_template(name).render(**context))

    async def runs(self, request: Request, identity: Identity | None) -> Response:
        query = _query(request, identity)
        assert self.store is not None
        page = await self.store.page(query)
        now = time.time()
        rows = [summarize(row, now) for row in page.rows]
        needle = query.search.lower()
        if needle:
            # The journal matched the start message's bytes; keep the runs
            # whose id, workflow, session or labels hold the text.
            rows = [r for r in rows if needle in _searchable(r)]
        next_url = ""
        if page.next_before is not None:
            created, run_id = page.next_before
            params = {"status": query.status, "q": query.search, "before": f"{created!r}_{run_id}"}
            next_url = "/runs?" + urlencode({k: v for k, v in params.items() if v})
        context = dict(
            rows=rows, status=query.status, q=query.search, statuses=STATUSES,
            next_url=next_url, first=query.before is None,
            who=identity.subject if identity else "", admin=identity is None or identity.admin,
        )  # fmt: skip
        if request.query_params.get("fragment") == "rows":
            return self._render("_rows.html", **context)
        return self._render("runs.html", **context)

    async def _load(self, run_id: str, identity: Identity | None, after: int = 0) -> Any:
        assert self.store is not None
        found = await self.store.run(run_id, after)
        if found is None or not _may_see(identity, found.row.owner):
            raise Refused(404, f"no run {run_id!r} here (or it is not yours)")
        return found

    def _pieces(self, start: bytes) -> bool:
        return self.call_pieces and not start_info(start).parallel_calls

    def _hides(self, start: bytes) -> bool:
        return hides_payloads(start_info(start), self.tool_output_secrets, self.log_payloads)

    async def run(self, request: Request, identity: Identity | None) -> Response:
        found = await self._load(request.path_params["run_id"], identity)
        if found.events:
            found.row.last_event = found.events[-1][1]
        hide = self._hides(found.row.start)
        entries = timeline(found.events, hide, found.approvals, self._pieces(found.row.start))
        info = start_info(found.row.start)
        last = found.events[-1][0] if found.events else 0
        return self._render(
            "run.html", run=summarize(found.row), entries=entries, hide=hide, info=info,
            last_seq=last, live=found.row.status == "running",
        )  # fmt: skip

    async def export(self, request: Request, identity: Identity | None) -> Response:
        found = await self._load(request.path_params["run_id"], identity)
        body = export_run(found.row, found.events, self._hides(found.row.start))
        run_id = request.path_params["run_id"]
        return JSONResponse(
            body, headers={"Content-Disposition": f'attachment; filename="run-{run_id}.json"'}
        )

    async def live(self, request: Request, identity: Identity | None) -> Response:
        run_id = request.path_params["run_id"]
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            raise Refused(400, "after: expected an event number (an integer)") from None
        found = await self._load(run_id, identity, after)
        hide = self._hides(found.row.start)
        return StreamingResponse(
            self._live_events(run_id, identity, after, found, hide),
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no"},
        )

    async def _live_events(
        self, run_id: str, identity: Identity | None, after: int, found: Any, hide: bool
    ) -> AsyncIterator[str]:
        """New timeline entries as SSE messages until the run ends."""
        builder = Timeline(hide, self._pieces(found.row.start))
        template = self.templates.get_template("_entry.html")
        # The run's mode (for model calls) comes from its first event.
        first = await self._load(run_id, identity, 0)
        for seq, data in first.events[:1]:
            builder.entries(seq, pb.RunResponse.FromString(data))
        while True:
            for seq, data in found.events:
                after = seq
                for entry in builder.entries(seq, pb.RunResponse.FromString(data)):
                    html = template.render(e=entry)
                    yield f"data: {json.dumps({'seq': seq, 'html': html})}\n\n"
            if found.events:
                found.row.last_event = found.events[-1][1]
            summary = summarize(found.row)
            if found.row.status != "running":  # a detached run may be resumed yet
                done = {"status": summary.status, "outcome": summary.outcome}
                yield f"event: done\ndata: {json.dumps(done)}\n\n"
                return
            yield ": waiting\n\n"
            seen = self.live_seq(run_id)
            while seen is not None and seen <= after:
                await asyncio.sleep(LIVE_POLL_S)
                seen = self.live_seq(run_id)
            await asyncio.sleep(LIVE_POLL_S)
            found = await self._load(run_id, identity, after)


async def _home(request: Request) -> Response:
    return RedirectResponse("/runs", 303)


def _token(request: Request) -> tuple[str, bool]:
    """The bearer token and whether it came in the query (?token=)."""
    scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip(), False
    query = request.query_params.get("token", "")
    if query:
        return query, True
    return request.cookies.get(COOKIE, ""), False


def _may_see(identity: Identity | None, owner: str) -> bool:
    return identity is None or identity.admin or identity.subject == owner


def _query(request: Request, identity: Identity | None) -> Query:
    params = request.query_params
    status = params.get("status", "")
    if status and status not in STATUSES:
        raise Refused(400, f"status: expected one of {', '.join(STATUSES)}, got {status[:40]!r}")
    search = params.get("q", "").strip()
    if len(search) > MAX_SEARCH:
        raise Refused(400, f"q: at most {MAX_SEARCH} characters")
    before: tuple[float, str] | None = None
    if params.get("before"):
        created, sep, run_id = params["before"].partition("_")
        try:
            before = (float(created), run_id)
        except ValueError:
            sep = ""
        if not sep:
            raise Refused(400, "before: expected the cursor of a 'next page' link")
    owner = None if identity is None or identity.admin else identity.subject
    return Query(status, search, owner, before, PAGE_SIZE)


def _searchable(row: Any) -> str:
    labels = " ".join(f"{k}={v}" for k, v in row.labels.items())
    return f"{row.run_id} {row.workflow} {row.session_id} {labels}".lower()


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts)) + " UTC"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 60:
        return f"{value:.1f} s"
    return f"{int(value // 60)} min {value % 60:.0f} s"


class _EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # forge-server's own SIGTERM/SIGINT handlers stop every server.
        yield


class InspectorServer:
    """uvicorn serving the inspector inside the running event loop."""

    def __init__(self, server: uvicorn.Server, task: asyncio.Task[None], port: int) -> None:
        self.server = server
        self.task = task
        self.port = port
        # Closed with the server (the caller may set it).
        self.store: RunStore | None = None

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(self.task, 5.0)
        if self.store is not None:
            await self.store.aclose()


async def serve_inspector(
    inspector: Inspector,
    host: str,
    port: int,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    tls_client_ca: Path | None = None,
) -> InspectorServer:
    """Start the inspector on host:port (0: a free port) in this event loop,
    over TLS when given a certificate and key; with a client CA, browsers
    must present a certificate it signed, as gRPC clients must."""
    config = uvicorn.Config(
        inspector.app(),
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        # Live pages hold their streams open; they are cut after this.
        timeout_graceful_shutdown=1,
        ssl_certfile=str(tls_cert) if tls_cert else None,
        ssl_keyfile=str(tls_key) if tls_key else None,
        ssl_ca_certs=str(tls_client_ca) if tls_client_ca else None,
        ssl_cert_reqs=ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
    )
    # Bound here, not by uvicorn: its bind error is a SystemExit raised in
    # the serving task, which would stop forge-server's whole event loop.
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    server = _EmbeddedServer(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
            raise OSError(f"the run inspector did not start on {host}:{port}")
        await asyncio.sleep(0.02)
    bound = int(sock.getsockname()[1])
    return InspectorServer(server, task, bound)
