"""The Python SDK's run without on_event skips building the per-call events
(ToolCallStarted, ToolCallFinished, MessageAppended) and converts streamed
messages only when the transcript needs them (the server omitted it); the
run's result is the same as with on_event."""

from __future__ import annotations

from forge_client import (
    Event,
    ForgeClient,
    Message,
    MessageAppended,
    Role,
    RunResult,
    ToolCallFinished,
    ToolCallStarted,
)
from forge_core.backends.scripted import ScriptedBackend, call
from forge_server.app import ServerOptions
from tests.helpers import address, running_server
from tests.integration.test_bad_input import big_output_workflow
from tests.integration.test_run_stream import WEATHER_SCRIPT, weather_workflow

PRIOR = [
    Message(role=Role.USER, content="Earlier: hello"),
    Message(role=Role.ASSISTANT, content="Earlier: hi"),
]


def same_run(a: RunResult, b: RunResult) -> None:
    assert a.terminal_tool == b.terminal_tool
    assert a.value == b.value
    assert a.output == b.output
    assert a.iterations == b.iterations
    assert a.transcript == b.transcript


async def test_a_run_without_on_event_has_the_same_result() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    events: list[Event] = []
    ran: list[str] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        watched = await client.run(
            weather_workflow(ran), "Weather in Paris?", prior_messages=PRIOR, on_event=events.append
        )
        quiet = await client.run(weather_workflow(ran), "Weather in Paris?", prior_messages=PRIOR)
    same_run(watched, quiet)
    assert ran == ["get_weather:Paris", "report_weather:Paris"] * 2
    assert [m.content for m in quiet.transcript if m.content.startswith("Earlier")] == [
        m.content for m in PRIOR
    ]
    # With on_event, every per-call event still arrives, in order, and each
    # streamed message is the final transcript's at its index.
    kinds = [type(e) for e in events if isinstance(e, ToolCallStarted | ToolCallFinished)]
    assert kinds == [ToolCallStarted, ToolCallFinished] * 2
    appended = [e for e in events if isinstance(e, MessageAppended)]
    assert appended
    for e in appended:
        if e.message.tool_call_id and e.message.tool_name == watched.terminal_tool:
            # The terminal result's content is sent once, as the result.
            assert watched.transcript[e.index].content == watched.output
        else:
            assert watched.transcript[e.index] == e.message


async def test_an_omitted_transcript_is_rebuilt_without_on_event() -> None:
    backend = ScriptedBackend(
        scripts={
            "big": [call("fetch", part=1), call("fetch", part=2), call("summarise", text="ok")]
        }
    )
    options = ServerOptions(host="127.0.0.1", port=0, max_message_bytes=300_000)
    events: list[Event] = []
    async with running_server(backend, options) as server, ForgeClient(address(server)) as client:
        watched = await client.run(
            big_output_workflow(160_000),
            "Summarise both parts",
            prior_messages=PRIOR,
            on_event=events.append,
        )
        quiet = await client.run(
            big_output_workflow(160_000), "Summarise both parts", prior_messages=PRIOR
        )
    # The server left both transcripts out (2 x 160 KB > 300 KB); the SDK
    # rebuilt them from the prior and the streamed messages.
    same_run(watched, quiet)
    streamed = [e.message for e in events if isinstance(e, MessageAppended)]
    assert quiet.transcript == PRIOR + streamed
    assert sum(len(m.content) for m in quiet.transcript) > 320_000
