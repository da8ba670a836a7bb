"""Why a managed llama-server failed to start, in words a user can act on.

A start-up failure reaches the user as one `LlamaStartupError`: what happened
(exit status or signal), the likely cause read from llama-server's own log
and, for SIGILL, from the binary's machine code against /proc/cpuinfo
(cpu_features.py), and what to do about it. `forge-server` prints its message
and exits non-zero instead of a traceback.
"""

from __future__ import annotations

import errno
import logging
import re
import signal
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge_core.cache import cache_dir
from forge_core.llama_host import cpu_features
from forge_core.llama_host.failures import LlamaStartupError, StartupFailure

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StartupContext:
    """What was asked of llama-server, for the advice in the message."""

    binary: Path
    model: Path
    host: str
    port: int
    ctx_size: int
    bundled_binary: bool = False


REMEDIES = (
    "  --llama-binary PATH   run a llama-server built for this machine instead of the bundled one\n"
    "                        (`make install LLAMA_SERVER=source` builds one from source, ~15 min)\n"
    "  --llama-url URL       use a llama-server that is already running (here or on another host)"
)

_MISSING_LIBRARY = re.compile(r"error while loading shared libraries: ([^:\s]+)")
_PORT = re.compile(r"couldn't bind HTTP server socket|address already in use", re.IGNORECASE)
_MEMORY = re.compile(
    r"insufficient memory|failed to allocate|out of memory|cannot allocate memory|"
    r"std::bad_alloc",
    re.IGNORECASE,
)
_MODEL = re.compile(r"failed to load model|error loading model|gguf_init_from", re.IGNORECASE)

# Debian/Ubuntu packages for the system libraries a llama.cpp build links.
_LIBRARY_PACKAGES = {
    "libgomp.so.1": "libgomp1",
    "libstdc++.so.6": "libstdc++6",
    "libvulkan.so.1": "libvulkan1",
    "libcurl.so.4": "libcurl4",
    "libssl.so.3": "libssl3",
}


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"was killed by signal {-returncode}"
        text = signal.strsignal(sig) or ""
        return f"was killed by {sig.name} ({text.lower()})" if text else f"was killed by {sig.name}"
    return f"exited with code {returncode}"


def _missing_cpu_features(binary: Path, host_flags: Iterable[str] | None) -> list[str] | None:
    """The CPU flags `binary`'s code uses that this CPU lacks; None when that
    cannot be read (not x86-64, not an ELF file, no /proc/cpuinfo)."""
    if host_flags is None:
        if not cpu_features.is_x86_64():
            return None
        host_flags = cpu_features.host_cpu_flags()
        if host_flags is None:
            return None
    try:
        result = cpu_features.scan_binary(binary, cache_dir() / "cpu-features.json")
    except (OSError, ValueError, ImportError) as exc:
        log.debug("could not scan %s for CPU features: %s", binary, exc)
        return None
    return result.missing_on(host_flags)


def port_taken(host: str, port: int) -> bool:
    """Whether another process listens on host:port now (a bind with
    SO_REUSEADDR, as llama-server's HTTP server does, fails)."""
    if port <= 0:
        return False
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return False
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _not_gguf(path: Path) -> bool:
    """`path` is a file that does not start with GGUF's magic bytes (a
    missing one is reported before llama-server starts)."""
    try:
        with path.open("rb") as f:
            return f.read(4) != b"GGUF"
    except OSError:
        return False


def diagnose(
    returncode: int,
    log_tail: Sequence[str],
    ctx: StartupContext,
    host_flags: Iterable[str] | None = None,
) -> LlamaStartupError:
    """Turn an exit during start-up into one readable error.

    llama-server's log is read before the exit status: it often crashes
    *after* reporting the real cause (a failed KV-cache allocation ends in
    SIGSEGV), so the status alone would mislead.
    """
    text = "\n".join(log_tail)
    what = f"llama-server {describe_exit(returncode)} during start-up"
    tail = "\nIts last log lines:\n" + "\n".join(f"  {line}" for line in log_tail[-8:])

    if match := _MISSING_LIBRARY.search(text):
        return _missing_library(what, match.group(1), ctx, log_tail)
    # llama-server logs from a worker thread that an early exit can cut off
    # before the bind error is written, so the port itself is asked too.
    if _PORT.search(text) or (returncode > 0 and port_taken(ctx.host, ctx.port)):
        return LlamaStartupError(
            StartupFailure.PORT_IN_USE,
            f"{what}: port {ctx.port} on {ctx.host} is already in use by another process.\n"
            "Stop that process or let Forge pick a free port (it does unless a port was "
            "configured); `--llama-url` uses a llama-server that is already running there.",
            log_tail,
        )
    if _MEMORY.search(text):
        return LlamaStartupError(
            StartupFailure.OUT_OF_MEMORY,
            f"{what}: there was not enough memory for the model and a KV cache of "
            f"--ctx-size {ctx.ctx_size} tokens.\n"
            "Lower --ctx-size (it is split across --slots), quantise the cache with "
            "--cache-type-k q8_0 --cache-type-v q8_0, or free memory on this host." + tail,
            log_tail,
        )
    # The same worker thread may take "failed to load model" with it: a
    # file without GGUF's magic bytes is read here too.
    if _MODEL.search(text) or (returncode > 0 and _not_gguf(ctx.model)):
        return LlamaStartupError(
            StartupFailure.MODEL_INVALID,
            f"{what}: it could not load the model {ctx.model}: the file is not a valid GGUF "
            "model, is truncated, or is an architecture this llama-server does not know.\n"
            "Check the file (a partial download is the usual cause) or pass another with "
            "--model PATH." + tail,
            log_tail,
        )
    if returncode == -signal.SIGILL:
        return _illegal_instruction(what, ctx, host_flags, log_tail)
    if returncode == -signal.SIGKILL:
        return LlamaStartupError(
            StartupFailure.OUT_OF_MEMORY,
            f"{what}. Nothing in Forge sends SIGKILL: the kernel's out-of-memory killer is "
            f"the usual sender. Lower --ctx-size (now {ctx.ctx_size}) or free memory." + tail,
            log_tail,
        )
    return LlamaStartupError(StartupFailure.OTHER, what + "." + tail, log_tail)


def _missing_library(
    what: str, lib: str, ctx: StartupContext, log_tail: Sequence[str]
) -> LlamaStartupError:
    package = _LIBRARY_PACKAGES.get(lib)
    install = (
        f"Install it: `apt-get install {package}` (Debian/Ubuntu) or your system's "
        "equivalent package."
        if package
        else "Install the package that provides it, or point LD_LIBRARY_PATH at it."
    )
    return LlamaStartupError(
        StartupFailure.MISSING_LIBRARY,
        f"{what}: the shared library {lib} was not found.\n{install}\n"
        f"Or, instead of {ctx.binary}:\n{REMEDIES}",
        log_tail,
    )


def _illegal_instruction(
    what: str, ctx: StartupContext, host_flags: Iterable[str] | None, log_tail: Sequence[str]
) -> LlamaStartupError:
    missing = _missing_cpu_features(ctx.binary, host_flags)
    if missing:
        cause = (
            f"Likely cause: {ctx.binary} was compiled for instructions this CPU does not "
            f"have. It uses {', '.join(missing)}, which /proc/cpuinfo does not list."
        )
    else:
        cause = (
            f"Likely cause: {ctx.binary} was compiled for a newer CPU than this one "
            "(its code could not be matched against /proc/cpuinfo here)."
        )
    pinned = (
        "\nForge pins a build that needs x86-64-v3 (AVX2) at most; reinstall it with "
        "`make install` if another build replaced it."
        if ctx.bundled_binary
        else ""
    )
    return LlamaStartupError(
        StartupFailure.ILLEGAL_INSTRUCTION,
        f"{what}.\n{cause}{pinned}\nRemedies:\n{REMEDIES}",
        log_tail,
    )


def check_before_start(ctx: StartupContext) -> None:
    """Failures that need no process to find: a missing binary or model."""
    if not ctx.binary.is_file():
        raise LlamaStartupError(
            StartupFailure.BINARY_MISSING,
            f"llama-server binary {ctx.binary} does not exist.\n"
            "Reinstall Forge's server (`make install`, or pip install 'forge-sidecar[server]'), "
            f"or:\n{REMEDIES}",
        )
    if not ctx.model.is_file():
        raise LlamaStartupError(
            StartupFailure.MODEL_MISSING,
            f"model file {ctx.model} does not exist. Pass an existing GGUF file with "
            "--model PATH, or leave --model out to use the bundled Gemma 3 270M.",
        )


def timeout_error(timeout_s: float, log_tail: Sequence[str]) -> LlamaStartupError:
    return LlamaStartupError(
        StartupFailure.TIMEOUT,
        f"llama-server did not answer /health within {timeout_s:.0f}s of starting. "
        "A large model on a busy host can need longer; its last log lines:\n"
        + "\n".join(f"  {line}" for line in log_tail[-8:]),
        log_tail,
    )
