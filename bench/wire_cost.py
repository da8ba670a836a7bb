"""What each kind of message costs on the wire: the issue-16 account.

One K-iteration run of bench/roundtrip.py's workflow is recorded off the
wire twice (raw generated stub, scripted model, Forge server in its own
process): as older clients get it (one event per message) and as the SDKs
now ask for it (StartRun.events.batch). For each message kind: how many per
iteration, bytes, and the protobuf time to serialize (server) and parse
(client) one, measured here. The fixed cost of one gRPC message, whatever
its kind, is measured in the same run: the bare grpc.aio echo server's CPU
per message answered (one read and one write, no parsing), from /proc.

    .venv/bin/python -m bench.wire_cost [--iterations 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from statistics import median
from typing import Any

import grpc

from bench._common import (
    fmt,
    forge_server_argv,
    free_port,
    proc_stats,
    server_process,
    table,
    write_results,
)
from bench.echo import chat_stub
from bench.roundtrip import message_sizes, record_wire, write_script
from forge.v1 import forge_service_pb2 as pb

ECHO_MESSAGES = 3000


def micros(fn: Any, repeat: int = 2000) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1e6


def by_kind(messages: list[pb.RunResponse], iterations: int) -> list[dict[str, Any]]:
    groups: dict[str, list[pb.RunResponse]] = defaultdict(list)
    for m in messages:
        groups[str(m.WhichOneof("kind"))].append(m)
    rows = []
    for kind, group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        sample = group[len(group) // 2]
        data = sample.SerializeToString()
        rows.append(
            {
                "kind": kind,
                "per_iteration": len(group) / iterations,
                "bytes_median": median(m.ByteSize() for m in group),
                "serialize_us": micros(sample.SerializeToString),
                "parse_us": micros(lambda d=data: pb.RunResponse.FromString(d)),
            }
        )
    return rows


async def echo_cpu_per_message(address: str, pid: int, size: int) -> float:
    """Server CPU (ms) per message the bare echo answers."""
    payload = b"r" * size
    async with grpc.aio.insecure_channel(address) as channel:
        stream = chat_stub(channel)()
        for _ in range(200):  # warm-up
            await stream.write(payload)
            await stream.read()
        before = proc_stats(pid).cpu_s
        for _ in range(ECHO_MESSAGES):
            await stream.write(payload)
            await stream.read()
        after = proc_stats(pid).cpu_s
        await stream.done_writing()
    return (after - before) / ECHO_MESSAGES * 1e3


async def run(args: argparse.Namespace) -> dict[str, Any]:
    script = write_script(args.iterations)
    port, echo_port = free_port(), free_port()
    argv = forge_server_argv(port, "--backend", "scripted", "--script", str(script))
    request_bytes, reply_bytes = message_sizes(args.iterations)
    echo_argv = [sys.executable, "-m", "bench.echo", "--port", str(echo_port)]
    echo_argv += ["--reply-bytes", str(reply_bytes)]
    async with (
        server_process(argv, port, "wire-cost-forge") as forge,
        server_process(echo_argv, echo_port, "wire-cost-echo") as echo,
    ):
        single = await record_wire(forge.address, args.iterations, batch=False)
        batched = await record_wire(forge.address, args.iterations, batch=True)
        assert echo.proc is not None
        per_message_ms = await echo_cpu_per_message(echo.address, echo.proc.pid, request_bytes)
    return {
        "iterations": args.iterations,
        "grpc_message_server_cpu_ms": per_message_ms,
        "one_event_per_message": {
            "messages_per_iteration": len(single) / args.iterations,
            "bytes_per_iteration": sum(m.ByteSize() for m in single) / args.iterations,
            "kinds": by_kind(single, args.iterations),
        },
        "batched": {
            "messages_per_iteration": len(batched) / args.iterations,
            "bytes_per_iteration": sum(m.ByteSize() for m in batched) / args.iterations,
            "kinds": by_kind(batched, args.iterations),
        },
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--iterations", type=int, default=50)
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    print(
        f"Wire cost per message kind ({args.iterations}-iteration run); one gRPC message costs "
        f"the bare echo server {fmt(data['grpc_message_server_cpu_ms'] * 1e3, 0)} us of CPU"
    )
    for mode in ("one_event_per_message", "batched"):
        d = data[mode]
        print(
            f"{mode}: {fmt(d['messages_per_iteration'], 2)} messages, "
            f"{fmt(d['bytes_per_iteration'], 0)} bytes per iteration"
        )
        print(
            table(
                ["kind", "per iteration", "bytes (median)", "serialize us", "parse us"],
                [
                    [
                        k["kind"],
                        fmt(k["per_iteration"], 2),
                        fmt(k["bytes_median"], 0),
                        fmt(k["serialize_us"], 1),
                        fmt(k["parse_us"], 1),
                    ]
                    for k in d["kinds"]
                ],
            )
        )
    print(f"results: {write_results('wire_cost', data)}")


if __name__ == "__main__":
    main()
