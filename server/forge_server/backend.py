"""The model backend forge-server serves, opened from a BackendConfig.

The config is forge-server's backend flags as plain values (cli.py turns the
parsed flags into one), so anything that wants a backend the way forge-server
opens it (forge-eval's in-process server, the tests) builds a config instead
of borrowing the command line's parser.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from forge_core.backends.base import Backend
from forge_core.backends.fallback import (
    DEFAULT_COOLDOWN_S,
    DEFAULT_FAILURE_THRESHOLD,
    FallbackBackend,
)
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.backends.scripted import ScriptedBackend
from forge_core.llama_host.devices import DeviceReport, external, warn_if_gpu_unused
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer, start_managed
from forge_core.llama_host.slot_count import AUTO_SLOTS
from forge_core.modes import BudgetMode, ToolCallMode

log = logging.getLogger(__name__)

BACKENDS = ("llama-server", "scripted", "openai", "ollama", "anthropic")
# The KV cache type llama-server uses when --cache-type-k is not given.
DEFAULT_KV_CACHE_TYPE = "f16"
# What a chain member may set for itself in brackets (`openai[url=... model=...]`),
# and the BackendConfig field each one sets; `url` is --llama-url for
# llama-server and --base-url for the others.
MEMBER_KEYS = {"url": "base_url", "model": "model_name", "key-env": "api_key_env"}


@dataclass(frozen=True)
class ChainMember:
    kind: str
    # BackendConfig field -> value, from the member's brackets.
    overrides: tuple[tuple[str, str], ...] = ()


_MEMBER = re.compile(r"^\s*([a-z-]+)\s*(?:\[([^\]]*)\])?\s*$")


def parse_chain(spec: str) -> list[ChainMember]:
    """`--backend`'s value: one kind, or a comma-separated fallback chain whose
    members may carry their own url/model/key-env in brackets, e.g.
    `llama-server,openai[url=http://gpu:8000/v1 model=qwen3-8b],anthropic[model=claude-x]`.
    Raises ValueError saying what is wrong."""
    members: list[ChainMember] = []
    # Commas inside brackets (a URL's query) do not separate members.
    for part in re.split(r",(?![^\[]*\])", spec):
        m = _MEMBER.match(part)
        if m is None or m.group(1) not in BACKENDS:
            raise ValueError(
                f"{part.strip()!r} is not one of {', '.join(BACKENDS)} [key=value ...]"
            )
        overrides: list[tuple[str, str]] = []
        for item in (m.group(2) or "").split():
            key, sep, value = item.partition("=")
            if not sep or key not in MEMBER_KEYS:
                raise ValueError(f"{item!r}: a member takes {', '.join(MEMBER_KEYS)} as key=value")
            overrides.append((MEMBER_KEYS[key], value))
        members.append(ChainMember(m.group(1), tuple(overrides)))
    return members


# Each open llama-server backend's device, read when asked: a restarted
# managed server may say something else. Weak, so a closed backend goes.
_DEVICES: weakref.WeakKeyDictionary[LlamaServerBackend, Callable[[], DeviceReport]] = (
    weakref.WeakKeyDictionary()
)


def llama_device(backend: Backend) -> DeviceReport | None:
    """The device a llama-server backend (or a chain's first llama-server
    member) runs on; None for other backends."""
    if isinstance(backend, LlamaServerBackend):
        read = _DEVICES.get(backend)
        return read() if read is not None else None
    if isinstance(backend, FallbackBackend):
        for member in backend.members:
            report = llama_device(member.backend)
            if report is not None:
                return report
    return None


@dataclass(frozen=True)
class BackendConfig:
    """Which backend to open and how; the defaults are forge-server's."""

    # One of BACKENDS, or a fallback chain of them (parse_chain).
    backend: str = "llama-server"
    # scripted: a JSON script file, or a directory of conformance cases.
    script: Path | None = None
    # openai / ollama / anthropic: server URL ("" = each one's default), the
    # remote model id, the variable holding the API key, and whether every
    # turn must call a tool ("required") or the model may choose ("auto").
    base_url: str = ""
    model_name: str = ""
    api_key_env: str = ""
    tool_choice: str = "required"
    # llama-server: an external server's URL, or what to start a managed one
    # with (binary and model None: the bundled ones).
    llama_url: str = ""
    llama_binary: Path | None = None
    model: Path | None = None
    ctx_size: int = 8192
    # AUTO_SLOTS (0): by the host (forge_core/llama_host/slot_count.py).
    slots: int = AUTO_SLOTS
    threads: int = 0
    cache_type_k: str = ""
    cache_type_v: str = ""
    # "auto" | "on" | "off": prefix snapshots (auto: on for a managed server).
    prefix_snapshots: str = "auto"
    # "on" | "off": constrained calls in pieces (backends/llama/pieces.py).
    call_pieces: str = "on"
    # "walk" | "likelihood": how a call in pieces chooses an enum's member
    # (backends/llama/listed_values.py).
    member_choice: str = "walk"
    # A ToolCallMode (llama-server).
    tool_call_mode: str = ToolCallMode.AUTO
    # A BudgetMode, and the token count for MANUAL (openai / anthropic /
    # ollama: the budget whenever it is given).
    budget_mode: str = BudgetMode.BACKEND
    budget_tokens: int = 0
    # A chain: retriable failures in a row after which a backend is skipped,
    # and for how many seconds.
    fallback_failures: int = DEFAULT_FAILURE_THRESHOLD
    fallback_cooldown_s: float = DEFAULT_COOLDOWN_S

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BackendConfig:
        """The backend flags of a parsed forge-server command line."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


@contextlib.asynccontextmanager
async def open_backend(config: BackendConfig) -> AsyncIterator[Backend]:
    """The configured backend, started if it is a managed llama-server, and
    closed (and stopped) when the context ends. A chain opens every member,
    in order, and serves them as one FallbackBackend."""
    try:
        chain = parse_chain(config.backend)
    except ValueError as exc:
        raise SystemExit(f"--backend: {exc}") from None
    if len(chain) == 1 and not chain[0].overrides:
        async with _open_one(replace(config, backend=chain[0].kind)) as backend:
            yield backend
        return
    async with contextlib.AsyncExitStack() as stack:
        members = [
            await stack.enter_async_context(_open_one(_member_config(config, m), in_chain=True))
            for m in chain
        ]
        if len(members) == 1:
            yield members[0]
            return
        yield FallbackBackend(
            members,
            failure_threshold=config.fallback_failures,
            cooldown_s=config.fallback_cooldown_s,
        )


def _member_config(config: BackendConfig, member: ChainMember) -> BackendConfig:
    values: dict[str, Any] = dict(member.overrides)
    if member.kind == "llama-server" and "base_url" in values:
        values["llama_url"] = values.pop("base_url")
    return replace(config, backend=member.kind, **values)


@contextlib.asynccontextmanager
async def _open_one(config: BackendConfig, *, in_chain: bool = False) -> AsyncIterator[Backend]:
    if config.backend == "scripted":
        if config.script is None:
            raise SystemExit("--backend scripted needs --script FILE")
        yield ScriptedBackend.from_path(config.script)
        return
    if config.backend in ("openai", "ollama", "anthropic"):
        remote = await _open_native_backend(config)
        try:
            yield remote
        finally:
            await remote.aclose()
        return
    managed: ManagedLlamaServer | None = None
    url = config.llama_url
    try:
        if not url:
            llama = LlamaServerConfig(
                model_path=config.model or bundled_model(),
                binary=config.llama_binary or bundled_binary(),
                ctx_size=config.ctx_size,
                slots=config.slots,
                threads=config.threads,
                cache_type_k=config.cache_type_k,
                cache_type_v=config.cache_type_v,
                prefix_snapshots=config.prefix_snapshots != "off",
            )
            managed = await start_managed(llama, config.budget_mode)
            url = managed.url
        backend = await LlamaServerBackend.connect(
            url,
            budget_mode=config.budget_mode,
            manual_budget_tokens=config.budget_tokens,
            backend_mode="managed" if managed else "external",
            tool_call_mode=config.tool_call_mode,
            # Only a server Forge started is known to run with these flags.
            kv_cache_type=(config.cache_type_k or DEFAULT_KV_CACHE_TYPE) if managed else "",
        )
        backend.call_pieces = config.call_pieces != "off"
        backend.member_likelihood = config.member_choice == "likelihood"
        if managed is not None:
            managed.attach(backend, wait_for_restarts=not in_chain)
            _DEVICES[backend] = managed.device
            report = managed.device()
            log.info("llama-server device: %s (%s)", report.device, report.reason)
            log.info("llama-server slots: %d (%s)", managed.config.slots, managed.slots_reason)
            warn_if_gpu_unused(report)
        else:
            _DEVICES[backend] = external
            if config.prefix_snapshots == "on":
                backend.enable_prefix_snapshots()
        try:
            yield backend
        finally:
            await backend.aclose()
    finally:
        if managed is not None:
            await managed.stop()


async def _open_native_backend(config: BackendConfig) -> Backend:
    """The backends that use the model's native tool calling."""
    budget = max(config.budget_tokens, 0)
    if config.backend == "openai":
        from forge_core.backends.openai_compat import OpenAICompatBackend

        return await OpenAICompatBackend.connect(
            config.base_url or "http://127.0.0.1:8000/v1",
            model=config.model_name,
            api_key=os.environ.get(config.api_key_env or "OPENAI_API_KEY", ""),
            budget_tokens=budget,
            tool_choice_required=config.tool_choice == "required",
        )
    if not config.model_name:
        raise SystemExit(f"--backend {config.backend} needs --model-name")
    if config.backend == "ollama":
        from forge_core.backends.ollama import OllamaBackend

        return await OllamaBackend.connect(
            config.base_url or "http://127.0.0.1:11434",
            model=config.model_name,
            budget_mode=BudgetMode.MANUAL if budget else config.budget_mode,
            manual_budget_tokens=budget,
        )
    from forge_core.backends.anthropic_backend import DEFAULT_CONTEXT_TOKENS, AnthropicBackend

    key_env = config.api_key_env or "ANTHROPIC_API_KEY"
    api_key = os.environ.get(key_env, "")
    if not api_key:
        raise SystemExit(f"--backend anthropic needs an API key in ${key_env} (--api-key-env)")
    return AnthropicBackend(
        model=config.model_name,
        api_key=api_key,
        base_url=config.base_url,
        context_budget_tokens=budget or DEFAULT_CONTEXT_TOKENS,
        budget_mode=BudgetMode.MANUAL if budget else BudgetMode.DEFAULT,
        tool_choice_any=config.tool_choice == "required",
    )
