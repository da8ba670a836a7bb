"""Which device a llama-server runs the model on.

A GPU host whose image lacks the Vulkan driver runs the Vulkan build on the
CPU without a word of complaint, 10-100x slower; so Forge asks the binary
what it can see (`--list-devices`), honours the flags that turn offloading
off, prefers what the server's own start-up log says when it says it, and
reports the result (GetServerInfo.llama_device, /metrics, `--check`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge_core.llama_host.hardware import Gpu, detect_gpus

log = logging.getLogger(__name__)

CPU = "CPU"
UNKNOWN = "unknown"

# `  Vulkan0: NVIDIA H100 80GB HBM3 (81559 MiB, 80000 MiB free)` (common/arg.cpp).
_LISTED = re.compile(r"^\s*(\S+):\s+(.*?)\s+\((\d+) MiB,\s*(\d+) MiB free\)\s*$")
# llama_model_load_from_file_impl: using device Vulkan0 (NVIDIA ...) ...
_USING = re.compile(r"using device (\S+)")
# load_tensors: offloaded 19/19 layers to GPU
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")


@dataclass(frozen=True)
class LlamaDevice:
    name: str
    description: str
    total_mib: int
    free_mib: int


@dataclass(frozen=True)
class DeviceReport:
    # CPU, UNKNOWN, or the device names in use joined with ",".
    device: str
    # The GPU devices the binary can see.
    devices: tuple[LlamaDevice, ...] = ()
    # How it was decided, in words (logged and printed by --check).
    reason: str = ""
    # True when the CPU was chosen by a flag, not for want of a GPU device.
    cpu_by_flag: bool = False


def parse_device_list(text: str) -> list[LlamaDevice]:
    """`llama-server --list-devices` output; the CPU is never listed."""
    devices = []
    for line in text.splitlines():
        m = _LISTED.match(line)
        if m:
            devices.append(LlamaDevice(m[1], m[2], int(m[3]), int(m[4])))
    return devices


async def list_devices(
    binary: Path, env: Mapping[str, str] | None = None, timeout_s: float = 30.0
) -> list[LlamaDevice] | None:
    """The devices `binary` can use; None when it could not say (an old
    build without --list-devices, a binary that does not run)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            str(binary),
            "--list-devices",
            env=dict(env) if env is not None else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as exc:
        log.warning("cannot run %s --list-devices: %s", binary, exc)
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        log.warning("%s --list-devices did not answer in %.0fs", binary, timeout_s)
        return None
    text = out.decode(errors="replace")
    if proc.returncode != 0 or "Available devices" not in text:
        log.warning("%s --list-devices failed (exit %s): %s", binary, proc.returncode, text[-500:])
        return None
    return parse_device_list(text)


def _flag_value(argv: Sequence[str], names: tuple[str, ...]) -> str | None:
    """The last value given to any of `names` (`--flag V` or `--flag=V`):
    llama-server's argument parser lets a later flag win."""
    value = None
    for i, arg in enumerate(argv):
        name, eq, inline = arg.partition("=")
        if name in names:
            if eq:
                value = inline
            elif i + 1 < len(argv):
                value = argv[i + 1]
    return value


def cpu_flag(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The flag that keeps the model on the CPU, in words; "" when none does.
    The LLAMA_ARG_* variables are llama-server's own defaults for the flags."""
    layers = _flag_value(argv, ("-ngl", "--n-gpu-layers", "--gpu-layers"))
    if layers is None:
        layers = env.get("LLAMA_ARG_N_GPU_LAYERS")
    if layers is not None and layers.strip() == "0":
        return "--n-gpu-layers 0"
    device = _flag_value(argv, ("-dev", "--device"))
    if device is None:
        device = env.get("LLAMA_ARG_DEVICE")
    if device is not None and device.strip().lower() == "none":
        return "--device none"
    return ""


def _chosen(argv: Sequence[str], env: Mapping[str, str], listed: Sequence[LlamaDevice]) -> str:
    device = _flag_value(argv, ("-dev", "--device")) or env.get("LLAMA_ARG_DEVICE")
    if device:
        return ",".join(d.strip() for d in device.split(",") if d.strip())
    # With no --device llama.cpp splits the layers over every GPU it sees.
    return ",".join(d.name for d in listed)


def is_device_line(line: str) -> bool:
    """A start-up log line from_log reads: kept apart from the log tail,
    which a GPU build's per-layer lines would push them out of."""
    return bool(_USING.search(line) or _OFFLOADED.search(line))


def from_log(lines: Sequence[str]) -> str | None:
    """What llama-server's start-up log says: CPU, device names, or None
    when it does not say (this build logs neither line at its default
    verbosity, a Vulkan build on a GPU does)."""
    using = [m[1] for line in lines if (m := _USING.search(line))]
    offloaded = [m for line in lines if (m := _OFFLOADED.search(line))]
    if offloaded and int(offloaded[-1][1]) == 0:
        return CPU
    if using:
        return ",".join(dict.fromkeys(using))
    return None


def resolve(
    listed: Sequence[LlamaDevice] | None,
    argv: Sequence[str],
    env: Mapping[str, str],
    log_lines: Sequence[str] = (),
) -> DeviceReport:
    """A managed llama-server's device from its listing, its flags and (when
    it says) its log."""
    devices = tuple(listed or ())
    flag = cpu_flag(argv, env)
    if flag:
        return DeviceReport(CPU, devices, f"{flag} keeps the model on the CPU", cpu_by_flag=True)
    logged = from_log(log_lines)
    if logged is not None:
        return DeviceReport(logged, devices, "from llama-server's start-up log")
    if listed is None:
        return DeviceReport(UNKNOWN, devices, "llama-server --list-devices gave no answer")
    if not devices:
        return DeviceReport(CPU, devices, "llama-server --list-devices lists no GPU device")
    return DeviceReport(_chosen(argv, env, devices), devices, "llama-server --list-devices")


def external() -> DeviceReport:
    # /props and /metrics name no device (checked against build b1-571d0d5).
    return DeviceReport(UNKNOWN, (), "an external llama-server's /props does not name its device")


def mismatch_warning(report: DeviceReport, gpus: Sequence[Gpu]) -> str:
    """The warning for an NVIDIA GPU the model does not use; "" when none is due."""
    if not gpus or report.device != CPU or report.cpu_by_flag:
        return ""
    names = ", ".join(g.name for g in gpus)
    return (
        f"NVML sees {names}, but llama-server runs the model on the CPU "
        f"({report.reason}). Likely cause: no Vulkan driver inside the container — "
        "libvulkan1 or libglvnd0 missing from the image, no NVIDIA EGL ICD manifest "
        "(nvidia_egl_icd.json), or NVIDIA_DRIVER_CAPABILITIES without `graphics`. Fix: "
        "install libvulkan1 and libglvnd0 in the image (the Dockerfile's GPU=vulkan) and "
        "run with `--gpus all` and NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics; "
        "`VK_LOADER_DEBUG=error,warn llama-server --list-devices` shows why the Vulkan "
        'loader found no driver. See the README, "On a GPU host", and docs/gpu-host.md '
        '("Troubleshooting").'
    )


def warn_if_gpu_unused(
    report: DeviceReport, detect: Callable[[], tuple[list[Gpu], str]] | None = None
) -> str:
    """Log the mismatch warning, when due; returns it ("" when not).
    `detect`: NVML's view (None: hardware.detect_gpus, looked up at call time)."""
    warning = mismatch_warning(report, (detect or detect_gpus)()[0])
    if warning:
        log.warning("%s", warning)
    return warning
