"""Who can reach an address the server listens on: this machine only, or
others too (then it refuses plaintext without authentication). The gRPC
port (cli.py) and the run inspector (inspector/serve.py) both ask.
"""

from __future__ import annotations

import ipaddress


def is_local(address: str) -> bool:
    """A Unix socket or a loopback host: only this machine can connect."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0] if address.count(":") == 1 else address
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(address: str, tls: bool, auth: bool, insecure: bool) -> None:
    """Refuse a plaintext, unauthenticated port that other machines can reach."""
    if tls or auth or insecure or is_local(address):
        return
    raise SystemExit(
        f"forge-server: refusing to listen on {address} without TLS (--tls-cert/--tls-key) "
        "or authentication (--auth-token-file/--auth-url): anyone who can reach it could "
        "run the model and see tool arguments. Pass --insecure (FORGE_INSECURE=1) to "
        "do it anyway, e.g. inside a pod network."
    )
