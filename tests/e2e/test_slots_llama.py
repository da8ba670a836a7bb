"""Slot scheduling against the real llama-server (one slot, 270M model).

A low-priority run generating a long free-text answer is preempted by a
high-priority run: the high one is served first, the low one is told it was
preempted and resumes afterwards.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from forge_client import (
    Event,
    ForgeClient,
    Queued,
    RunFailedError,
    RunOptions,
)
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.llama_host.process import ManagedLlamaServer
from tests.helpers import address, running_server
from tests.integration.test_run_stream import weather_workflow

pytestmark = pytest.mark.e2e


async def test_high_priority_run_preempts_a_long_low_priority_inference(
    llama_server: ManagedLlamaServer,
) -> None:
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    assert backend.info().slots == 1
    low_events: list[Event] = []
    finished: dict[str, float] = {}
    try:
        async with running_server(backend) as server, ForgeClient(address(server)) as client:

            async def low() -> None:
                # Unconstrained and allowed 300 tokens: a long generation.
                try:
                    await client.run(
                        weather_workflow([]),
                        "Write a long story about the weather in Paris.",
                        options=RunOptions(
                            constrained_decoding=False,
                            max_tokens=300,
                            max_retries=0,
                            priority=10,
                        ),
                        on_event=low_events.append,
                    )
                except RunFailedError:
                    pass  # the base model rambles without a grammar; fine here
                finished["low"] = time.monotonic()

            async def high() -> None:
                await asyncio.sleep(1.0)  # the low run is generating by now
                result = await client.run(
                    weather_workflow([]), "What's the weather in Paris?", options=RunOptions()
                )
                assert result.terminal_tool == "report_weather"
                finished["high"] = time.monotonic()

            await asyncio.gather(low(), high())
    finally:
        await backend.aclose()
    assert finished["high"] < finished["low"]
    queued = [e for e in low_events if isinstance(e, Queued)]
    assert any(e.preempted and e.position >= 1 for e in queued), queued
    assert queued[-1].position == 0  # it got the slot back and resumed
