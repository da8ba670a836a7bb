"""forge-server's inspector flags (--ui-port, --ui-host) and its start-up."""

from __future__ import annotations

import argparse
import logging
import os
from typing import TYPE_CHECKING

from forge_server.auth import Authenticator
from forge_server.exposure import is_local
from forge_server.inspector.app import Inspector, InspectorServer, serve_inspector
from forge_server.inspector.store import open_store
from forge_server.journal import Journal

if TYPE_CHECKING:
    from forge_server.app import ForgeServer

log = logging.getLogger("forge_server")


def add_arguments(p: argparse.ArgumentParser) -> None:
    env = os.environ.get
    p.add_argument(
        "--ui-port",
        type=int,
        default=int(env("FORGE_UI_PORT", "-1")),
        help="serve the run inspector (the journal's runs in a browser) on "
        "http(s)://HOST:PORT/runs (0: any free port; default: off)",
    )
    p.add_argument(
        "--ui-host",
        default=env("FORGE_UI_HOST", ""),
        help="address for the run inspector (default: --host, or 127.0.0.1 with a socket); "
        "beyond loopback it needs --tls-cert/--tls-key (or --insecure)",
    )


def ui_host(args: argparse.Namespace) -> str:
    return str(args.ui_host or ("127.0.0.1" if args.listen.startswith("unix:") else args.host))


def check_ui_exposure(args: argparse.Namespace) -> None:
    """Refuse an inspector that other machines reach without TLS: its pages
    carry tool arguments and its cookie a bearer token."""
    if args.ui_port < 0 or args.tls_cert is not None or args.insecure:
        return
    host = ui_host(args)
    if not is_local(host):
        raise SystemExit(
            f"forge-server: refusing to serve the run inspector on {host} without TLS "
            "(--tls-cert/--tls-key): its pages show tool arguments and results, and a "
            "browser's token would cross the network in clear. Pass --insecure to do it anyway."
        )


async def start_inspector(
    args: argparse.Namespace,
    forge: ForgeServer,
    journal: Journal | None,
    auth: Authenticator | None,
) -> InspectorServer | None:
    if args.ui_port < 0:
        return None
    store = open_store(journal) if journal is not None else None
    if store is not None:
        await store.open()
    else:
        log.warning("run inspector: no journal, so no runs to show (pass --journal)")
    live = forge.service.runs.live  # the runs this server is running now

    def live_seq(run_id: str) -> int | None:
        run = live.get(run_id)
        return run.seq if run is not None else None

    tls = args.tls_cert is not None and args.tls_key is not None
    inspector = Inspector(
        store,
        auth,
        args.log_payloads,
        args.tool_output_secrets,
        tls,
        live_seq,
        call_pieces=args.call_pieces == "on",
    )
    host = ui_host(args)
    try:
        server = await serve_inspector(
            inspector,
            host,
            args.ui_port,
            args.tls_cert if tls else None,
            args.tls_key if tls else None,
            args.tls_client_ca if tls else None,
        )
    except BaseException:
        if store is not None:
            await store.aclose()
        raise
    server.store = store
    scheme = "https" if tls else "http"
    log.info("run inspector on %s://%s:%d/runs (a run: /runs/RUN_ID)", scheme, host, server.port)
    return server
