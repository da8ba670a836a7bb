"""A renewed TLS certificate takes effect without a restart: the server
reads its certificate files again when they change, at the next handshake.
A real grpc.aio server with certificates written here (tests/tls_certs.py)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import grpc
import pytest

from forge_client import ConnectionLostError, ForgeClient
from forge_server.app import ServerOptions, TlsConfig
from tests.helpers import running_server
from tests.integration.test_bad_input import weather_backend
from tests.tls_certs import Certs, write_certs


async def answers(address: str, ca: bytes) -> bool:
    """Whether a new connection trusting `ca` (PEM) gets an answer."""
    creds = grpc.ssl_channel_credentials(ca)
    async with ForgeClient(address, credentials=creds) as client:
        try:
            await client.server_info(timeout_s=5)
        except ConnectionLostError:
            return False
    return True


def renew(live: Certs, renewed: Certs) -> None:
    """What a certificate manager does: new files in place, key first."""
    for source, target in (
        (renewed.server_key, live.server_key),
        (renewed.server_cert, live.server_cert),
    ):
        partial = target.with_suffix(".new")
        shutil.copyfile(source, partial)
        partial.replace(target)


async def test_a_renewed_certificate_is_served_without_a_restart(tmp_path: Path) -> None:
    live = write_certs(tmp_path / "live")
    renewed = write_certs(tmp_path / "renewed")  # another CA, as after a rotation
    tls = TlsConfig.from_files(live.server_cert, live.server_key)
    original_ca, renewed_ca = live.ca.read_bytes(), renewed.ca.read_bytes()
    options = ServerOptions(host="127.0.0.1", port=0, tls=tls)
    async with running_server(weather_backend(), options) as server:
        address = f"127.0.0.1:{server.port}"
        assert await answers(address, original_ca)
        assert not await answers(address, renewed_ca)

        renew(live, renewed)
        # The files are looked at once a second at most (tls_files.py).
        for _ in range(50):
            if await answers(address, renewed_ca):
                break
            await asyncio.sleep(0.2)
        assert await answers(address, renewed_ca)
        assert not await answers(address, original_ca)
    assert tls.files is not None and tls.files.reloads == 1


async def test_half_written_files_keep_the_old_certificate(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    live = write_certs(tmp_path / "live")
    renewed = write_certs(tmp_path / "renewed")
    tls = TlsConfig.from_files(live.server_cert, live.server_key)
    ca = live.ca.read_bytes()
    options = ServerOptions(host="127.0.0.1", port=0, tls=tls)
    async with running_server(weather_backend(), options) as server:
        address = f"127.0.0.1:{server.port}"
        # Only the key is new: it does not match the certificate.
        shutil.copyfile(renewed.server_key, live.server_key)
        for _ in range(10):
            await asyncio.sleep(0.2)
            assert await answers(address, ca)
        assert tls.files is not None and tls.files.reloads == 0
    assert any("cannot be used" in r.getMessage() for r in caplog.records)
