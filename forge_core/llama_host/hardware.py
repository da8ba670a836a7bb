"""What GPUs the host has, read through NVML (nvidia-ml-py).

No GPU, no driver or no NVML library is a normal situation (CPU hosts, CI):
it is reported as a status string, never raised.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

GIB = 1024**3

# Ollama context budgets by total VRAM, as the reference library tiers them.
VRAM_TIERS = ((24 * GIB, 4096), (48 * GIB, 32768))
TOP_TIER = 262144


@dataclass(frozen=True)
class Gpu:
    name: str
    vram_total_bytes: int
    vram_free_bytes: int


def detect_gpus() -> tuple[list[Gpu], str]:
    """(GPUs found, why none were found — empty when some were)."""
    try:
        import pynvml
    except ImportError:
        return [], "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return [], f"no NVIDIA GPU: NVML unavailable ({exc})"
    try:
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            name = pynvml.nvmlDeviceGetName(handle)
            gpus.append(
                Gpu(
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    vram_total_bytes=int(memory.total),
                    vram_free_bytes=int(memory.free),
                )
            )
        return gpus, "" if gpus else "NVML found no GPU"
    except pynvml.NVMLError as exc:
        return [], f"NVML error: {exc}"
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def vram_tier_budget(total_vram_bytes: int) -> int:
    """Context tokens for a model server on a GPU with this much VRAM."""
    for limit, budget in VRAM_TIERS:
        if total_vram_bytes < limit:
            return budget
    return TOP_TIER
