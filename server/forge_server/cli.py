"""`forge-server`: the sidecar's command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from forge_core.llama_host.failures import LlamaStartupError
from forge_core.llama_host.startup import port_taken
from forge_core.modes import BudgetMode
from forge_server import __version__, cli_args, logs
from forge_server.app import ServerOptions, TlsConfig, serve_until_signalled, start_server
from forge_server.auth import Authenticator, TokenFile, TokenFileError, UrlVerifier
from forge_server.backend import BackendConfig, open_backend
from forge_server.check import check
from forge_server.exposure import check_exposure
from forge_server.inspector import serve as inspector
from forge_server.journal import Journal, open_journal
from forge_server.journal import default_url as default_journal_url
from forge_server.openai_app import OpenAIEndpoint, OpenAIServer, WorkflowRegistry, serve_openai
from forge_server.tracing import ServerTracing

log = logging.getLogger("forge_server")

# The managed llama-server could not start, or a port Forge listens on is
# taken (the message says which).
EXIT_LLAMA_STARTUP = 3


class StartupRefused(Exception):
    """forge-server cannot serve as configured; `str()` is the one message
    it prints (exit status EXIT_LLAMA_STARTUP)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="forge-server",
        description=(
            "Forge gRPC sidecar: runs guarded tool-calling workflows against a local model. "
            "With no backend flags it starts a managed llama-server with the bundled "
            "Gemma 3 270M model."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"forge-server {__version__}")
    p.add_argument(
        "--check",
        action="store_true",
        help="start (or connect to) the configured backend as serving would, print its "
        "backend, device, model, context, budget and slots, stop it and exit: 0 when it "
        "works, non-zero with the reason when it cannot start",
    )
    cli_args.add_listening(p)
    cli_args.add_authentication(p)
    cli_args.add_backend(p)
    cli_args.add_observability(p)
    cli_args.add_openai_endpoint(p)
    cli_args.add_payload_handling(p)
    inspector.add_arguments(p)
    return p


def backend_config(argv: Sequence[str]) -> BackendConfig:
    """forge-server's backend flags (and their FORGE_* environment defaults)
    as a BackendConfig, for tools that open a backend as forge-server would
    (forge-eval passes its own flags and --server-args through this)."""
    return BackendConfig.from_args(build_parser().parse_args(list(argv)))


def authenticator(args: argparse.Namespace) -> Authenticator | None:
    """The --auth-* flags as an Authenticator; None when none is set."""
    if args.auth_token_file is None and not args.auth_url:
        return None
    try:
        token_file = TokenFile(args.auth_token_file) if args.auth_token_file else None
    except TokenFileError as exc:
        raise SystemExit(f"forge-server: --auth-token-file: {exc}") from None
    verifier = UrlVerifier(args.auth_url, ttl_s=args.auth_cache_ttl) if args.auth_url else None
    return Authenticator(token_file, verifier, max_runs_per_token=args.max_runs_per_token)


def tls_config(args: argparse.Namespace) -> TlsConfig | None:
    if args.tls_cert is None and args.tls_key is None:
        if args.tls_client_ca is not None:
            raise SystemExit("forge-server: --tls-client-ca needs --tls-cert and --tls-key")
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise SystemExit("forge-server: --tls-cert and --tls-key go together")
    try:
        return TlsConfig.from_files(args.tls_cert, args.tls_key, args.tls_client_ca)
    except OSError as exc:
        raise SystemExit(f"forge-server: cannot read a TLS file: {exc}") from None


async def serve(args: argparse.Namespace) -> None:
    # Everything that can refuse to start does so before llama-server starts.
    auth = authenticator(args)
    tls = tls_config(args)
    address = args.listen or f"{args.host}:{args.port}"
    check_exposure(address, tls is not None, auth is not None, args.insecure)
    inspector.check_ui_exposure(args)
    openai_host = args.openai_host or (
        "127.0.0.1" if args.listen.startswith("unix:") else args.host
    )
    check_ports(args, openai_host)
    registry = WorkflowRegistry()
    if args.openai_port >= 0:
        # Plain HTTP: the same rule as a plaintext gRPC port.
        check_exposure(f"{openai_host}:{args.openai_port}", False, auth is not None, args.insecure)
        if args.openai_workflows is not None:
            registry.load(args.openai_workflows)
    try:
        journal = open_journal(args.journal or default_journal_url())
    except ValueError as exc:
        raise SystemExit(f"forge-server: {exc}") from None
    if journal is not None:
        try:
            await journal.open()
        except Exception as exc:
            if args.journal:
                raise SystemExit(
                    f"forge-server: cannot open the journal {journal.url}: {exc}"
                ) from exc
            # The implicit default: a read-only cache dir must not stop the
            # server; runs then end with their streams, as with --journal none.
            log.warning("no journal (%s: %s); pass --journal to choose one", journal.url, exc)
            journal = None
    # OTLP traces when the OTEL_* variables ask for them (docs/tracing.md).
    tracing = ServerTracing.from_env()
    try:
        await _serve(args, auth, tls, registry, openai_host, journal, tracing)
    finally:
        if tracing is not None:
            tracing.shutdown()
        if journal is not None:
            await journal.aclose()


def server_options(
    args: argparse.Namespace,
    auth: Authenticator | None,
    tls: TlsConfig | None,
    journal: Journal | None,
    tracing: ServerTracing | None,
) -> ServerOptions:
    """The gRPC server's options from the command line."""
    return ServerOptions(
        host=args.host,
        port=args.port,
        max_message_bytes=args.max_message_bytes,
        max_active_runs=args.max_active_runs,
        grace_s=args.shutdown_grace,
        start_timeout_s=args.start_timeout,
        auth=auth,
        listen=args.listen,
        tls=tls,
        log_payloads=args.log_payloads,
        tool_output_secrets=args.tool_output_secrets,
        metrics_port=args.metrics_port if args.metrics_port >= 0 else None,
        metrics_host=args.metrics_host
        or ("127.0.0.1" if args.listen.startswith("unix:") else args.host),
        journal=journal,
        reattach_grace_s=args.reattach_grace,
        holder=args.replica_id,
        retention_s=args.journal_retention_hours * 3600,
        journal_max_bytes=int(args.journal_max_mb * 1024 * 1024),
        tracing=tracing,
    )


async def _serve(
    args: argparse.Namespace,
    auth: Authenticator | None,
    tls: TlsConfig | None,
    registry: WorkflowRegistry,
    openai_host: str,
    journal: Journal | None,
    tracing: ServerTracing | None = None,
) -> None:
    async with open_backend(BackendConfig.from_args(args)) as backend:
        options = server_options(args, auth, tls, journal, tracing)
        try:
            forge = await start_server(backend, options)
        except (OSError, RuntimeError) as exc:  # taken since check_ports looked
            # grpc reports a failed bind as RuntimeError("Failed to bind ...").
            if isinstance(exc, RuntimeError) and "bind" not in str(exc):
                raise
            address = args.listen or f"{args.host}:{args.port}"
            raise StartupRefused(f"cannot listen on {address}: {exc}") from None
        if journal is not None:
            log.info("journal: %s (reattach grace %gs)", journal.url, args.reattach_grace)
        info = backend.info()
        log.info(
            "Forge %s listening on %s%s | backend=%s (%s%s) model=%s "
            "context_budget=%d tokens (%s) slots=%d tool_call_mode=%s event_loop=%s",
            __version__, args.listen or f"{args.host}:{forge.port}",
            " (TLS)" if tls else "", info.name, info.backend_mode,
            f" {info.url}" if info.url else "", info.model,
            info.context_budget_tokens, info.budget_mode, info.slots, info.tool_call_mode,
            type(asyncio.get_running_loop()).__module__.split(".")[0],
        )  # fmt: skip
        openai: OpenAIServer | None = None
        if args.openai_port >= 0:
            endpoint = OpenAIEndpoint(
                backend,
                registry,
                auth=auth,
                tool_output_secrets=args.tool_output_secrets,
                metrics=forge.service.metrics,
                tracing=tracing,
            )
            try:
                openai = await serve_openai(endpoint, openai_host, args.openai_port)
            except OSError as exc:
                await forge.stop(0)
                raise StartupRefused(
                    f"the OpenAI-compatible API cannot listen on {openai_host}:"
                    f"{args.openai_port} (--openai-port): {exc}"
                ) from None
            log.info("OpenAI-compatible API on http://%s:%d/v1", openai_host, openai.port)
        if forge.metrics_port is not None:
            log.info("metrics on http://%s:%d/metrics", options.metrics_host, forge.metrics_port)
        try:
            ui = await inspector.start_inspector(args, forge, journal, auth)
        except OSError as exc:  # taken since check_ports looked
            if openai is not None:
                await openai.stop()
            await forge.stop(0)
            raise StartupRefused(f"the run inspector cannot listen (--ui-port): {exc}") from None
        try:
            await serve_until_signalled(forge, options.grace_s)
        finally:
            if ui is not None:
                await ui.stop()
            if openai is not None:
                await openai.stop()


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    logs.configure(args.log_level, args.log_format)
    if args.budget_mode == BudgetMode.MANUAL and args.budget_tokens <= 0:
        raise SystemExit("--budget-mode manual needs --budget-tokens N")
    try:
        if args.check:
            code = asyncio.run(check(BackendConfig.from_args(args)))
            if code:
                raise SystemExit(code)
            return
        event_loop_runner(args.event_loop)(serve(args))
    except (LlamaStartupError, StartupRefused) as exc:
        # One readable message, not a traceback: what happened, why, what to do.
        print(f"forge-server: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_LLAMA_STARTUP) from None


def _split_host_port(address: str) -> tuple[str, int] | None:
    """--listen's host:port ([v6]:port too); None for a Unix socket or a
    form this does not read (the bind itself then reports it)."""
    if address.startswith("unix:"):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "0.0.0.0", int(port)


def check_ports(args: argparse.Namespace, openai_host: str) -> None:
    """Every TCP port this server will listen on is free now: a taken one
    stops the start before llama-server loads a model (seconds to minutes),
    with one message naming the flag, instead of a traceback after it."""
    grpc_at = _split_host_port(args.listen) if args.listen else (args.host, args.port)
    wanted = [("--listen" if args.listen else "--port", grpc_at)]
    if args.openai_port > 0:
        wanted.append(("--openai-port", (openai_host, args.openai_port)))
    if args.metrics_port > 0:
        metrics_host = args.metrics_host or (
            "127.0.0.1" if args.listen.startswith("unix:") else args.host
        )
        wanted.append(("--metrics-port", (metrics_host, args.metrics_port)))
    if args.ui_port > 0:
        wanted.append(("--ui-port", (inspector.ui_host(args), args.ui_port)))
    taken = [
        f"port {port} on {host} ({flag})"
        for flag, at in wanted
        if at is not None
        for host, port in [at]
        if port_taken(host, port)
    ]
    if taken:
        raise StartupRefused(
            f"{' and '.join(taken)} {'is' if len(taken) == 1 else 'are'} already in use by "
            "another process (another forge-server?). Stop it, or choose another port "
            "(0 picks a free one)."
        )


def event_loop_runner(choice: str) -> Callable[[Coroutine[Any, Any, None]], None]:
    """asyncio.run, or uvloop's (choice "uvloop", or "auto" where installed)."""
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise SystemExit(
                    "forge-server: --event-loop uvloop: uvloop is not installed"
                ) from None
        else:
            return uvloop.run
    return asyncio.run


if __name__ == "__main__":
    main()
