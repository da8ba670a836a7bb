"""`forge-server`: the sidecar's command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from forge_core.llama_host.failures import LlamaStartupError
from forge_core.llama_host.startup import port_taken
from forge_core.modes import BudgetMode, ToolCallMode
from forge_server import __version__, logs
from forge_server.app import ServerOptions, TlsConfig, serve_until_signalled, start_server
from forge_server.auth import Authenticator, TokenFile, TokenFileError, UrlVerifier
from forge_server.backend import BACKENDS, MEMBER_KEYS, BackendConfig, open_backend, parse_chain
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
    env = os.environ.get
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
    net = p.add_argument_group("listening")
    net.add_argument("--host", default=env("FORGE_HOST", "127.0.0.1"), help="address to bind")
    net.add_argument(
        "--port", type=int, default=int(env("FORGE_PORT", "50051")), help="port (0 picks one)"
    )
    net.add_argument(
        "--listen",
        default=env("FORGE_LISTEN", ""),
        help="host:port or unix:///path/to.sock (a sidecar's socket); overrides --host/--port",
    )
    net.add_argument(
        "--tls-cert", type=Path, default=env("FORGE_TLS_CERT", "") or None, help="PEM chain"
    )
    net.add_argument(
        "--tls-key", type=Path, default=env("FORGE_TLS_KEY", "") or None, help="PEM private key"
    )
    net.add_argument(
        "--tls-client-ca",
        type=Path,
        default=env("FORGE_TLS_CLIENT_CA", "") or None,
        help="PEM CA: clients must present a certificate it signed (mutual TLS)",
    )
    net.add_argument(
        "--insecure",
        action="store_true",
        default=env("FORGE_INSECURE", "") not in ("", "0", "false"),
        help="allow listening beyond loopback without TLS and without authentication",
    )
    net.add_argument("--max-message-bytes", type=int, default=16 * 1024 * 1024)
    net.add_argument(
        "--max-active-runs",
        type=int,
        default=1024,
        help="open Run streams at most, streams still waiting to send start included",
    )
    net.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        help="seconds running runs get after SIGTERM; the rest then end with SHUTTING_DOWN",
    )
    net.add_argument(
        "--journal",
        default=env("FORGE_JOURNAL", ""),
        help="where runs are journaled so they survive a dropped client and a restart: "
        "sqlite:///PATH (default: journal.db in the cache dir), postgresql://USER@HOST/DB "
        "(shared by replicas), or none (a dropped stream cancels its run)",
    )
    net.add_argument(
        "--reattach-grace",
        type=float,
        default=float(env("FORGE_REATTACH_GRACE", "60")),
        metavar="SECONDS",
        help="with a journal: how long a run whose stream broke waits for its client to reattach",
    )
    net.add_argument(
        "--journal-retention-hours",
        type=float,
        default=float(env("FORGE_JOURNAL_RETENTION_HOURS", "168")),
        help="ended runs older than this are pruned from the journal",
    )
    net.add_argument(
        "--journal-max-mb",
        type=float,
        default=float(env("FORGE_JOURNAL_MAX_MB", "1024")),
        help="then the oldest ended runs go until the journal's events fit (0: no limit)",
    )
    net.add_argument(
        "--replica-id",
        default=env("FORGE_REPLICA_ID", ""),
        help="this server's name in the journal's run leases (default: HOST:PID; give a "
        "stable one, e.g. the pod name, so a restarted server takes its runs back at once)",
    )
    net.add_argument(
        "--start-timeout",
        type=float,
        default=10.0,
        help="seconds a new stream may take to send its start message",
    )
    auth = p.add_argument_group(
        "authentication (health stays open; everything else needs a bearer token)"
    )
    auth.add_argument(
        "--auth-token-file",
        type=Path,
        default=env("FORGE_AUTH_TOKEN_FILE", "") or None,
        help="file of accepted tokens, one per line: TOKEN [name=NAME] [max_runs=N]; "
        "re-read when it changes",
    )
    auth.add_argument(
        "--auth-url",
        default=env("FORGE_AUTH_URL", ""),
        help="external verifier: GET with the caller's authorization header; "
        "2xx admits, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED",
    )
    auth.add_argument(
        "--auth-cache-ttl", type=float, default=60.0, help="seconds a verifier answer is reused"
    )
    auth.add_argument(
        "--max-runs-per-token",
        type=int,
        default=0,
        help="concurrent runs per caller unless its token says otherwise (0: no limit)",
    )

    # The backend flags are BackendConfig's fields, with its defaults.
    defaults = BackendConfig()
    be = p.add_argument_group("backend")
    be.add_argument(
        "--backend",
        type=_backend_spec,
        default=defaults.backend,
        metavar="KIND[,KIND...]",
        help=f"one of {', '.join(BACKENDS)}. openai: any OpenAI-compatible server (vLLM, "
        "LM Studio); ollama: /api/chat; anthropic: the Messages API. These three use the "
        "model's native tool calling. Several, comma-separated, form a fallback chain tried "
        "in order; a member may set its own "
        f"{'/'.join(MEMBER_KEYS)} in brackets: openai[url=http://gpu:8000/v1 model=qwen3-8b]",
    )
    be.add_argument(
        "--fallback-failures",
        type=int,
        metavar="N",
        default=defaults.fallback_failures,
        help="chain: retriable failures in a row after which a backend cools down",
    )
    be.add_argument(
        "--fallback-cooldown",
        dest="fallback_cooldown_s",
        type=float,
        metavar="SECONDS",
        default=defaults.fallback_cooldown_s,
        help="chain: seconds a backend is skipped after --fallback-failures failures",
    )
    be.add_argument(
        "--base-url",
        default=env("FORGE_BASE_URL", ""),
        help="openai/ollama (anthropic: optional): server URL "
        "(default http://127.0.0.1:8000/v1 for openai, http://127.0.0.1:11434 for ollama)",
    )
    be.add_argument(
        "--model-name",
        default=env("FORGE_MODEL_NAME", ""),
        help="openai/ollama/anthropic: the remote model id (openai: default the first served)",
    )
    be.add_argument(
        "--api-key-env",
        default="",
        help="openai/anthropic: environment variable holding the API key "
        "(default OPENAI_API_KEY / ANTHROPIC_API_KEY; openai sends none when unset)",
    )
    be.add_argument(
        "--tool-choice",
        choices=["required", "auto"],
        default=defaults.tool_choice,
        help="openai/anthropic: force a tool call every turn (required / any), or let the "
        "model choose (for servers that reject tool_choice=required)",
    )
    be.add_argument(
        "--llama-url",
        default=env("FORGE_LLAMA_URL", ""),
        help="use an external llama-server at this URL instead of starting one",
    )
    be.add_argument("--llama-binary", type=Path, help="llama-server binary (default: bundled)")
    be.add_argument("--model", type=Path, help="GGUF model file (default: bundled Gemma 3 270M)")
    be.add_argument(
        "--ctx-size", type=int, default=defaults.ctx_size, help="managed: total KV context"
    )
    be.add_argument(
        "--slots", type=int, default=defaults.slots, help="managed: parallel slots (--parallel)"
    )
    be.add_argument(
        "--threads",
        type=int,
        default=defaults.threads,
        help="managed: CPU threads (0 = auto: the CPUs available to this process, after any "
        "cgroup quota, minus one; see README)",
    )
    be.add_argument("--cache-type-k", default="", help="managed: KV cache type for K (e.g. q8_0)")
    be.add_argument("--cache-type-v", default="", help="managed: KV cache type for V")
    be.add_argument(
        "--prefix-snapshots",
        choices=["auto", "on", "off"],
        default=defaults.prefix_snapshots,
        help="save each workflow's first prompt cache to a slot file and restore it when the "
        "workflow runs again (auto: on for a managed server, which gets a --slot-save-path; "
        "on: also for an external one started with --slot-save-path)",
    )
    be.add_argument(
        "--budget-mode",
        # DEFAULT only reports that a native backend was told nothing.
        choices=[m.value for m in BudgetMode if m is not BudgetMode.DEFAULT],
        default=defaults.budget_mode,
        help="backend: llama-server's /props n_ctx; manual: --budget-tokens; forge-full: the "
        "model's full trained context (managed server started with it); forge-fast: half of "
        "that (managed server restarted with half)",
    )
    be.add_argument(
        "--budget-tokens",
        type=int,
        default=defaults.budget_tokens,
        help="budget for --budget-mode manual; openai/anthropic: the budget when given "
        "(default: vLLM's max_model_len, else 8192 / 200000); ollama: caps /api/show's length",
    )
    be.add_argument(
        "--tool-call-mode",
        choices=[m.value for m in ToolCallMode if m is not ToolCallMode.SCRIPTED],
        default=defaults.tool_call_mode,
        help="llama-server: native (the template's tool calling), constrained (a grammar "
        "built from the workflow's tools), prompt (tools in the prompt, output parsed); auto "
        "picks native when /props says the template supports tool calls, else constrained",
    )
    be.add_argument(
        "--call-pieces",
        choices=["on", "off"],
        default=defaults.call_pieces,
        help="llama-server, constrained: make each call (and parallel batch) in pieces, Forge "
        "writing the keys and punctuation and the model each choice (fast: the grammar never "
        "checks the whole vocabulary for what Forge writes); off: one grammar for the whole call",
    )
    be.add_argument(
        "--script",
        type=Path,
        help="scripted backend: JSON script file, or a directory of conformance cases",
    )
    p.add_argument("--log-level", default=env("FORGE_LOG_LEVEL", "INFO"))
    p.add_argument(
        "--event-loop",
        choices=["auto", "uvloop", "asyncio"],
        default=env("FORGE_EVENT_LOOP", "auto"),
        help="the server's event loop; auto: uvloop where it is installed (a tool round "
        "trip costs the server less CPU; bench/RESULTS.md), else asyncio's",
    )
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        default=env("FORGE_LOG_FORMAT", "text"),
        help="json: one object per line with run_id and labels",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        default=int(env("FORGE_METRICS_PORT", "-1")),
        help="serve Prometheus metrics on http://HOST:PORT/metrics (default: off)",
    )
    p.add_argument(
        "--metrics-host",
        default=env("FORGE_METRICS_HOST", ""),
        help="address for the metrics endpoint (default: --host, or 127.0.0.1 with a socket)",
    )
    p.add_argument(
        "--openai-port",
        type=int,
        default=int(env("FORGE_OPENAI_PORT", "-1")),
        help="serve the OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models) "
        "on http://HOST:PORT (0: any free port; default: off)",
    )
    p.add_argument(
        "--openai-host",
        default=env("FORGE_OPENAI_HOST", ""),
        help="address for the OpenAI-compatible API (default: --host, or 127.0.0.1 with a socket)",
    )
    p.add_argument(
        "--openai-workflows",
        type=Path,
        default=env("FORGE_OPENAI_WORKFLOWS", "") or None,
        help="JSON file: a list of {workflow, options} (forge.v1 JSON) that requests "
        "name with X-Forge-Workflow or metadata.forge_workflow",
    )
    p.add_argument(
        "--tool-output-secrets",
        choices=["allow", "redact", "block"],
        default=env("FORGE_TOOL_OUTPUT_SECRETS", "allow"),
        help="tool outputs holding credentials, for workflows that do not say: "
        "pass them on, redact each secret, or withhold the output",
    )
    p.add_argument(
        "--log-payloads",
        action="store_true",
        help="log failure and rejection messages, which quote tool errors and argument "
        "values (off by default: they can hold credentials)",
    )
    inspector.add_arguments(p)
    return p


def _backend_spec(value: str) -> str:
    try:
        parse_chain(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


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
