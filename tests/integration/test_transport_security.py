"""TLS, mutual TLS and Unix sockets on the real server (issue 13, item 3).

Certificates are made for each test by tests/tls_certs.py (a throw-away CA);
the clients are the Python SDK over real TLS and a real Unix socket; the
model is a ScriptedBackend.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from forge_client import ConnectionLostError, ForgeClient
from forge_server.app import ServerOptions, TlsConfig
from forge_server.exposure import check_exposure, is_local
from tests.helpers import running_server
from tests.integration.test_bad_input import weather_backend
from tests.integration.test_run_stream import weather_workflow
from tests.tls_certs import Certs, write_certs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    return write_certs(tmp_path / "certs")


async def weather_run(client: ForgeClient) -> str:
    result = await client.run(weather_workflow([]), "Weather in Paris?")
    return result.terminal_tool


def client_credentials(certs: Certs, with_client_cert: bool) -> grpc.ChannelCredentials:
    if with_client_cert:
        return grpc.ssl_channel_credentials(
            certs.ca.read_bytes(), certs.client_key.read_bytes(), certs.client_cert.read_bytes()
        )
    return grpc.ssl_channel_credentials(certs.ca.read_bytes())


async def test_a_tls_server_serves_tls_clients_and_refuses_plaintext(certs: Certs) -> None:
    tls = TlsConfig.from_files(certs.server_cert, certs.server_key)
    options = ServerOptions(host="127.0.0.1", port=0, tls=tls)
    async with running_server(weather_backend(), options) as server:
        address = f"127.0.0.1:{server.port}"
        async with ForgeClient(address, credentials=client_credentials(certs, False)) as client:
            assert await weather_run(client) == "report_weather"
            info = await client.server_info()
        async with ForgeClient(address) as plaintext:
            with pytest.raises(ConnectionLostError):
                await plaintext.server_info(timeout_s=5)
    assert info.backend == "scripted"


async def test_a_client_that_does_not_trust_the_server_ca_cannot_connect(
    certs: Certs, tmp_path: Path
) -> None:
    other = write_certs(tmp_path / "other")
    tls = TlsConfig.from_files(certs.server_cert, certs.server_key)
    options = ServerOptions(host="127.0.0.1", port=0, tls=tls)
    async with running_server(weather_backend(), options) as server:
        creds = grpc.ssl_channel_credentials(other.ca.read_bytes())
        async with ForgeClient(f"127.0.0.1:{server.port}", credentials=creds) as client:
            with pytest.raises(ConnectionLostError):
                await client.server_info(timeout_s=5)


async def test_mutual_tls_admits_only_clients_with_a_certificate_from_the_ca(
    certs: Certs,
) -> None:
    tls = TlsConfig.from_files(certs.server_cert, certs.server_key, certs.ca)
    options = ServerOptions(host="127.0.0.1", port=0, tls=tls)
    async with running_server(weather_backend(), options) as server:
        address = f"127.0.0.1:{server.port}"
        async with ForgeClient(address, credentials=client_credentials(certs, True)) as client:
            assert await weather_run(client) == "report_weather"
        async with ForgeClient(address, credentials=client_credentials(certs, False)) as anon:
            with pytest.raises(ConnectionLostError):
                await anon.server_info(timeout_s=5)


async def test_a_unix_socket_serves_runs(tmp_path: Path) -> None:
    socket = tmp_path / "forge.sock"
    options = ServerOptions(listen=f"unix://{socket}")
    async with running_server(weather_backend(), options):
        assert socket.exists()
        async with ForgeClient(f"unix://{socket}") as client:
            assert await weather_run(client) == "report_weather"


@pytest.mark.parametrize(
    ("address", "local"),
    [
        ("127.0.0.1:50051", True),
        ("127.0.0.2:50051", True),
        ("localhost:50051", True),
        ("[::1]:50051", True),
        ("unix:///run/forge.sock", True),
        ("0.0.0.0:50051", False),
        ("[::]:50051", False),
        ("10.1.2.3:50051", False),
        ("forge.internal:50051", False),
    ],
)
def test_which_addresses_count_as_local(address: str, local: bool) -> None:
    assert is_local(address) is local


def test_a_public_plaintext_port_without_auth_needs_insecure() -> None:
    with pytest.raises(SystemExit) as refused:
        check_exposure("0.0.0.0:50051", tls=False, auth=False, insecure=False)
    assert "--insecure" in str(refused.value.code)
    check_exposure("0.0.0.0:50051", tls=True, auth=False, insecure=False)
    check_exposure("0.0.0.0:50051", tls=False, auth=True, insecure=False)
    check_exposure("0.0.0.0:50051", tls=False, auth=False, insecure=True)
    check_exposure("127.0.0.1:50051", tls=False, auth=False, insecure=False)


def test_forge_server_refuses_to_start_exposed_before_loading_a_backend() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    proc = subprocess.run(
        [sys.executable, "-m", "forge_server", "--host", "0.0.0.0", "--port", "0",
         "--backend", "scripted"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "refusing to listen on 0.0.0.0:0" in proc.stderr
