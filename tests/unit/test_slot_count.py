"""The slot count a managed llama-server gets when the operator gives none
(issue 38): one on a CPU-only host with few cores, two on a GPU, and an
explicit --slots always wins.

The choice is a pure function of the CPUs and the device; the wiring into
ManagedLlamaServer is checked without starting a server (no GPU here: the
GPU listing is fixed text, as in test_llama_devices.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_core.llama_host.devices import CPU, UNKNOWN, LlamaDevice
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer, available_cpus
from forge_core.llama_host.slot_count import (
    AUTO_SLOTS,
    DEFAULT_SLOTS,
    FEW_CORES,
    chosen_slots,
    default_slots,
)

H100 = LlamaDevice("Vulkan0", "NVIDIA H100 80GB HBM3", 81559, 80000)


@pytest.mark.parametrize("cpus", [1, 2, 3, FEW_CORES])
def test_a_cpu_only_host_with_few_cores_gets_one_slot(cpus: int) -> None:
    choice = default_slots(cpus, CPU)
    assert choice.slots == 1
    assert f"{cpus} CPU" in choice.reason and "share" in choice.reason


@pytest.mark.parametrize("cpus", [FEW_CORES + 1, 16, 64])
def test_a_cpu_only_host_with_more_cores_keeps_the_default(cpus: int) -> None:
    assert default_slots(cpus, CPU).slots == DEFAULT_SLOTS


@pytest.mark.parametrize("cpus", [1, 2, 16])
def test_a_gpu_host_keeps_the_default_however_few_its_cpus(cpus: int) -> None:
    choice = default_slots(cpus, "Vulkan0")
    assert choice.slots == DEFAULT_SLOTS and "Vulkan0" in choice.reason


def test_an_unknown_device_keeps_the_default() -> None:
    choice = default_slots(2, UNKNOWN)
    assert choice.slots == DEFAULT_SLOTS and "could not be told" in choice.reason


@pytest.mark.parametrize("device", [CPU, "Vulkan0", UNKNOWN])
def test_an_explicit_count_always_wins(device: str) -> None:
    for configured in (1, 2, 4, 7):
        assert chosen_slots(configured, 2, device).slots == configured
        assert chosen_slots(configured, 2, device).reason == "--slots"
    assert chosen_slots(AUTO_SLOTS, 2, device) == default_slots(2, device)


def _server(
    slots: int, listed: list[LlamaDevice], extra: list[str] | None = None
) -> ManagedLlamaServer:
    server = ManagedLlamaServer(
        LlamaServerConfig(
            model_path=Path("m.gguf"),
            binary=Path("llama-server"),
            port=8080,
            slots=slots,
            prefix_snapshots=False,
            extra_args=extra or [],
        )
    )
    server.listed_devices = listed
    return server


def test_the_managed_server_settles_auto_by_its_device_and_cpus() -> None:
    on_gpu = _server(AUTO_SLOTS, [H100])
    on_gpu._choose_slots()
    assert on_gpu.config.slots == DEFAULT_SLOTS
    argv = on_gpu.config.argv(8080)
    assert argv[argv.index("--parallel") + 1] == str(DEFAULT_SLOTS)

    # The same GPU listed, but a flag keeps the model on the CPU.
    kept_off = _server(AUTO_SLOTS, [H100], ["--device", "none"])
    kept_off._choose_slots()
    assert kept_off.config.slots == default_slots(available_cpus(), CPU).slots
    assert kept_off.slots_reason == default_slots(available_cpus(), CPU).reason


def test_the_managed_server_keeps_an_explicit_count() -> None:
    server = _server(3, [])
    server._choose_slots()
    assert server.config.slots == 3 and server.slots_reason == "--slots"


def test_forge_server_defaults_to_auto_and_passes_an_explicit_count() -> None:
    from forge_server.backend import BackendConfig
    from forge_server.cli import build_parser

    assert BackendConfig.from_args(build_parser().parse_args([])).slots == AUTO_SLOTS
    assert BackendConfig.from_args(build_parser().parse_args(["--slots", "3"])).slots == 3
