"""A managed llama-server that cannot start says why, in one readable message.

Every case starts a real process: the bundled llama-server with a bad model, a
taken port or a memory limit, and, for the failures the bundled build cannot
be made to show on every CPU (SIGILL, a missing shared library), small
programs compiled here with the system C compiler that really die that way.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from forge_core.llama_host.failures import LlamaStartupError, StartupFailure
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer, default_threads
from forge_core.llama_host.startup import StartupContext, diagnose

AVX512_THEN_TRAP = r"""
#include <immintrin.h>
__attribute__((target("avx512f"), noinline))
void widen(float *out, const float *in) {
    _mm512_storeu_ps(out, _mm512_add_ps(_mm512_loadu_ps(in), _mm512_loadu_ps(in)));
}
int main(void) {
    __builtin_trap();  /* ud2: SIGILL on every x86-64 CPU */
    return 0;
}
"""


def compile_c(tmp: Path, source: str, name: str, *flags: str) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "these tests need a C compiler (apt-get install gcc)"
    src = tmp / f"{name}.c"
    src.write_text(source)
    out = tmp / name
    subprocess.run([cc, "-O1", "-o", str(out), str(src), *flags], check=True, cwd=tmp)
    return out


def config_for(binary: Path, model: Path | None = None, **overrides: object) -> LlamaServerConfig:
    base: dict[str, object] = {"ctx_size": 1024, "slots": 1, "startup_timeout_s": 120.0}
    base.update(overrides)
    return LlamaServerConfig(model_path=model or bundled_model(), binary=binary, **base)  # type: ignore[arg-type]


async def start_failure(config: LlamaServerConfig) -> LlamaStartupError:
    managed = ManagedLlamaServer(config)
    with pytest.raises(LlamaStartupError) as caught:
        await managed.start()
    assert not managed.running
    return caught.value


async def test_missing_model_is_named_before_anything_starts(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.gguf"
    error = await start_failure(config_for(bundled_binary(), missing))
    assert error.failure is StartupFailure.MODEL_MISSING
    assert str(missing) in str(error) and "--model" in str(error)


@pytest.mark.parametrize("kind", ["not-gguf", "truncated"])
async def test_corrupt_model_file(tmp_path: Path, kind: str) -> None:
    broken = tmp_path / f"{kind}.gguf"
    if kind == "not-gguf":
        broken.write_bytes(b"this is not a GGUF file")
    else:
        with bundled_model().open("rb") as f:
            broken.write_bytes(f.read(1_000_000))
    error = await start_failure(config_for(bundled_binary(), broken))
    assert error.failure is StartupFailure.MODEL_INVALID, error
    assert str(broken) in str(error)
    assert "not a valid GGUF" in str(error)


async def test_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        error = await start_failure(config_for(bundled_binary(), port=port))
    assert error.failure is StartupFailure.PORT_IN_USE, error
    assert f"port {port}" in str(error) and "already in use" in str(error)


def test_port_in_use_when_the_log_lost_the_bind_error() -> None:
    """Seen on CI: llama-server exited with code 1 and its log thread never
    wrote the bind error. The port is then asked directly."""
    lines = ["0.00.003.451 I cmn  common_param: verbosity = 3"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ctx = StartupContext(Path("/opt/llama-server"), Path("m.gguf"), "127.0.0.1", port, 4096)
        assert diagnose(1, lines, ctx).failure is StartupFailure.PORT_IN_USE
    # Released: an exit with an unexplained log is not blamed on the port.
    assert diagnose(1, lines, ctx).failure is StartupFailure.OTHER


def test_a_model_that_is_no_gguf_file_when_the_log_lost_the_reason(tmp_path: Path) -> None:
    """Seen on CI: llama-server exited with code 1 before its log thread
    wrote "failed to load model". The file's magic bytes are read directly."""
    lines = ["0.00.003.451 I cmn  common_param: verbosity = 3"]
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF file")
    ctx = StartupContext(Path("/opt/llama-server"), broken, "127.0.0.1", 1, 4096)
    failure = diagnose(1, lines, ctx)
    assert failure.failure is StartupFailure.MODEL_INVALID
    assert "could not load the model" in str(failure)
    # A real GGUF file with the same log is not blamed.
    ctx = StartupContext(Path("/opt/llama-server"), bundled_model(), "127.0.0.1", 1, 4096)
    assert diagnose(1, lines, ctx).failure is StartupFailure.OTHER


async def test_too_little_memory_for_the_context(tmp_path: Path) -> None:
    """The bundled llama-server under a 3 GB address-space limit, asked for a
    2M-token KV cache (~6 GB): it reports the failed allocation, then crashes."""
    wrapper = tmp_path / "llama-server-3g"
    wrapper.write_text(f'#!/bin/sh\nulimit -v 3000000\nexec "{bundled_binary()}" "$@"\n')
    wrapper.chmod(0o755)
    error = await start_failure(config_for(wrapper, ctx_size=2_000_000, threads=1))
    assert error.failure is StartupFailure.OUT_OF_MEMORY, error
    assert "--ctx-size 2000000" in str(error) and "Lower --ctx-size" in str(error)


async def test_missing_shared_library(tmp_path: Path) -> None:
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    compile_c(lib_dir, "int forge_answer(void) { return 42; }\n", "libforgegone.so", "-shared")
    program = compile_c(
        tmp_path,
        "int forge_answer(void);\nint main(void) { return forge_answer() == 42 ? 0 : 1; }\n",
        "needs-lib",
        f"-L{lib_dir}",
        "-lforgegone",
    )
    (lib_dir / "libforgegone.so").unlink()
    error = await start_failure(config_for(program))
    assert error.failure is StartupFailure.MISSING_LIBRARY, error
    assert "libforgegone.so" in str(error) and "--llama-binary" in str(error)


def test_the_loader_message_for_libgomp_names_the_package() -> None:
    line = (
        "llama-server: error while loading shared libraries: libgomp.so.1: "
        "cannot open shared object file: No such file or directory"
    )
    ctx = StartupContext(Path("/opt/llama-server"), Path("m.gguf"), "127.0.0.1", 8080, 4096)
    error = diagnose(127, [line], ctx)
    assert error.failure is StartupFailure.MISSING_LIBRARY
    assert "apt-get install libgomp1" in str(error)
    assert "exited with code 127" in str(error)


async def test_sigill_names_the_instructions_this_cpu_lacks(tmp_path: Path) -> None:
    program = compile_c(tmp_path, AVX512_THEN_TRAP, "avx512-trap")
    error = await start_failure(config_for(program))
    message = str(error)
    assert error.failure is StartupFailure.ILLEGAL_INSTRUCTION, message
    assert "killed by SIGILL (illegal instruction)" in message
    assert "--llama-binary" in message and "--llama-url" in message
    assert "LLAMA_SERVER=source" in message
    # The same exit judged against a CPU without AVX-512 names it; the test
    # host's own flags decide what the message above listed.
    ctx = StartupContext(program, bundled_model(), "127.0.0.1", 1, 1024)
    flags = {"sse4_2", "avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "popcnt"}
    judged = diagnose(-4, ["AMX is not ready to be used!"], ctx, host_flags=flags)
    assert "It uses avx512f, which /proc/cpuinfo does not list" in str(judged)


async def test_forge_server_prints_one_message_and_exits_non_zero(tmp_path: Path) -> None:
    program = compile_c(tmp_path, AVX512_THEN_TRAP, "avx512-trap")
    for extra, expected in (
        (["--llama-binary", str(program)], "illegal instruction"),
        (["--model", str(tmp_path / "absent.gguf")], "does not exist"),
    ):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "forge_server", "--port", "0", *extra,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, stderr = await asyncio.wait_for(proc.communicate(), 120)
        text = stderr.decode()
        assert proc.returncode == 3, text
        assert "Traceback" not in text
        assert "forge-server: " in text and expected in text


def test_default_threads_leave_a_core_for_the_rest_of_the_host() -> None:
    assert [default_threads(n) for n in (1, 2, 4, 16)] == [1, 1, 3, 15]
    argv = config_for(bundled_binary()).argv(8080)
    assert argv[argv.index("--threads") + 1] == str(default_threads())
    assert "--threads" in argv and int(argv[argv.index("--threads") + 1]) < max(
        2, len(os.sched_getaffinity(0))
    )
