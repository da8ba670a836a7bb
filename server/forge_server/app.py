"""Building and running the gRPC server: service, health, reflection, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_core.backends.base import Backend
from forge_server.auth import Authenticator
from forge_server.journal import Journal
from forge_server.service import ForgeService
from forge_server.tls_files import CertificateFiles
from forge_server.tracing import ServerTracing

log = logging.getLogger(__name__)

# Clients may ping this often (the SDKs default to 30 s).
MIN_CLIENT_PING_MS = 5_000

# After the drain every run has ended in-band; this only lets the final
# messages and trailers reach the clients.
SHUTDOWN_CLOSE_S = 1.0

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ForgeService"].full_name


@dataclass(frozen=True)
class TlsConfig:
    """PEM contents. With `client_ca`, clients must present a certificate
    signed by it (mutual TLS)."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None
    # Read from these files, which are read again when they change (a renewed
    # certificate needs no restart; tls_files.py).
    files: CertificateFiles | None = field(default=None, compare=False)

    @classmethod
    def from_files(cls, cert: Path, key: Path, client_ca: Path | None = None) -> TlsConfig:
        return cls(
            cert.read_bytes(),
            key.read_bytes(),
            client_ca.read_bytes() if client_ca else None,
            CertificateFiles(cert, key, client_ca),
        )

    def credentials(self) -> grpc.ServerCredentials:
        if self.files is not None:
            return self.files.credentials()
        return grpc.ssl_server_credentials(
            [(self.private_key, self.cert_chain)],
            root_certificates=self.client_ca,
            require_client_auth=self.client_ca is not None,
        )


@dataclass
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 50051
    # "host:port" or "unix:///path/to.sock"; when set, host and port are unused.
    listen: str = ""
    # None: plaintext.
    tls: TlsConfig | None = None
    max_message_bytes: int = 16 * 1024 * 1024
    max_active_runs: int = 1024
    grace_s: float = 10.0
    start_timeout_s: float = 10.0
    # None: no authentication (see forge_server.auth).
    auth: Authenticator | None = None
    # Log failure and rejection messages, which quote tool errors and
    # argument values (off: they can hold credentials).
    log_payloads: bool = False
    # Serve Prometheus /metrics on this port (0: any free one); None: off.
    metrics_port: int | None = None
    # Workflows that leave tool_output_secrets unspecified: allow|redact|block.
    tool_output_secrets: str = "allow"
    metrics_host: str = "127.0.0.1"
    # Runs journaled here survive their streams and this process (opened by
    # the caller); None: a broken stream cancels its run.
    journal: Journal | None = None
    # Seconds a run whose stream broke waits for a reattach (with a journal).
    reattach_grace_s: float = 60.0
    # This process's name in the journal's leases ("": host:pid).
    holder: str = ""
    # Journal retention: ended runs older than this go, then the oldest until
    # the events fit in journal_max_bytes (0: no size limit).
    retention_s: float = 7 * 24 * 3600.0
    journal_max_bytes: int = 0
    # OpenTelemetry spans of runs (tracing.ServerTracing.from_env); None: off.
    tracing: ServerTracing | None = None


class ForgeServer:
    """A started grpc.aio server with the Forge, health and reflection services."""

    def __init__(self, server: grpc.aio.Server, service: ForgeService, port: int) -> None:
        self.server = server
        self.service = service
        self.port = port
        self.metrics_port: int | None = None
        self.health = health.aio.HealthServicer()

    async def stop(self, grace_s: float | None = None) -> None:
        """Drain: health turns NOT_SERVING and new runs are refused at once;
        running ones get `grace_s` seconds (None: unbounded), then end in-band
        with SHUTTING_DOWN and their transcript before the transport closes."""
        await self.health.enter_graceful_shutdown()
        await self.service.drain(grace_s)
        await self.server.stop(SHUTDOWN_CLOSE_S)
        self.service.metrics.close()
        if self.service.auth is not None:
            await self.service.auth.aclose()


async def start_server(backend: Backend, options: ServerOptions) -> ForgeServer:
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", options.max_message_bytes),
            ("grpc.max_send_message_length", options.max_message_bytes),
            ("grpc.so_reuseport", 0),
            # Clients ping to keep long tool calls alive through proxies; the
            # default policy (one ping per 5 min without data) answers that
            # with GOAWAY too_many_pings and kills the run.
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_recv_ping_interval_without_data_ms", MIN_CLIENT_PING_MS),
            ("grpc.http2.max_ping_strikes", 0),
        ]
    )
    service = ForgeService(
        backend,
        max_active_runs=options.max_active_runs,
        max_message_bytes=options.max_message_bytes,
        start_timeout_s=options.start_timeout_s,
        auth=options.auth,
        log_payloads=options.log_payloads,
        tool_output_secrets=options.tool_output_secrets,
        journal=options.journal,
        reattach_grace_s=options.reattach_grace_s,
        holder=options.holder,
        retention_s=options.retention_s,
        journal_max_bytes=options.journal_max_bytes,
        tracing=options.tracing,
    )
    pb_grpc.add_ForgeServiceServicer_to_server(service, server)
    address = options.listen or f"{options.host}:{options.port}"
    if options.tls is not None:
        port = server.add_secure_port(address, options.tls.credentials())
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    forge = ForgeServer(server, service, port)
    health_pb2_grpc.add_HealthServicer_to_server(forge.health, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    await server.start()
    await service.start()
    if options.metrics_port is not None:
        forge.metrics_port = service.metrics.serve(options.metrics_port, options.metrics_host)
    for name in ("", SERVICE_NAME):
        await forge.health.set(name, health_pb2.HealthCheckResponse.SERVING)
    return forge


async def serve_until_signalled(forge: ForgeServer, grace_s: float) -> None:
    """Serve until SIGTERM/SIGINT, then drain: new streams are refused, running
    ones get `grace_s` seconds to finish before they are cancelled."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down (grace %.0fs)", grace_s)
    await forge.stop(grace_s)
