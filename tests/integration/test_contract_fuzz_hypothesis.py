"""The contract fuzzer driven by hypothesis: hypothesis picks each sequence's
seed (every choice of the sequence, from the start's mutation to the timing
of late answers, follows from it), keeps failing seeds in its example
database and replays them first on the next run; `python -m bench.contract_fuzz`
replays one with --seed. Seeds, not the choices themselves, are drawn: the
number of choices depends on how the server answers, which hypothesis would
call flaky data generation.

The server is `forge-server --backend scripted` in its own process, started
once for the module; each example opens one stream on raw stubs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench._common import ServerProcess, forge_server_argv, free_port
from bench.contract_fuzz import BAD_OUTCOMES, SCRIPT, Driver, normal_run


@pytest.fixture(scope="module")
def server_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("fuzz")
    script = tmp / "script.json"
    script.write_text(json.dumps({"*": SCRIPT}))
    port = free_port()
    argv = forge_server_argv(
        port, "--backend", "scripted", "--script", str(script), "--start-timeout", "2"
    )
    server = ServerProcess(argv, port, Path(tmp) / "server.log")
    server.spawn()
    try:
        # A sync channel: grpc.aio binds to the first event loop it meets,
        # and the tests' own loop must be that one.
        with grpc.insecure_channel(server.address) as channel:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=60, wait_for_ready=True
            )
        yield server.address
    finally:
        server.stop()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(min_value=0, max_value=2**32))
async def test_no_sequence_ends_in_unknown_internal_a_hang_or_a_refused_late_result(
    server_address: str, seed: int
) -> None:
    async with grpc.aio.insecure_channel(server_address) as channel:
        seq = await Driver(channel).play(0, random.Random(seed))
    assert seq.outcome not in BAD_OUTCOMES, (seed, seq.trace)


async def test_the_server_still_completes_a_normal_run_afterwards(server_address: str) -> None:
    assert await normal_run(server_address) == "completed"
