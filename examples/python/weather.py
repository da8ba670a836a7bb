"""Two plain Python functions as tools, run by the Forge server's guarded loop.

Start the server first (`make run`), then: python examples/python/weather.py
(add --token, or set FORGE_TOKEN, for a server started with --auth-token-file).
The tools run here, in this process; the server only asks for them over the
stream.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from forge_client import (
    Event,
    ForgeClient,
    ForgeError,
    MessageAppended,
    Role,
    ToolCallStarted,
    Workflow,
)

wf = Workflow(
    "weather",
    "Look up the current weather for the city the user asks about, then report it.",
)


@wf.tool(required=True)
def get_weather(city: str) -> str:
    """Get current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return f"72°F and sunny in {city}"


@wf.tool(terminal=True)
def report_weather(city: str, weather: str) -> str:
    """Report the weather to the user. Ends the task.

    Args:
        city: The city the weather is for.
        weather: The weather, as get_weather returned it.
    """
    return f"Weather report for {city}: {weather}"


def show(event: Event) -> None:
    if isinstance(event, ToolCallStarted):
        print(f"  -> {event.tool_name}({event.arguments})")
    elif isinstance(event, MessageAppended) and event.message.transient:
        # A refused attempt, shown as what it was: the model's call or text
        # that a guardrail refused, then the correction Forge sent back.
        message = event.message
        for call in message.tool_calls:
            print(f"  !! refused call: {call.name}({call.arguments_json})")
        if message.content and message.role is Role.ASSISTANT:
            print(f"  !! refused answer: {message.content[:100]}")
        elif message.content:
            print(f"  !! correction: {message.content[:100]}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--token", help="the server's bearer token (default: $FORGE_TOKEN)")
    parser.add_argument("question", nargs="?", default="What's the weather in Paris?")
    args = parser.parse_args()
    async with ForgeClient(args.address, token=args.token) as client:
        info = await client.server_info()
        print(f"Forge {info.version}: {info.backend} / {info.model}")
        result = await client.run(wf, args.question, on_event=show)
        print(result.value)
        print(f"({result.iterations} iterations, {result.usage.model_calls} model calls)")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except ForgeError as exc:
        # A refusal (UNAUTHENTICATED, a bad workflow) or no server: one line.
        sys.exit(f"error: {exc}")
