"""`forge-server --backend openai|ollama|anthropic`: flags reach the backends.

No remote server is contacted: the openai case passes the model and budget so
nothing needs discovering, anthropic makes no request at start-up, and ollama
is pointed at a closed loopback port to check that start-up fails loudly.
"""

from __future__ import annotations

import socket

import pytest

from forge_core.backends.anthropic_backend import AnthropicBackend
from forge_core.backends.openai_compat import OpenAICompatBackend
from forge_core.errors import BackendError
from forge_server.backend import open_backend
from forge_server.cli import backend_config


async def test_openai_backend_from_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_KEY", "sk-local")
    config = backend_config(
        [
            "--backend=openai",
            "--base-url=http://gpu-box:8000",
            "--model-name=Qwen/Qwen3-8B",
            "--api-key-env=VLLM_KEY",
            "--budget-tokens=16384",
            "--tool-choice=auto",
        ]
    )
    async with open_backend(config) as backend:
        assert isinstance(backend, OpenAICompatBackend)
        info = backend.info()
        assert (info.name, info.model, info.url) == (
            "openai",
            "Qwen/Qwen3-8B",
            "http://gpu-box:8000/v1",
        )
        assert (info.context_budget_tokens, info.budget_mode, info.tool_call_mode) == (
            16384,
            "manual",
            "native",
        )
        assert backend.tool_choice_required is False
        assert backend._http.headers["authorization"] == "Bearer sk-local"


async def test_anthropic_backend_needs_a_model_and_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(SystemExit, match="--model-name"):
        async with open_backend(backend_config(["--backend=anthropic"])):
            pass
    config = backend_config(["--backend=anthropic", "--model-name=claude-sonnet-5-5"])
    with pytest.raises(SystemExit, match=r"\$ANTHROPIC_API_KEY"):
        async with open_backend(config):
            pass
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    async with open_backend(config) as backend:
        assert isinstance(backend, AnthropicBackend)
        info = backend.info()
        assert (info.model, info.context_budget_tokens, info.budget_mode) == (
            "claude-sonnet-5-5",
            200_000,
            "default",
        )
        assert backend.tool_choice_any is True
    config = backend_config(
        ["--backend=anthropic", "--model-name=claude-haiku-5-5", "--budget-tokens=50000"]
    )
    async with open_backend(config) as backend:
        assert (backend.info().context_budget_tokens, backend.info().budget_mode) == (
            50000,
            "manual",
        )


async def test_ollama_backend_fails_loudly_when_the_server_is_not_there() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SystemExit, match="--model-name"):
        async with open_backend(backend_config(["--backend=ollama"])):
            pass
    config = backend_config(
        ["--backend=ollama", f"--base-url=http://127.0.0.1:{port}", "--model-name=qwen3:8b"]
    )
    with pytest.raises(BackendError, match="/api/show"):
        async with open_backend(config):
            pass
