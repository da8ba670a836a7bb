"""Which device llama-server runs on: the listing, the flags, the log, and
the warning for a GPU the model does not use (issue 19, item 3).

CI has no GPU, so the GPU side here is fixed text and fakes; the real
CPU-only listing of the bundled binary is parsed in
tests/integration/test_llama_device_warmup.py.
"""

from __future__ import annotations

import logging

import pytest

from forge_core.llama_host.devices import (
    CPU,
    UNKNOWN,
    LlamaDevice,
    cpu_flag,
    from_log,
    mismatch_warning,
    parse_device_list,
    resolve,
    warn_if_gpu_unused,
)
from forge_core.llama_host.hardware import GIB, Gpu

# A sample, not captured here (no GPU in CI): the format is common/arg.cpp's
# `  %s: %s (%zu MiB, %zu MiB free)`, as the Vulkan build prints it on an H100.
GPU_LISTING = """\
ggml_vulkan: Found 2 Vulkan devices:
ggml_vulkan: 0 = NVIDIA H100 80GB HBM3 (NVIDIA) | uma: 0 | fp16: 1 | bf16: 1 | warp size: 32
Available devices:
  Vulkan0: NVIDIA H100 80GB HBM3 (81559 MiB, 80000 MiB free)
  Vulkan1: NVIDIA L4 (22720 MiB, 22000 MiB free)
"""
H100 = LlamaDevice("Vulkan0", "NVIDIA H100 80GB HBM3", 81559, 80000)
L4 = LlamaDevice("Vulkan1", "NVIDIA L4", 22720, 22000)
ARGV = ["llama-server", "--model", "m.gguf", "--port", "8080"]
NVML_H100 = [Gpu("NVIDIA H100 80GB HBM3", 80 * GIB, 78 * GIB)]


def test_gpu_listing_sample_parses_into_devices() -> None:
    assert parse_device_list(GPU_LISTING) == [H100, L4]
    report = resolve([H100, L4], ARGV, {})
    assert report.device == "Vulkan0,Vulkan1"
    assert report.devices == (H100, L4)


def test_no_device_listed_is_cpu_and_no_answer_is_unknown() -> None:
    assert parse_device_list("Available devices:\n") == []
    assert resolve([], ARGV, {}).device == CPU
    assert resolve(None, ARGV, {}).device == UNKNOWN


@pytest.mark.parametrize(
    "extra, env",
    [
        (["-ngl", "0"], {}),
        (["--n-gpu-layers", "0"], {}),
        (["--gpu-layers=0"], {}),
        (["--device", "none"], {}),
        (["-dev", "none"], {}),
        ([], {"LLAMA_ARG_N_GPU_LAYERS": "0"}),
        ([], {"LLAMA_ARG_DEVICE": "none"}),
        # The later flag wins, as in llama-server's own parser.
        (["-ngl", "99", "-ngl", "0"], {}),
    ],
)
def test_offload_flags_keep_the_model_on_the_cpu_though_a_gpu_is_listed(
    extra: list[str], env: dict[str, str]
) -> None:
    report = resolve([H100], ARGV + extra, env)
    assert report.device == CPU
    assert report.cpu_by_flag
    assert report.devices == (H100,)


def test_flags_that_do_offload_are_not_read_as_cpu() -> None:
    assert cpu_flag([*ARGV, "-ngl", "99"], {}) == ""
    assert cpu_flag([*ARGV, "-ngl", "0", "-ngl", "20"], {}) == ""
    assert resolve([H100, L4], [*ARGV, "--device", "Vulkan1"], {}).device == "Vulkan1"


def test_the_start_up_log_wins_over_the_listing() -> None:
    on_cpu = ["load_tensors: offloaded 0/19 layers to GPU"]
    on_gpu = [
        "llama_model_load_from_file_impl: using device Vulkan0 (NVIDIA H100 80GB HBM3) "
        "(0000:01:00.0) - 80000 MiB free",
        "load_tensors: offloaded 19/19 layers to GPU",
    ]
    assert from_log(on_cpu) == CPU
    assert from_log(on_gpu) == "Vulkan0"
    assert from_log(["srv  llama_server: model loaded"]) is None
    assert resolve([H100, L4], ARGV, {}, on_gpu).device == "Vulkan0"
    assert resolve([H100], ARGV, {}, on_cpu).device == CPU


def test_nvml_gpu_with_model_on_cpu_warns_once_naming_cause_and_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """NVML and the listing are fakes (no GPU in CI): NVML sees an H100,
    llama-server lists nothing, as a container without a working Vulkan
    driver does (seen for real on an H200 host: `Available devices:` and
    nothing else, the loader failing on libGLX_nvidia.so.0)."""
    calls = 0

    def nvml() -> tuple[list[Gpu], str]:
        nonlocal calls
        calls += 1
        return NVML_H100, ""

    with caplog.at_level(logging.WARNING, logger="forge_core.llama_host.devices"):
        warning = warn_if_gpu_unused(resolve([], ARGV, {}), nvml)
    assert calls == 1
    assert [r.getMessage() for r in caplog.records] == [warning]
    for words in (
        "NVIDIA H100 80GB HBM3",
        "CPU",
        "libvulkan1",
        "libglvnd0",
        "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics",
        "--gpus all",
        "On a GPU host",
        "VK_LOADER_DEBUG=error",
        "docs/gpu-host.md",
    ):
        assert words in warning


def test_no_warning_when_nvml_and_llama_server_agree(caplog: pytest.LogCaptureFixture) -> None:
    """Fakes again: a listed GPU that NVML also sees, a CPU host with no
    NVIDIA GPU, and a CPU chosen on purpose with -ngl 0."""
    with caplog.at_level(logging.WARNING, logger="forge_core.llama_host.devices"):
        assert warn_if_gpu_unused(resolve([H100], ARGV, {}), lambda: (NVML_H100, "")) == ""
        assert warn_if_gpu_unused(resolve([], ARGV, {}), lambda: ([], "no NVML")) == ""
        on_purpose = resolve([H100], [*ARGV, "-ngl", "0"], {})
        assert warn_if_gpu_unused(on_purpose, lambda: (NVML_H100, "")) == ""
    assert caplog.records == []
    assert mismatch_warning(resolve(None, ARGV, {}), NVML_H100) == ""
