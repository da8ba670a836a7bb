"""TLS certificate files that are read again when they change.

A renewed certificate (cert-manager rewriting a mounted Secret, certbot, an
operator copying files) takes effect without a restart: gRPC asks for the
server's certificate configuration at each new TLS handshake
(grpc.dynamic_ssl_server_credentials), and this answers with the files'
new contents once they have changed and form a usable pair. Connections
already open keep the certificate they were made with.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from pathlib import Path

import grpc

log = logging.getLogger(__name__)

# The files are looked at (stat) at most this often, however many handshakes.
CHECK_EVERY_S = 1.0

_Stamp = tuple[tuple[int, int] | None, ...]


class CertificateFiles:
    """The server's certificate chain, key and optional client CA, as files."""

    def __init__(self, cert: Path, key: Path, client_ca: Path | None = None) -> None:
        self.cert, self.key, self.client_ca = cert, key, client_ca
        self._lock = threading.Lock()
        self._checked = time.monotonic()
        self._stamp = self._stamps()
        # Files that changed into something unusable (warned about once).
        self._bad: _Stamp | None = None
        self.reloads = 0

    def _paths(self) -> list[Path]:
        return [self.cert, self.key] + ([self.client_ca] if self.client_ca else [])

    def _stamps(self) -> _Stamp:
        stamps: list[tuple[int, int] | None] = []
        for path in self._paths():
            try:
                st = path.stat()
                stamps.append((st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def configuration(self) -> grpc.ServerCertificateConfiguration:
        ca = self.client_ca.read_bytes() if self.client_ca else None
        return grpc.ssl_server_certificate_configuration(
            [(self.key.read_bytes(), self.cert.read_bytes())], root_certificates=ca
        )

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.dynamic_ssl_server_credentials(
            self.configuration(),
            # gRPC documents None as "keep the current configuration";
            # types-grpcio's signature leaves it out.
            self.fetch,  # type: ignore[arg-type]
            require_client_authentication=self.client_ca is not None,
        )

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's question at a handshake: a new configuration, or None to
        keep the current one. Called on gRPC's threads."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked < CHECK_EVERY_S:
                return None
            self._checked = now
            stamp = self._stamps()
            if stamp in (self._stamp, self._bad):
                return None
            problem = self._unusable()
            if problem:
                # Half-written (the key renewed, the certificate not yet):
                # keep serving the old pair; the next change is looked at.
                self._bad = stamp
                log.warning(
                    "TLS files changed but cannot be used (%s); keeping the old ones", problem
                )
                return None
            try:
                config = self.configuration()
            except OSError as exc:
                log.warning("TLS files changed but cannot be read (%s); keeping the old ones", exc)
                return None
            self._stamp = stamp
            self.reloads += 1
            log.info("TLS certificate reloaded from %s", self.cert)
            return config

    def _unusable(self) -> str:
        """Why the files do not form a usable server configuration ("" when
        they do): OpenSSL itself loads the pair and the CA."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key)
            if self.client_ca is not None:
                context.load_verify_locations(self.client_ca)
        except (OSError, ssl.SSLError) as exc:
            return str(exc)
        return ""
