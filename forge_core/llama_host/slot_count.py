"""How many slots (`--parallel`) a managed llama-server gets when the
operator does not say.

Every slot's batch is decoded by the same llama.cpp threads, so on a CPU
host with few cores a second slot does not add compute: it splits the
threads' time between two runs' prompts and, measured on 2 shared cores
(bench/RESULTS.md §23 and §26, issue 38), served fewer
workflows per second than one slot at 8 and 16 concurrent runs (§26: 0.40-0.63
wf/s against 0.26-0.41 for 2 slots and 0.23-0.39 for 4). Runs beyond the
slots wait in Forge's queue (backends/llama/slots.py) and keep their
cached prefixes. A GPU, and a CPU host with more cores, have room to
decode several slots' batches together; neither was measured here, so
there the default stays at 2, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge_core.llama_host.devices import CPU, UNKNOWN

# --slots 0: choose by the host (default_slots).
AUTO_SLOTS = 0
# The slots a GPU host, a CPU host with more cores, and a host whose device
# could not be told get: the default before the choice depended on the host.
DEFAULT_SLOTS = 2
# The most CPUs a CPU-only host has and still gets one slot. Measured at 2;
# up to 4 the default threads (CPUs - 1, process.default_threads) are 3 or
# fewer, too few for two slots' batches to gain from running together.
FEW_CORES = 4


@dataclass(frozen=True)
class SlotChoice:
    slots: int
    # Why, in words (logged at start-up).
    reason: str


def default_slots(cpus: int, device: str) -> SlotChoice:
    """The slot count for a host with `cpus` CPUs available whose model runs
    on `device` (devices.CPU, devices.UNKNOWN or GPU device names)."""
    if device == UNKNOWN:
        return SlotChoice(DEFAULT_SLOTS, "default: the device could not be told")
    if device != CPU:
        return SlotChoice(DEFAULT_SLOTS, f"default for a model on {device}")
    if cpus <= FEW_CORES:
        return SlotChoice(
            1,
            f"CPU only with {cpus} CPU{'s' if cpus != 1 else ''}: all slots share the same "
            "threads; on 2 cores 1 slot served the most workflows/s",
        )
    return SlotChoice(DEFAULT_SLOTS, f"default for a CPU-only host with {cpus} CPUs")


def chosen_slots(configured: int, cpus: int, device: str) -> SlotChoice:
    """The operator's count when given (> 0), else default_slots."""
    if configured != AUTO_SLOTS:
        return SlotChoice(configured, "--slots")
    return default_slots(cpus, device)
