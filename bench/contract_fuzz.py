"""Contract fuzzing: thousands of random client sequences against the real server.

Each sequence is one Run stream driven through raw generated stubs, as a
broken or hostile client would drive it (the SDKs never send most of these
shapes): invalid starts (empty or control-character names, NaN and Infinity
in schemas, regexes that overflow, references that are not local, undefined
enum values, orphan prior tool results, invalid UTF-8 in any string field,
bytes that are not a message at all), then on every tool call one action:
an answer, an error of any kind, an answer at the tool-timeout boundary, a
duplicate, an unknown id, invalid UTF-8, cancel, half-close, a second start,
an empty message, silence, or a dropped stream.

The contract allows every outcome but four, which the report counts:
UNKNOWN, INTERNAL (as a status or as FailureReason INTERNAL), a hang (no end
within the deadline) and a run ended because a result that arrived at its
call's timeout was refused (UNKNOWN_CALL_ID for an id the server issued).
Afterwards a normal run must still complete, no stream may be left open, and
a 9 MiB tool result must complete.

    .venv/bin/python -m bench.contract_fuzz [--sequences 15000] [--seed 1]

The server runs in its own process (`forge-server --backend scripted`); the
report also gives its log bytes per sequence and its memory.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from bench._common import (
    RESULTS_DIR,
    forge_server_argv,
    free_port,
    server_process,
    table,
    write_results,
)
from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb

RUN_METHOD = "/forge.v1.ForgeService/Run"
PLACEHOLDER = "FUZZ_PLACEHOLDER"
# What the scripted model does in every run (workflow name "*").
SCRIPT = [
    {"tool_calls": [{"name": "lookup", "args": {"key": "k1"}}]},
    {"tool_calls": [{"name": "note", "args": {"text": "seen k1"}}]},
    {"tool_calls": [{"name": "lookup", "args": {"key": "k2"}}]},
    {"tool_calls": [{"name": "finish", "args": {"summary": "done"}}]},
]
TOOL_TIMEOUTS_MS = (40, 80)
# No sequence may take longer: the slowest legal one is a start that never
# comes (the server's start timeout) or every call left to time out.
SEQUENCE_DEADLINE_S = 30.0
# What grpc's Python client reports, in place of the server's status, when
# one of its writes fails because the server has ended the stream.
CORE_WRITE_ERROR = "Internal error from Core"
BAD_OUTCOMES = ("unknown", "internal", "hang", "late_result_refused")


def base_workflow() -> wpb.Workflow:
    def tool(name: str, arg: str, description: str) -> wpb.ToolSpec:
        schema = {"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}
        return wpb.ToolSpec(
            name=name, description=description, parameters_json_schema=json.dumps(schema)
        )

    return wpb.Workflow(
        name="fuzz",
        description="Look records up and summarise them.",
        tools=[
            tool("lookup", "key", "Look a record up by key"),
            tool("note", "text", "Write a note"),
            tool("finish", "summary", "Summarise. Ends the task."),
        ],
        required_steps=["lookup"],
        terminal_tools=["finish"],
    )


# ── invalid starts ───────────────────────────────────────────────────────

_SCHEMAS = [
    '{"type": "object", "properties": {"n": {"type": "number", "maximum": NaN}}}',
    '{"type": "object", "properties": {"n": {"type": "number", "minimum": -Infinity}}}',
    '{"type": "object", "properties": {"n": {"type": "number", "maximum": 1e999}}}',
    '{"type": "object", "properties": {"s": {"type": "string", "pattern": "a{99999999999}"}}}',
    '{"type": "object", "properties": {"s": {"type": "string", "pattern": "^(x{1,50000})$"}}}',
    '{"type": "object", "properties": {"s": {"type": "string", "pattern": "(unclosed"}}}',
    '{"type": "object", "patternProperties": {"a{4294967296}": {}}}',
    '{"type": "object", "properties": {"s": {"$ref": "file:///etc/passwd"}}}',
    '{"type": "object", "properties": {"s": {"$ref": "http://127.0.0.1:9/x.json"}}}',
    '{"type": "object", "properties": {"s": {"$ref": "#/$defs/missing"}}}',
    '{"type": "object", "properties": {"s": {"$dynamicRef": "#meta"}}}',
    '{"type": "object", "properties": {"s": {"$id": "http://x/y", "type": "string"}}}',
    '{"type": "object", "default": ' + "[" * 10_000 + "]" * 10_000 + "}",
    '{"type": "object", "properties": {"a": ' + '{"type": "object", "properties": {"a": ' * 70,
    '{"type": "string"}',
    "[]",
    "null",
    "{",
    '{"type": "object", "properties": {"s": {"type": 12}}}',
]


def _mutate_name(value: str) -> Callable[[pb.RunRequest], None]:
    return lambda r: setattr(r.start.workflow, "name", value)


def _mutate_schema(text: str) -> Callable[[pb.RunRequest], None]:
    return lambda r: setattr(r.start.workflow.tools[0], "parameters_json_schema", text)


def _orphan(r: pb.RunRequest) -> None:
    r.start.prior_messages.add(role=mpb.ROLE_TOOL, content="x", tool_call_id="never-issued")


def _deep_prior(r: pb.RunRequest) -> None:
    r.start.prior_messages.add(
        role=mpb.ROLE_ASSISTANT,
        tool_calls=[mpb.ToolCall(id="c", name="lookup", arguments_json="[" * 5000 + "]" * 5000)],
    )


def _many_tools(r: pb.RunRequest) -> None:
    for i in range(200):
        r.start.workflow.tools.add(name=f"t{i}")


def _set(path: str, value: Any) -> Callable[[pb.RunRequest], None]:
    *parents, leaf = path.split(".")

    def mutate(r: pb.RunRequest) -> None:
        target: Any = r.start
        for p in parents:
            target = getattr(target, p)
        setattr(target, leaf, value)

    return mutate


INVALID_STARTS: list[Callable[[pb.RunRequest], object]] = [
    _mutate_name(""),
    _mutate_name("  \t"),
    _mutate_name("w" * 100_000),
    _mutate_name("a\x00b"),
    _mutate_name("fuzz\nINFO forged line"),
    *(_mutate_schema(s) for s in _SCHEMAS),
    lambda r: r.start.workflow.tools[2].prerequisites.add(tool="lookup", match_arg="nope"),
    lambda r: r.start.workflow.tools[2].prerequisites.add(tool="finish"),
    _set("options.tool_timeout_ms", 2**32 - 1),
    _set("options.compaction", 99),
    _set("options.reasoning_replay", 1234),
    _set("options.guardrails.enforcement", 7),
    _set("options.max_iterations", 5000),
    _set("options.temperature", float("nan")),
    _set("user_message", "   "),
    lambda r: r.start.workflow.ClearField("tools"),
    lambda r: setattr(r.start.workflow.tools[1], "name", "lookup"),
    lambda r: setattr(r.start.workflow.tools[1], "name", "bad name!"),
    lambda r: r.start.workflow.required_steps.append("ghost"),
    lambda r: r.start.workflow.ClearField("terminal_tools"),
    _orphan,
    _deep_prior,
    lambda r: r.start.prior_messages.add(role=99, content="x"),
    _many_tools,
    lambda r: r.start.ClearField("workflow"),
]

# String fields of a start that a placeholder can stand in for.
_UTF8_TARGETS: list[Callable[[pb.RunRequest], object]] = [
    _mutate_name(PLACEHOLDER),
    _set("user_message", PLACEHOLDER),
    lambda r: setattr(r.start.workflow.tools[0], "name", PLACEHOLDER),
    lambda r: setattr(r.start.workflow.tools[0], "description", PLACEHOLDER),
    lambda r: r.start.labels.update({PLACEHOLDER: "v"}),
    lambda r: r.start.labels.update({"k": PLACEHOLDER}),
    lambda r: r.start.prior_messages.add(role=mpb.ROLE_USER, content=PLACEHOLDER),
    _set("workflow.system_prompt", PLACEHOLDER),
]


def bad_utf8(data: bytes) -> bytes:
    """`data` with the placeholder's bytes replaced by invalid UTF-8."""
    return data.replace(PLACEHOLDER.encode(), b"\xff" * len(PLACEHOLDER))


def start_message(rng: random.Random) -> pb.RunRequest:
    options = wpb.RunOptions(tool_timeout_ms=rng.choice(TOOL_TIMEOUTS_MS))
    return pb.RunRequest(
        start=pb.StartRun(workflow=base_workflow(), user_message="Look up k1.", options=options)
    )


# ── one sequence ─────────────────────────────────────────────────────────


@dataclass
class Sequence:
    index: int
    trace: list[str] = field(default_factory=list)
    outcome: str = ""
    issued: set[str] = field(default_factory=set)
    late: set[str] = field(default_factory=set)
    # Late answers are written while the main task goes on reading, as a
    # client whose tool overran would; one write at a time.
    writers: list[asyncio.Task[None]] = field(default_factory=list)
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def _status_reason(err: grpc.aio.AioRpcError) -> str:
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


class Driver:
    """Plays random sequences against one server address."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.run = channel.stream_stream(
            RUN_METHOD,
            request_serializer=lambda data: data,
            response_deserializer=pb.RunResponse.FromString,
        )

    async def sequence(self, index: int, seed: int) -> Sequence:
        return await self.play(index, random.Random(seed * 1_000_003 + index))

    async def play(self, index: int, rng: random.Random) -> Sequence:
        """One sequence whose every choice comes from `rng` (a seeded Random,
        or one that hypothesis controls and shrinks)."""
        seq = Sequence(index)
        call = self.run()
        try:
            seq.outcome = await asyncio.wait_for(self._play(rng, call, seq), SEQUENCE_DEADLINE_S)
        except TimeoutError:
            seq.outcome = "hang"
        except grpc.aio.AioRpcError as err:
            seq.outcome = self._classify(err, seq)
        finally:
            for writer in seq.writers:
                writer.cancel()
            call.cancel()
        return seq

    def _classify(self, err: grpc.aio.AioRpcError, seq: Sequence) -> str:
        reason = _status_reason(err)
        if err.code() == grpc.StatusCode.CANCELLED and "dropped" in seq.trace:
            return "dropped by the client"
        if err.code() == grpc.StatusCode.UNKNOWN:
            seq.trace.append(f"UNKNOWN: {err.details()}")
            return "unknown"
        if (
            err.code() == grpc.StatusCode.INTERNAL
            and err.details() == CORE_WRITE_ERROR
            and any(step.startswith("write after the end") for step in seq.trace)
        ):
            # The server had ended the stream (in-band or with a status); the
            # client's own failed write replaced what it said (grpc#36066).
            return "ended by the server, status lost to the client's late write"
        if err.code() == grpc.StatusCode.INTERNAL:
            seq.trace.append(f"INTERNAL: {err.details()}")
            return "internal"
        if reason == "UNKNOWN_CALL_ID" and any(repr(i) in (err.details() or "") for i in seq.late):
            seq.trace.append(f"refused: {err.details()}")
            return "late_result_refused"
        return f"{err.code().name} {reason}".strip()

    async def _play(self, rng: random.Random, call: Any, seq: Sequence) -> str:
        start = start_message(rng)
        roll = rng.random()
        if roll < 0.25:
            rng.choice(INVALID_STARTS)(start)
            seq.trace.append("invalid start")
            await call.write(start.SerializeToString())
        elif roll < 0.31:
            rng.choice(_UTF8_TARGETS)(start)
            seq.trace.append("invalid UTF-8 in start")
            await call.write(bad_utf8(start.SerializeToString()))
        elif roll < 0.33:
            seq.trace.append("garbage bytes")
            await call.write(rng.randbytes(rng.randint(1, 64)))
        elif roll < 0.35:
            seq.trace.append("first message not start")
            await call.write(pb.RunRequest(cancel=pb.CancelRun()).SerializeToString())
        elif roll < 0.36:
            seq.trace.append("half-close before start")
            await call.done_writing()
        else:
            await call.write(start.SerializeToString())
        timeout_s = start.start.options.tool_timeout_ms / 1000.0
        answered: list[str] = []
        while True:
            response = await call.read()
            if response is grpc.aio.EOF:
                return "closed without an outcome"
            kind = response.WhichOneof("kind")
            if kind == "run_completed":
                return "completed"
            if kind == "run_failed":
                reason = pb.FailureReason.Name(response.run_failed.reason)
                return "internal" if reason.endswith("INTERNAL") else f"failed {reason}"
            if kind == "tool_call":
                call_id = response.tool_call.call_id
                seq.issued.add(call_id)
                if await self._act(rng, call, seq, call_id, timeout_s, answered):
                    return "dropped by the client"
                answered.append(call_id)

    async def _act(
        self,
        rng: random.Random,
        call: Any,
        seq: Sequence,
        call_id: str,
        timeout_s: float,
        answered: list[str],
    ) -> bool:
        """One action on a tool call; True when the client dropped the stream."""

        async def send(result: pb.ToolResult | pb.RunRequest, utf8: bool = False) -> None:
            request = (
                result if isinstance(result, pb.RunRequest) else pb.RunRequest(tool_result=result)
            )
            data = request.SerializeToString()
            await _write(call, bad_utf8(data) if utf8 else data, seq)

        action = rng.choices(
            [
                "answer", "error", "late", "duplicate", "unknown id", "bad utf-8",
                "cancel", "half-close", "second start", "empty", "silence", "drop",
                "unknown approval",
            ],
            weights=[50, 10, 12, 3, 2, 5, 3, 3, 2, 2, 4, 2, 2],
        )[0]  # fmt: skip
        seq.trace.append(action)
        if action == "answer":
            await send(pb.ToolResult(call_id=call_id, output=f"record {rng.randint(0, 99)}"))
        elif action == "error":
            kind = rng.choice([0, 1, 2, 7, 1000])
            error = pb.ToolError(message="boom", type="ValueError", kind=kind)  # type: ignore[arg-type]
            await send(pb.ToolResult(call_id=call_id, error=error))
        elif action == "late":
            # At the timeout boundary, on either side of it.
            seq.late.add(call_id)
            delay = timeout_s * rng.uniform(0.8, 1.2)
            late = pb.ToolResult(call_id=call_id, output="late")
            seq.writers.append(asyncio.create_task(_after(delay, lambda: send(late))))
        elif action == "duplicate":
            await send(pb.ToolResult(call_id=call_id, output="once"))
            await send(pb.ToolResult(call_id=call_id, output="twice"))
        elif action == "unknown id":
            await send(pb.ToolResult(call_id=f"bogus-{rng.randint(0, 999)}", output="x"))
        elif action == "bad utf-8":
            target = rng.choice(["output", "call_id", "message", "type"])
            result = pb.ToolResult(call_id=call_id, output="x")
            if target == "call_id":
                result.call_id = PLACEHOLDER
            elif target == "output":
                result.output = PLACEHOLDER
            else:
                result.error.CopyFrom(pb.ToolError(kind=pb.TOOL_ERROR_KIND_HARD))
                setattr(result.error, target, PLACEHOLDER)
            await send(result, utf8=True)
        elif action == "cancel":
            await send(pb.RunRequest(cancel=pb.CancelRun(reason="fuzz")))
        elif action == "half-close":
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                async with seq.write_lock:
                    await call.done_writing()
        elif action == "second start":
            await send(start_message(rng))
        elif action == "empty":
            await send(pb.RunRequest())
        elif action == "drop":
            seq.trace.append("dropped")
            call.cancel()
            return True
        elif action == "unknown approval":
            await send(pb.RunRequest(approval=pb.ApprovalDecision(call_id=call_id, approved=True)))
        return False


async def _after(delay_s: float, write: Callable[[], Awaitable[None]]) -> None:
    await asyncio.sleep(delay_s)
    await write()


async def _write(call: Any, data: bytes, seq: Sequence) -> None:
    """Write, unless the server has already ended the stream.

    The outcome is then in what is left to read. grpc's Python client reports
    a write after the end as its own INTERNAL "Internal error from Core" and
    would hide it (grpc/grpc#36066), so the error is noted and reading goes on.
    """
    try:
        async with seq.write_lock:
            await call.write(data)
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as exc:
        seq.trace.append(f"write after the end: {type(exc).__name__}")


# ── the report ───────────────────────────────────────────────────────────


@dataclass
class Tally:
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    bad: list[Sequence] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, seq: Sequence) -> None:
        self.outcomes[seq.outcome] += 1
        if seq.outcome in BAD_OUTCOMES:
            self.bad.append(seq)

    def count(self, outcome: str) -> int:
        return self.outcomes[outcome]


async def fuzz(address: str, sequences: int, seed: int, concurrency: int) -> Tally:
    """Play `sequences` random sequences, `concurrency` at a time."""
    tally = Tally()
    began = time.perf_counter()
    gate = asyncio.Semaphore(concurrency)
    async with grpc.aio.insecure_channel(address, options=_LIMITS) as channel:
        driver = Driver(channel)

        async def one(index: int) -> None:
            async with gate:
                tally.add(await driver.sequence(index, seed))

        await asyncio.gather(*(one(i) for i in range(sequences)))
    tally.seconds = time.perf_counter() - began
    return tally


_LIMITS = [
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
]


async def normal_run(address: str, terminal_output: str = "summary") -> str:
    """A well-behaved client's run; its outcome ("completed" when all is well)."""
    async with grpc.aio.insecure_channel(address, options=_LIMITS) as channel:
        run = channel.stream_stream(
            RUN_METHOD,
            request_serializer=pb.RunRequest.SerializeToString,
            response_deserializer=pb.RunResponse.FromString,
        )()
        start = start_message(random.Random(0))
        start.start.options.tool_timeout_ms = 60_000
        await run.write(start)
        while (response := await asyncio.wait_for(run.read(), 60)) is not grpc.aio.EOF:
            assert isinstance(response, pb.RunResponse)
            kind = response.WhichOneof("kind")
            if kind == "tool_call":
                tool = response.tool_call
                output = terminal_output if tool.tool_name == "finish" else "record"
                await run.write(
                    pb.RunRequest(tool_result=pb.ToolResult(call_id=tool.call_id, output=output))
                )
            elif kind == "run_completed":
                ok = response.run_completed.result == terminal_output
                return "completed" if ok else "completed with a different result"
            elif kind == "run_failed":
                return f"failed {pb.FailureReason.Name(response.run_failed.reason)}"
    return "closed without an outcome"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps({"*": SCRIPT}))
        argv = forge_server_argv(
            port, "--backend", "scripted", "--script", str(script), "--start-timeout", "2",
            "--log-level", "INFO",
        )  # fmt: skip
        async with server_process(argv, port, "contract_fuzz") as server:
            # Warm-up (its own seed): allocator pools, caches and grpc's
            # buffers reach their working size before memory is compared.
            warm_up = max(1, args.sequences // 5)
            await fuzz(server.address, warm_up, args.seed + 7919, args.concurrency)
            warm_rss = server.stats().rss_bytes
            tally = await fuzz(server.address, args.sequences, args.seed, args.concurrency)
            end_rss = server.stats().rss_bytes
            after = await normal_run(server.address)
            nine_mib = await normal_run(server.address, "n" * (9 * 1024 * 1024))
        log_bytes = (RESULTS_DIR / "contract_fuzz.log").stat().st_size
    checks = {name: tally.count(name) for name in BAD_OUTCOMES}
    return {
        "sequences": args.sequences,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "seconds": round(tally.seconds, 1),
        "outcomes": dict(tally.outcomes.most_common()),
        "bad": checks,
        "first_bad": [
            {"index": s.index, "outcome": s.outcome, "trace": s.trace} for s in tally.bad[:10]
        ],
        "normal_run_after": after,
        "nine_mib_result": nine_mib,
        "server_log_bytes_per_sequence": round(log_bytes / (args.sequences + warm_up)),
        "warm_up_sequences": warm_up,
        "server_rss_mb_after_warm_up": round(warm_rss / 2**20, 1),
        "server_rss_mb_at_end": round(end_rss / 2**20, 1),
        "server_rss_growth_kb_per_1000_sequences": round(
            (end_rss - warm_rss) / 1024 / max(1, args.sequences) * 1000
        ),
        # Flat: the main run adds less than a tenth to the warmed-up memory.
        "memory_flat": end_rss < warm_rss * 1.1,
        "passed": not any(checks.values())
        and after == nine_mib == "completed"
        and end_rss < warm_rss * 1.1,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sequences", type=int, default=15_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=32)
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    print(f"contract fuzz: {data['sequences']} sequences in {data['seconds']} s (seed {args.seed})")
    print(table(["outcome", "sequences"], list(data["outcomes"].items())))
    print(table(["must be 0", "sequences"], list(data["bad"].items())))
    print(f"normal run afterwards: {data['normal_run_after']}")
    print(f"9 MiB tool result: {data['nine_mib_result']}")
    print(f"server log: {data['server_log_bytes_per_sequence']} bytes per sequence")
    print(
        f"server RSS: {data['server_rss_mb_after_warm_up']} MB after "
        f"{data['warm_up_sequences']} warm-up sequences, {data['server_rss_mb_at_end']} MB "
        f"after the rest ({data['server_rss_growth_kb_per_1000_sequences']} KB per 1,000; "
        f"flat: {data['memory_flat']})"
    )
    for bad in data["first_bad"]:
        print(f"  sequence {bad['index']}: {bad['outcome']} after {bad['trace']}")
    print(f"results: {write_results('contract_fuzz', data)}")
    if not data["passed"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
