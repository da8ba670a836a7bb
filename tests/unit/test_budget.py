"""Context budget resolution per mode, and GPU detection without a GPU."""

from __future__ import annotations

import pytest

from forge_core.backends.llama.props import resolve_budget
from forge_core.backends.ollama import ollama_budget
from forge_core.llama_host.hardware import GIB, Gpu, detect_gpus, vram_tier_budget


def test_llama_budget_modes() -> None:
    assert resolve_budget(4096, "backend", 0, "managed") == (
        4096,
        "n_ctx 4096 per slot from /props",
    )
    assert resolve_budget(4096, "manual", 1000, "external") == (1000, "manual")
    budget, source = resolve_budget(4096, "manual", 9000, "external")
    assert budget == 4096 and "capped" in source
    # A managed forge-fast server was already restarted with half its maximum.
    assert resolve_budget(16384, "forge-fast", 0, "managed")[0] == 16384
    budget, source = resolve_budget(16384, "forge-fast", 0, "external")
    assert budget == 8192 and "external" in source
    assert resolve_budget(32768, "forge-full", 0, "managed")[0] == 32768
    with pytest.raises(ValueError, match="positive"):
        resolve_budget(4096, "manual", 0, "external")
    with pytest.raises(ValueError, match="unknown budget mode"):
        resolve_budget(4096, "huge", 0, "external")


@pytest.mark.parametrize(
    ("vram_gib", "budget"), [(8, 4096), (23.9, 4096), (24, 32768), (47, 32768), (80, 262144)]
)
def test_vram_tiers(vram_gib: float, budget: int) -> None:
    assert vram_tier_budget(int(vram_gib * GIB)) == budget


def test_ollama_forge_modes_use_the_vram_tier() -> None:
    gpu = ([Gpu("RTX 4090", 24 * GIB, 20 * GIB)], "")
    assert ollama_budget(131072, "forge-full", 0, gpu)[0] == 32768
    assert ollama_budget(131072, "forge-fast", 0, gpu)[0] == 16384
    # Never above what the model supports.
    assert ollama_budget(8192, "forge-full", 0, gpu)[0] == 8192
    assert ollama_budget(131072, "backend", 0, gpu)[0] == 131072


def test_ollama_forge_modes_without_a_gpu_fall_back_and_say_why() -> None:
    budget, source = ollama_budget(8192, "forge-full", 0, ([], "no NVIDIA GPU: NVML unavailable"))
    assert budget == 8192
    assert "no NVIDIA GPU" in source


def test_gpu_detection_reports_rather_than_raises_on_this_machine() -> None:
    # Mocks nothing: this machine has no NVIDIA driver, which must be a status.
    gpus, status = detect_gpus()
    assert gpus or status
    assert all(g.vram_total_bytes > 0 for g in gpus)
