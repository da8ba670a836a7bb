"""The bundled llama-server must run on every x86-64 CPU with AVX2.

A static scan of its machine code (cpu_features.py), so the guard fails on any
test machine, whatever its CPU: the build pinned before 0.10068.0 carried
AVX-512 and AMX code and died with SIGILL on AVX2-only CPUs while passing every
test on the machines that had AVX-512.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from forge_core.llama_host.cpu_features import (
    X86_64_V3,
    cpuinfo_flag,
    scan,
    scan_binary,
    shipped_code,
)
from forge_core.llama_host.install import bundled_binary


def test_bundled_llama_server_needs_at_most_x86_64_v3() -> None:
    result = scan_binary(bundled_binary())
    names = {p.name for p in result.files}
    # The CPU backend is where the matrix kernels, and the risk, live.
    assert any(n.startswith("libggml-cpu") for n in names), names
    assert result.features.get("AVX2", 0) > 0, "expected the AVX2 kernels"
    beyond = sorted(cpuinfo_flag(f) for f in result.beyond(X86_64_V3))
    assert beyond == [], f"bundled llama-server needs {beyond} beyond x86-64-v3"


def test_the_scan_sees_avx512_code(tmp_path: Path) -> None:
    """The guard above can fail: code compiled for AVX-512 is recognised as
    such, in a library the binary loads from its own directory."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "this test needs a C compiler (apt-get install gcc)"
    (tmp_path / "wide.c").write_text(
        "#include <immintrin.h>\n"
        "void widen(float *o, const float *i) {\n"
        "  _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(i), _mm512_loadu_ps(i)));\n}\n"
    )
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    subprocess.run(
        [cc, "-O2", "-mavx512f", "-shared", "-fPIC", "-o", "libwide.so", "wide.c"],
        check=True,
        cwd=tmp_path,
    )
    subprocess.run(
        [cc, "-o", "server", "main.c", "-L.", "-Wl,--no-as-needed", "-lwide", "-Wl,-rpath,$ORIGIN"],
        check=True,
        cwd=tmp_path,
    )
    files = shipped_code(tmp_path / "server")
    assert {p.name for p in files} == {"server", "libwide.so"}
    result = scan(files)
    assert "AVX512F" in result.beyond(X86_64_V3)
    assert "avx512f" in result.missing_on({"avx", "avx2", "fma"})
