"""forge-server's flags, one function per argument group; `cli.build_parser`
composes them in the order --help lists them (argparse keeps the order
arguments are added in, within a group and across the top-level ones).

Defaults come from FORGE_* environment variables where a flag has one, and
the backend flags from BackendConfig's fields.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from forge_core.modes import BudgetMode, ToolCallMode
from forge_server.backend import BACKENDS, MEMBER_KEYS, BackendConfig, parse_chain


def add_listening(p: argparse.ArgumentParser) -> None:
    """The "listening" group: where the server listens, its run limits and its journal."""
    net = p.add_argument_group("listening")
    add_addresses(net)
    add_run_limits(net)
    add_journal(net)
    net.add_argument(
        "--start-timeout",
        type=float,
        default=10.0,
        help="seconds a new stream may take to send its start message",
    )


def add_addresses(net: argparse._ArgumentGroup) -> None:
    """Address, socket and TLS, and the --insecure escape from both."""
    env = os.environ.get
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


def add_run_limits(net: argparse._ArgumentGroup) -> None:
    """Message size, concurrent streams and the shutdown grace."""
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


def add_journal(net: argparse._ArgumentGroup) -> None:
    """Where runs are journaled, how long a broken stream waits, retention and leases."""
    env = os.environ.get
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


def add_authentication(p: argparse.ArgumentParser) -> None:
    """Bearer tokens: a token file or an external verifier, and per-caller limits."""
    env = os.environ.get
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


def add_backend(p: argparse.ArgumentParser) -> None:
    """The "backend" group: which model server, how it is run and how Forge drives it."""
    # The backend flags are BackendConfig's fields, with its defaults.
    defaults = BackendConfig()
    be = p.add_argument_group("backend")
    add_backend_choice(be, defaults)
    add_managed_server(be, defaults)
    add_generation(be, defaults)


def add_backend_choice(be: argparse._ArgumentGroup, defaults: BackendConfig) -> None:
    """Which backend (or fallback chain) and where the remote ones are."""
    env = os.environ.get
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


def add_managed_server(be: argparse._ArgumentGroup, defaults: BackendConfig) -> None:
    """The managed llama-server: binary, model, context, slots, threads, KV cache."""
    be.add_argument("--llama-binary", type=Path, help="llama-server binary (default: bundled)")
    be.add_argument("--model", type=Path, help="GGUF model file (default: bundled Gemma 3 270M)")
    be.add_argument(
        "--ctx-size", type=int, default=defaults.ctx_size, help="managed: total KV context"
    )
    be.add_argument(
        "--slots",
        type=int,
        default=defaults.slots,
        help="managed: parallel slots (--parallel; 0 = auto: 1 on a CPU-only host with 4 CPUs "
        "or fewer, where every slot shares the same threads and one slot served the most "
        "workflows/s; else 2)",
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


def add_generation(be: argparse._ArgumentGroup, defaults: BackendConfig) -> None:
    """The context budget, how tool calls are produced, and the scripted backend."""
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
        "--member-choice",
        choices=["walk", "likelihood"],
        default=defaults.member_choice,
        help="llama-server, call pieces: how an enum's or boolean's member is chosen. walk: the "
        "model's likeliest first token where the members part; likelihood: each whole member's "
        "log-likelihood less its log-likelihood after the call alone (two scoring requests per "
        "member; no better than walk with the bundled 270M model, bench/RESULTS.md §31)",
    )
    be.add_argument(
        "--script",
        type=Path,
        help="scripted backend: JSON script file, or a directory of conformance cases",
    )


def add_observability(p: argparse.ArgumentParser) -> None:
    """Logging, the event loop and the Prometheus endpoint."""
    env = os.environ.get
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


def add_openai_endpoint(p: argparse.ArgumentParser) -> None:
    """The OpenAI-compatible HTTP API: its address and the workflows it serves."""
    env = os.environ.get
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


def add_payload_handling(p: argparse.ArgumentParser) -> None:
    """What happens to credentials in tool outputs and to payloads in the logs."""
    env = os.environ.get
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


def _backend_spec(value: str) -> str:
    try:
        parse_chain(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value
