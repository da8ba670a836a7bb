"""Authentication on the real loopback server (issue 13, item 2).

Tokens come from a real file on disk and from a real HTTP verifier on
loopback (a stdlib http.server in a thread); the model is a ScriptedBackend,
the clients are the Python SDK and the raw generated stubs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client import ForgeClient, RequestRejectedError
from forge_server.app import ForgeServer, ServerOptions
from forge_server.auth import Authenticator, TokenFile, TokenFileError, UrlVerifier
from tests.helpers import address, running_server, settled
from tests.integration.test_bad_input import next_tool_call, start_request, weather_backend
from tests.integration.test_run_stream import weather_workflow


@asynccontextmanager
async def server_with(auth: Authenticator) -> AsyncIterator[ForgeServer]:
    options = ServerOptions(host="127.0.0.1", port=0, auth=auth)
    async with running_server(weather_backend(), options) as server:
        yield server


async def run_as(server: ForgeServer, token: str | None) -> str:
    async with ForgeClient(address(server), token=token) as client:
        result = await client.run(weather_workflow([]), "Weather in Paris?")
    return result.terminal_tool


async def refused(server: ForgeServer, token: str | None) -> RequestRejectedError:
    with pytest.raises(RequestRejectedError) as err:
        await run_as(server, token)
    return err.value


class HandClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def token_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens"
    path.write_text(text)
    return path


async def test_a_listed_token_runs_and_others_are_unauthenticated(tmp_path: Path) -> None:
    tokens = TokenFile(token_file(tmp_path, "# ops\ns3cret name=ci\nother-token\n"))
    async with server_with(Authenticator(tokens)) as server:
        assert await run_as(server, "s3cret") == "report_weather"
        assert await run_as(server, "other-token") == "report_weather"
        missing = await refused(server, None)
        wrong = await refused(server, "s3cret-not")
    assert (missing.code, missing.reason) == ("UNAUTHENTICATED", "UNAUTHENTICATED")
    assert "bearer token" in missing.message
    assert (wrong.code, wrong.reason) == ("UNAUTHENTICATED", "UNAUTHENTICATED")
    assert "s3cret" not in wrong.message


async def test_health_stays_open_and_server_info_needs_a_token(tmp_path: Path) -> None:
    tokens = TokenFile(token_file(tmp_path, "s3cret\n"))
    async with server_with(Authenticator(tokens)) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="forge.v1.ForgeService")
            )
            stub = pb_grpc.ForgeServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.GetServerInfo(pb.GetServerInfoRequest())
            info = await stub.GetServerInfo(
                pb.GetServerInfoRequest(), metadata=(("authorization", "Bearer s3cret"),)
            )
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert info.backend == "scripted"


async def test_a_changed_token_file_is_picked_up_without_a_restart(tmp_path: Path) -> None:
    path = token_file(tmp_path, "old-token\n")
    clock = HandClock()
    async with server_with(Authenticator(TokenFile(path, recheck_s=1.0, clock=clock))) as server:
        assert await run_as(server, "old-token") == "report_weather"
        path.write_text("new-token name=rotated\n")
        # Within the recheck interval the file is not looked at again.
        assert await run_as(server, "old-token") == "report_weather"
        clock.now += 1.0
        assert await run_as(server, "new-token") == "report_weather"
        assert (await refused(server, "old-token")).code == "UNAUTHENTICATED"
        # A broken file keeps the last good tokens rather than locking all out.
        path.write_text("new-token max_runs=lots\n")
        clock.now += 1.0
        assert await run_as(server, "new-token") == "report_weather"


def test_a_malformed_token_file_is_refused_at_start_without_echoing_tokens(
    tmp_path: Path,
) -> None:
    with pytest.raises(TokenFileError) as err:
        TokenFile(token_file(tmp_path, "tok-1\ntop-secret colour=blue\n"))
    assert ":2:" in str(err.value)
    assert "top-secret" not in str(err.value)
    with pytest.raises(TokenFileError):
        TokenFile(tmp_path / "absent")


async def test_runs_per_token_are_limited_and_other_tokens_are_not(tmp_path: Path) -> None:
    tokens = TokenFile(token_file(tmp_path, "one max_runs=1\nfree\n"))
    async with server_with(Authenticator(tokens)) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            held = stub.Run(metadata=(("authorization", "Bearer one"),))
            await held.write(start_request())
            await next_tool_call(held)  # the run is open and waits for its tool
            err = await refused(server, "one")
            assert await run_as(server, "free") == "report_weather"
            held.cancel()
        await settled(lambda: server.service.open_streams == 0)
        assert await run_as(server, "one") == "report_weather"
    assert (err.code, err.reason) == ("RESOURCE_EXHAUSTED", "TOKEN_RUN_LIMIT")
    assert "limit 1" in err.message


class Verifier:
    """A real HTTP token verifier on loopback: answers by token."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.answers = {
            "Bearer alice": (200, {"subject": "alice", "max_runs": 1}),
            "Bearer bob": (200, None),
            "Bearer mallory": (403, None),
            "Bearer flaky": (503, None),
        }

    @contextmanager
    def serving(self) -> Iterator[str]:
        verifier = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                token = self.headers.get("authorization", "")
                verifier.asked.append(token)
                status, body = verifier.answers.get(token, (401, None))
                payload = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=http.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{http.server_address[1]}/verify"
        finally:
            http.shutdown()
            http.server_close()


async def test_an_external_verifier_decides_and_its_answers_are_cached() -> None:
    verifier, clock = Verifier(), HandClock()
    with verifier.serving() as url:
        auth = Authenticator(verifier=UrlVerifier(url, ttl_s=60, clock=clock))
        async with server_with(auth) as server:
            assert await run_as(server, "alice") == "report_weather"
            assert await run_as(server, "alice") == "report_weather"
            assert await run_as(server, "bob") == "report_weather"
            unknown = await refused(server, "eve")
            banned = await refused(server, "mallory")
            down = await refused(server, "flaky")
            await refused(server, "eve")
            clock.now += 61
            assert await run_as(server, "alice") == "report_weather"
    assert (unknown.code, unknown.reason) == ("UNAUTHENTICATED", "UNAUTHENTICATED")
    assert (banned.code, banned.reason) == ("PERMISSION_DENIED", "PERMISSION_DENIED")
    assert (down.code, down.reason) == ("UNAVAILABLE", "AUTH_UNAVAILABLE")
    # Once per token within the TTL (eve's refusal too), again after it.
    assert verifier.asked.count("Bearer alice") == 2
    assert verifier.asked.count("Bearer eve") == 1


async def test_an_unreachable_verifier_is_unavailable_not_a_crash() -> None:
    verifier = Verifier()
    with verifier.serving() as url:
        pass  # closed: nothing listens there any more
    auth = Authenticator(verifier=UrlVerifier(url, timeout_s=2))
    async with server_with(auth) as server:
        err = await refused(server, "alice")
    assert (err.code, err.reason) == ("UNAVAILABLE", "AUTH_UNAVAILABLE")


async def test_the_token_file_is_asked_before_the_verifier(tmp_path: Path) -> None:
    verifier = Verifier()
    with verifier.serving() as url:
        auth = Authenticator(
            TokenFile(token_file(tmp_path, "local-token\n")), UrlVerifier(url, ttl_s=60)
        )
        async with server_with(auth) as server:
            assert await run_as(server, "local-token") == "report_weather"
            assert await run_as(server, "bob") == "report_weather"
    assert verifier.asked == ["Bearer bob"]
