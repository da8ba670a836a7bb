"""Time from launching forge-server (managed llama-server, bundled model) to
its gRPC health check answering SERVING, over several starts in a row.

The first start may begin with an empty GPU shader cache (`--clear-shaders`):
on a GPU the warm-up has the driver compile llama.cpp's Vulkan pipelines,
which the driver keeps under Forge's cache directory
(forge_core/llama_host/install.shader_cache_env), so later starts are a
restarted container that kept its cache volume. Each start's log gives the
warm-up's own share (`llama-server warm-up took`) and, on a GPU, the prompt
sizes that were slowest to evaluate the first time.

    .venv/bin/python -m bench.warm_up [--starts 2] [--clear-shaders] [-- SERVER ARGS]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import time
from typing import Any

from bench._common import (
    RESULTS_DIR,
    ServerProcess,
    fmt,
    forge_server_argv,
    free_port,
    table,
    wait_serving,
    write_results,
)
from forge_core.cache import cache_dir

WARM_UP_LINE = re.compile(r"llama-server warm-up took ([0-9.]+)s")
GPU_LINE = re.compile(r"GPU warm-up: .*")
DEVICE_LINE = re.compile(r"device: .*")


async def one_start(index: int, server_args: list[str]) -> dict[str, Any]:
    port = free_port()
    argv = forge_server_argv(port, *server_args)
    argv[argv.index("--log-level") + 1] = "INFO"  # the warm-up's own lines
    server = ServerProcess(argv, port, RESULTS_DIR / f"warm_up-{index}.log")
    started = time.perf_counter()
    try:
        await wait_serving(server.address, 600.0, server.spawn())
        serving_s = time.perf_counter() - started
    finally:
        server.stop()
    log = server.log_path.read_text(errors="replace")
    warm = WARM_UP_LINE.search(log)
    gpu = GPU_LINE.search(log)
    device = DEVICE_LINE.search(log)
    return {
        "start": index + 1,
        "serving_s": serving_s,
        "warm_up_s": float(warm.group(1)) if warm else None,
        "gpu_warm_up": gpu.group(0) if gpu else "",
        "device": device.group(0) if device else "",
    }


def report(rows: list[dict[str, Any]]) -> str:
    return table(
        ["start", "to SERVING s", "warm-up s", "device", "GPU warm-up"],
        [
            [r["start"], fmt(r["serving_s"], 1), fmt(r["warm_up_s"], 2), r["device"][:60],
             r["gpu_warm_up"]]
            for r in rows
        ],
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--starts", type=int, default=2, help="starts in a row")
    p.add_argument(
        "--clear-shaders",
        action="store_true",
        help="empty Forge's GPU shader cache before the first start",
    )
    p.add_argument("server_args", nargs="*", help="after --: forge-server's own arguments")
    args = p.parse_args(argv)
    if args.clear_shaders:
        shutil.rmtree(cache_dir() / "gpu-shaders", ignore_errors=True)
    rows = []
    for index in range(args.starts):
        rows.append(asyncio.run(one_start(index, args.server_args)))
        print(rows[-1], flush=True)
    print(report(rows))
    data = {"cleared_shaders": args.clear_shaders, "server_args": args.server_args, "rows": rows}
    print(f"results: {write_results('warm_up', data)}")


if __name__ == "__main__":
    main()
