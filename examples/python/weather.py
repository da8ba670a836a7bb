"""Two plain Python functions as tools, run by the Forge server's guarded loop.

Start the server first (`make run`), then: python examples/python/weather.py
The tools run here, in this process; the server only asks for them over the
stream.
"""

from __future__ import annotations

import argparse
import asyncio

from forge_client import Event, ForgeClient, MessageAppended, ToolCallStarted, Workflow

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
        print(f"  !! correction: {event.message.content[:100]}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("question", nargs="?", default="What's the weather in Paris?")
    args = parser.parse_args()
    async with ForgeClient(args.address) as client:
        info = await client.server_info()
        print(f"Forge {info.version}: {info.backend} / {info.model}")
        result = await client.run(wf, args.question, on_event=show)
        print(result.value)
        print(f"({result.iterations} iterations, {result.usage.model_calls} model calls)")


if __name__ == "__main__":
    asyncio.run(main())
