"""Shared pieces of the benchmarks: statistics, tables, JSON results, the
server processes they measure and /proc readings of those processes.

Every figure a benchmark reports is a ratio against a baseline measured in
the same run: absolute times on shared machines are noise.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# ── statistics and tables ────────────────────────────────────────────────


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def ratio(value: float, baseline: float) -> float:
    return value / baseline if baseline else float("nan")


def fmt(value: Any, digits: int = 2) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table (also valid Markdown)."""
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(items: Sequence[str]) -> str:
        return "| " + " | ".join(s.ljust(w) for s, w in zip(items, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(list(headers)), sep, *(line(r) for r in cells)])


# ── results ──────────────────────────────────────────────────────────────


def machine() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_avg": os.getloadavg(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "kernel": platform.release(),
    }


def write_results(name: str, data: dict[str, Any]) -> Path:
    """bench/results/<name>-<UTC time>.json with the machine and the command."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    payload = {
        "benchmark": name,
        "date": now.isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.executable).name, "-m", f"bench.{name}", *sys.argv[1:]]),
        "machine": machine(),
        **data,
    }
    path = RESULTS_DIR / f"{name}-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def raise_fd_limit(wanted: int = 65536) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(wanted, hard) if hard != resource.RLIM_INFINITY else wanted
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ── processes ────────────────────────────────────────────────────────────


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class ProcStats:
    cpu_s: float
    rss_bytes: int


def proc_stats(pid: int) -> ProcStats:
    """CPU seconds (user + system) and resident memory of a live process."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name may hold spaces; the fields after it are fixed.
    fields = stat.rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    rss_pages = int(fields[21])
    return ProcStats((utime + stime) / CLK_TCK, rss_pages * PAGE_SIZE)


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


class ServerProcess:
    """A server in a child process (its own CPU and memory, readable in /proc)."""

    def __init__(self, argv: list[str], port: int, log_path: Path) -> None:
        self.argv = argv
        self.port = port
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stats(self) -> ProcStats:
        return proc_stats(self.pid)

    def spawn(self) -> subprocess.Popen[bytes]:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        if "FORGE_JOURNAL" not in env:
            # A fresh journal per server (an explicit --journal wins): the
            # default one in the user's cache dir would grow by every run of
            # every benchmark (it had reached 690 MB on the dev machine), and
            # the figures would depend on what earlier runs left in it.
            _remove_journal(self.journal_path)
            env["FORGE_JOURNAL"] = f"sqlite:///{self.journal_path}"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                self.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=ROOT,
                env=env,
            )
        return self.proc

    @property
    def journal_path(self) -> Path:
        return self.log_path.with_suffix(".journal.db")

    async def start(self, timeout_s: float = 240.0) -> None:
        await wait_serving(self.address, timeout_s, self.spawn())

    def stop(self, grace_s: float = 15.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        _remove_journal(self.journal_path)


def _remove_journal(path: Path) -> None:
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        file.unlink(missing_ok=True)


@contextlib.asynccontextmanager
async def server_process(
    argv: list[str], port: int, name: str, timeout_s: float = 240.0
) -> AsyncIterator[ServerProcess]:
    server = ServerProcess(argv, port, RESULTS_DIR / f"{name}.log")
    try:
        await server.start(timeout_s)
        yield server
    finally:
        server.stop()


def forge_server_argv(port: int, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "forge_server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "WARNING",
        *args,
    ]


async def wait_serving(
    address: str, timeout_s: float, proc: subprocess.Popen[bytes] | None = None
) -> None:
    """Poll the gRPC health service until `address` answers SERVING."""
    deadline = time.monotonic() + timeout_s
    # Imported here: bench.constrained runs on hosts without grpc_health.
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode} before serving")
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=2)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"no SERVING answer from {address} within {timeout_s:.0f}s")
            await asyncio.sleep(0.2)
