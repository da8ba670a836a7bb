/**
 * Two TypeScript functions as tools, run by the Forge server's guarded loop.
 *
 * Start the server first (`make run`), then, from clients/typescript:
 *   npm run example -- "What's the weather in Oslo?" [--address 127.0.0.1:50051] [--token T]
 * The tools run here, in this process; the server only asks for them over the
 * stream.
 */

import { parseArgs } from "node:util";
import { type ForgeEvent, createForgeClient, workflow } from "@forge-sidecar/client";
import { z } from "zod";

const wf = workflow(
  "weather",
  "Look up the current weather for the city the user asks about, then report it.",
)
  .tool(
    "get_weather",
    "Get current weather for a city.",
    z.object({ city: z.string().describe('City name, e.g. "Paris".') }),
    async ({ city }) => `72°F and sunny in ${city}`,
    { required: true },
  )
  .tool(
    "report_weather",
    "Report the weather to the user. Ends the task.",
    z.object({
      city: z.string().describe("The city the weather is for."),
      weather: z.string().describe("The weather, as get_weather returned it."),
    }),
    async ({ city, weather }) => `Weather report for ${city}: ${weather}`,
    { terminal: true },
  );

function show(event: ForgeEvent): void {
  if (event.type === "tool_call_started") {
    console.log(`  -> ${event.toolName}(${JSON.stringify(event.arguments)})`);
  } else if (event.type === "message_appended" && event.message.transient) {
    // A refused attempt, shown as what it was: the model's call or text that a
    // guardrail refused, then the correction Forge sent back.
    const { message } = event;
    for (const call of message.toolCalls) {
      console.log(`  !! refused call: ${call.name}(${call.argumentsJson})`);
    }
    if (message.content && message.role === "assistant") {
      console.log(`  !! refused answer: ${message.content.slice(0, 100)}`);
    } else if (message.content) {
      console.log(`  !! correction: ${message.content.slice(0, 100)}`);
    }
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      address: { type: "string", default: "127.0.0.1:50051" },
      // The server's bearer token; without it the SDK reads $FORGE_TOKEN.
      token: { type: "string" },
    },
    allowPositionals: true,
  });
  const client = createForgeClient({ address: values.address, token: values.token });
  try {
    const info = await client.serverInfo();
    console.log(`Forge ${info.version}: ${info.backend} / ${info.model}`);
    const result = await client.run(wf, positionals[0] ?? "What's the weather in Paris?", {
      onEvent: show,
    });
    console.log(result.value); // typed: string, what report_weather returned
    console.log(`(${result.iterations} iterations, ${result.usage.modelCalls} model calls)`);
  } finally {
    client.close();
  }
}

await main().catch((err: unknown) => {
  // A refusal (UNAUTHENTICATED, a bad workflow), no server, or a failed run
  // (which carries its transcript): one line, not a stack trace.
  console.error(err instanceof Error ? `error: ${err.message}` : err);
  process.exitCode = 1;
});
